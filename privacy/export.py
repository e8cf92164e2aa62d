"""A student's export: who may ask for it, and the document, written as it is read.

`export_student_get` is the access rule: the student's teacher (through the scoping primitive,
accounts.selectors.student_get_visible), the student themself, their guardian
(accounts.selectors.student_get_readable), or a staff account with the export permission (any
student, deactivated ones included: accounts.selectors.students_administered_by).

`student_export` yields the `tutor-export/1` document (docs/privacy.md) in pieces: every table
is read with `.iterator(chunk_size=...)` and each chunk of rows is serialised and written with
json.dumps, so memory stays bounded by one chunk whatever the student's history. A student's
own export leaves out teacher-only notes, and every id that would point at one, and the safety
flags about them (a student never sees a flag), which the teacher's and staff's include. A
guardian's copy is the student's own without the child's words: no message, checkpoint or
question (docs/privacy.md#guardians).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import Model, Prefetch, Q, QuerySet
from django.utils import timezone
from rest_framework import serializers
from rest_framework.utils.encoders import JSONEncoder

from accounts.models import User
from accounts.selectors import (
    is_guardian,
    is_staff_account,
    student_get_administered,
    student_get_readable,
    student_get_visible,
)
from accounts.serializers import ExportStudent
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from conversations.serializers import (
    ExportCheckpoint,
    ExportConversationHead,
    ExportFile,
    ExportReplyMemory,
    MessageOutput,
)
from insights.models import AskLog, AskMemory
from insights.serializers import ExportAsk
from learning.models import Answer, Question, Quiz, ReviewCard, SkillMastery, Task, TaskStatus
from learning.serializers import ExportReviewCard, ExportSkill, ExportTask, QuizOutput
from memory.models import AIMemory, CardChange, StudentCard, SupersessionReview
from memory.serializers import ExportCard, ExportCardChange, ExportMemory, ExportSupersessionReview
from privacy.access_log import AccessEntryOutput, access_log_of
from privacy.consent import consent_changes
from privacy.models import EXPORT_PERMISSION
from privacy.serializers import EXPORT_FORMAT, ConsentChangeOutput
from safety.models import Flag
from safety.serializers import ExportFlag

CHUNK_SIZE = 500


def export_student_get(*, user: Any, student_id: Any) -> tuple[User, bool]:
    """The student `user` may export, and whether teacher-only notes are included (not for the
    student themself); else NotFound, as for a student that does not exist.

    A staff account holding privacy.export_student exports any student
    (accounts.selectors.student_get_administered); anyone else, a teacher with admin access and
    the permission included, exports the students the scoping primitive shows them. A guardian
    exports their children, without teacher-only notes."""
    if is_staff_account(user) and user.has_perm(EXPORT_PERMISSION):
        return student_get_administered(user=user, student_id=student_id), True
    if is_guardian(user):
        return student_get_readable(user=user, student_id=student_id), False
    student = student_get_visible(user=user, student_id=student_id)
    return student, student.pk != user.pk


def _dumps(data: Any) -> str:
    return json.dumps(data, cls=JSONEncoder, ensure_ascii=False, separators=(",", ":"))


def _array(
    rows: Iterable[Model], serializer: type[serializers.BaseSerializer[Any]], context: dict[str, Any]
) -> Iterator[str]:
    """The items of a JSON array (without its brackets), one chunk of rows per piece."""
    batch: list[Model] = []
    first = True

    def piece() -> str:
        nonlocal first
        text = ",".join(_dumps(item) for item in serializer(batch, many=True, context=context).data)
        text = text if first else "," + text
        first = False
        return text

    for row in rows:
        batch.append(row)
        if len(batch) >= CHUNK_SIZE:
            yield piece()
            batch = []
    if batch:
        yield piece()


def _rows(qs: QuerySet[Any]) -> Iterator[Any]:
    return qs.iterator(chunk_size=CHUNK_SIZE)


def _conversations(student: User, *, transcripts: bool) -> Iterator[str]:
    """The conversations, each with its messages, files and checkpoints; without `transcripts`,
    no message and no checkpoint (a guardian's copy)."""
    for index, conversation in enumerate(
        _rows(Conversation.objects.filter(student=student).order_by("created_at", "id"))
    ):
        head = _dumps(ExportConversationHead(conversation).data)
        yield ("," if index else "") + head[:-1] + ',"messages":['
        messages = Message.objects.filter(conversation=conversation).order_by("seq")
        checkpoints = ContextCheckpoint.objects.filter(conversation=conversation).order_by("covers_through_seq")
        if not transcripts:
            messages, checkpoints = messages.none(), checkpoints.none()
        yield from _array(_rows(messages), MessageOutput, {})
        files = ConversationFile.objects.filter(conversation=conversation).order_by("created_at", "id")
        yield (
            '],"files":'
            + _dumps(ExportFile(files, many=True).data)
            + ',"checkpoints":'
            + _dumps(ExportCheckpoint(checkpoints, many=True).data)
            + "}"
        )


def _memory_context(student: User, hidden: set[int]) -> dict[str, Any]:
    """The reverse relations of the student's memories, read once: what each one superseded, and
    its links."""
    supersedes: dict[int, list[int]] = defaultdict(list)
    replaced = AIMemory.objects.filter(student=student, superseded_by__isnull=False).order_by("id")
    for newer, older in replaced.values_list("superseded_by_id", "id"):
        supersedes[newer].append(older)
    links: dict[int, list[int]] = defaultdict(list)
    through = AIMemory.links.through.objects.filter(from_aimemory__student=student).order_by("to_aimemory_id")
    for source, target in through.values_list("from_aimemory_id", "to_aimemory_id"):
        links[source].append(target)
    return {"supersedes": supersedes, "links": links, "hidden": hidden}


def _learning(student: User, viewer: Any) -> Iterator[str]:
    quizzes = (
        Quiz.objects.filter(student=student)
        .select_related("attempt")
        .prefetch_related(
            Prefetch("questions", queryset=Question.objects.order_by("position")),
            Prefetch("attempt__answers", queryset=Answer.objects.order_by("question__position")),
        )
        .order_by("created_at", "id")
    )
    yield '{"quizzes":['
    # The student's own export hides the expected answers of a quiz not answered yet, as the API does.
    yield from _array(_rows(quizzes), QuizOutput, {"viewer": viewer})
    yield '],"skills":['
    yield from _array(_rows(SkillMastery.objects.filter(student=student).order_by("skill_key")), ExportSkill, {})
    yield '],"reviews":['
    yield from _array(_rows(ReviewCard.objects.filter(student=student).order_by("skill_key")), ExportReviewCard, {})
    statuses = {row.task_id: row for row in TaskStatus.objects.filter(student=student)}
    tasks = (
        Task.objects.filter(Q(student=student) | Q(classroom__enrollments__student=student) | Q(pk__in=list(statuses)))
        .distinct()
        .order_by("created_at", "id")
    )
    yield '],"tasks":['
    yield from _array(_rows(tasks), ExportTask, {"statuses": statuses})
    yield "]}"


def _flags(student: User) -> QuerySet[Flag]:
    return (
        Flag.objects.filter(student=student)
        .prefetch_related("actions", "deliveries", "cited_messages", "cited_memories")
        .order_by("created_at", "id")
    )


def _asks(student: User, include_teacher_only: bool, transcripts: bool) -> QuerySet[AskLog]:
    """The questions asked about the student, with the memories each one's prompt showed: all of
    them in a teacher's or staff's export, the student's own questions in theirs (a teacher's
    answer may cite a teacher-only note), none in a guardian's (without `transcripts`)."""
    asks = AskLog.objects.filter(student=student)
    if not transcripts:
        asks = asks.none()
    if not include_teacher_only:
        asks = asks.filter(asker=student)
    accesses = Prefetch("memory_accesses", queryset=AskMemory.objects.order_by("rank"))
    return asks.prefetch_related(accesses).order_by("created_at", "id")


def student_export(*, student: User, viewer: Any, include_teacher_only: bool) -> Iterator[bytes]:
    """The `tutor-export/1` document of `student`, in UTF-8 pieces (see the module docstring).

    Reads run as the pieces are asked for: a connection is held while the document is written.
    Rows written meanwhile may or may not be in it (each table is read once, in its turn).
    """
    memories = AIMemory.objects.filter(student=student)
    reviews = SupersessionReview.objects.filter(student=student)
    accesses = ReplyMemory.objects.filter(message__conversation__student=student)
    card_changes = CardChange.objects.filter(student=student)
    # A guardian's copy holds none of the child's words to the tutor (docs/privacy.md#guardians).
    transcripts = not is_guardian(viewer)
    hidden: set[int] = set()
    if not include_teacher_only:
        hidden = set(memories.filter(visibility=AIMemory.Visibility.TEACHER_ONLY).values_list("pk", flat=True))
        memories = memories.shown_to_student()
        reviews = reviews.exclude(older__visibility=AIMemory.Visibility.TEACHER_ONLY).exclude(
            newer__visibility=AIMemory.Visibility.TEACHER_ONLY
        )
        accesses = accesses.exclude(memory__visibility=AIMemory.Visibility.TEACHER_ONLY)
        # As the card's API shows the student: the changes applied, not the teachers' proposals.
        card_changes = card_changes.filter(status=CardChange.Status.APPLIED)

    def pieces() -> Iterator[str]:
        exported_at = serializers.DateTimeField().to_representation(timezone.now())
        yield (
            f'{{"format":{_dumps(EXPORT_FORMAT)},"exported_at":{_dumps(exported_at)},'
            f'"student":{_dumps(ExportStudent(student).data)},"conversations":['
        )
        yield from _conversations(student, transcripts=transcripts)
        yield '],"memories":['
        yield from _array(_rows(memories.order_by("created_at", "id")), ExportMemory, _memory_context(student, hidden))
        yield '],"supersession_reviews":['
        yield from _array(_rows(reviews.order_by("created_at", "id")), ExportSupersessionReview, {})
        card = StudentCard.objects.filter(student=student).first() or StudentCard(student=student)
        yield '],"card":' + _dumps(ExportCard(card).data) + ',"card_changes":['
        yield from _array(_rows(card_changes.order_by("created_at", "id")), ExportCardChange, {"hidden": hidden})
        yield '],"learning":'
        yield from _learning(student, viewer)
        yield ',"consent_changes":['
        yield from _array(_rows(consent_changes(student=student)), ConsentChangeOutput, {})
        yield '],"reply_memories":['
        yield from _array(_rows(accesses.order_by("message_id", "rank")), ExportReplyMemory, {})
        if include_teacher_only:
            # Students never see a flag: their own export has no `safety_flags` at all.
            yield '],"safety_flags":['
            yield from _array(_rows(_flags(student)), ExportFlag, {})
        yield '],"asks":['
        yield from _array(_rows(_asks(student, include_teacher_only, transcripts)), ExportAsk, {})
        yield '],"access_log":['
        yield from _array(_rows(access_log_of(student).order_by("at", "id")), AccessEntryOutput, {})
        yield "]}"

    for piece in pieces():
        yield piece.encode()


def export_filename(student: User) -> str:
    """The attachment's name: the student's id and the date, nothing typed by anyone."""
    return f"tutor-export-{student.pk}-{timezone.now():%Y%m%d}.json"
