"""Legal erasure of a student: the one exception to "never delete".

`student_erase` deletes everything about one student in one transaction, in dependency order
(most foreign keys to a student's rows are PROTECT, on purpose: nothing else deletes them),
anonymises their model usage so that spend totals stay right, and leaves an audit record
(privacy.models.Erasure) that names neither the student nor any content. The stored files go
after commit. docs/privacy.md lists what goes where.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Model, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from lti_tool.models import LtiUser
from rest_framework.authtoken.models import Token

from accounts.models import Enrollment, GuardianLink, User
from accounts.selectors import student_get_administered
from audit.models import AccessEntry
from conversations.files import file_storage
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from core.errors import Forbidden, NotFound
from insights.models import AskLog
from learning.models import Quiz, ReviewCard, SkillMastery, Task, TaskStatus
from llm.models import LLMUsage
from memory.models import (
    AIMemory,
    CardChange,
    ConsolidationDecision,
    StudentCard,
    StudentMemoryRevision,
    StudentStatistic,
    SupersessionReview,
    TermStatistic,
)
from privacy.models import ERASE_PERMISSION, Erasure
from safety.models import Flag

logger = logging.getLogger(__name__)

REASON_MAX_CHARS = 1000
# SQLite's full-text index of memories (memory.search.fts): a virtual table outside the ORM.
SQLITE_FTS_TABLE = "memory_fts"


def erasure_student_get(*, user: Any, student_id: Any) -> User:
    """The student `user` may erase. Erasure uses the admin's powers: a student outside
    `accounts.selectors.students_administered_by(user)` (anyone for a user without admin access,
    another class's student for a teacher given it) is NotFound, as one that does not exist, and
    the endpoint tells them nothing; within it, a user without privacy.erase_student gets
    Forbidden."""
    student = student_get_administered(user=user, student_id=student_id)
    if not user.has_perm(ERASE_PERMISSION):
        raise Forbidden(_("Erasing a student needs the erase_student permission."))
    return student


def _confirmed(student: User, confirm: object) -> bool:
    text = str(confirm).strip() if isinstance(confirm, (str, int)) and not isinstance(confirm, bool) else ""
    return bool(text) and text in (str(student.pk), student.username)


class Tally:
    """Rows deleted per model ("app.Model"), from what each delete reports (cascades included)."""

    def __init__(self) -> None:
        self.deleted: Counter[str] = Counter()

    def delete(self, qs: QuerySet[Any]) -> None:
        _total, per_model = qs.delete()
        self.deleted.update({label: n for label, n in per_model.items() if n})

    def add(self, label: str, n: int) -> None:
        if n:
            self.deleted[label] += n


def _sessions_of(user_id: int) -> list[str]:
    """The keys of the database sessions signed in as this user. Sessions store the user id
    inside their encoded data only, so every session is decoded (the erasure is rare; the
    table holds what SESSION_COOKIE_AGE keeps)."""
    keys = []
    for session in Session.objects.order_by("pk").iterator(chunk_size=1000):
        if str(session.get_decoded().get("_auth_user_id", "")) == str(user_id):
            keys.append(session.session_key)
    return keys


def _admin_log_about(logged: dict[type[Model], list[int]]) -> Iterator[QuerySet[LogEntry]]:
    """The admin's log entries about erased rows (their `object_repr` may quote a username, a
    memory's title...), by chunks of ids (SQLite bounds a statement's parameters)."""
    for model, pks in logged.items():
        content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
        for start in range(0, len(pks), 500):
            ids = [str(pk) for pk in pks[start : start + 500]]
            yield LogEntry.objects.filter(content_type=content_type, object_id__in=ids)


def stored_files_delete(names: list[str], *, what: str) -> int:
    """Delete these files from the storage (`STORAGES["tutor_files"]`), after the commit that
    deleted their rows; returns how many could not be. A failure is logged at ERROR with the
    name, for an operator to delete by hand (`what` says whose deletion it was); nothing retries."""
    storage = file_storage()
    failed = 0
    for name in names:
        try:
            storage.delete(name)
        except Exception:
            failed += 1
            logger.exception("%s: could not delete the stored file %s", what, name)
    return failed


def _files_delete(erasure_id: int, names: list[str]) -> None:
    """After commit: delete the erased files; a failure is counted on the audit record."""
    failed = stored_files_delete(names, what=f"erasure {erasure_id}")
    if failed:
        Erasure.objects.filter(pk=erasure_id).update(files_failed=failed)


def memories_delete(memories: QuerySet[AIMemory], *, tally: Tally) -> list[int]:
    """Delete these memories, of every status, with what names them: their vectors, links,
    access log, supersession reviews and the consolidation decisions that weighed them
    (cascades, or deleted here), and their lexical index rows (on PostgreSQL the postings
    cascade; on SQLite the FTS5 rows are deleted by id, whatever trigger the migrations left,
    then the index is merged ('optimize') so that no older segment keeps the deleted terms).
    A memory left that one of them superseded is archived instead (a superseded memory must
    name its successor). In the caller's transaction; returns the deleted ids.

    The statistics of the PostgreSQL index count active memories only: delete memories that
    were archived (or superseded) first, or the caller deletes the student's statistics too."""
    ids = list(memories.order_by("pk").values_list("pk", flat=True))
    if not ids:
        return ids
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.executemany(f"DELETE FROM {SQLITE_FTS_TABLE} WHERE rowid = %s", [(pk,) for pk in ids])  # noqa: S608
            tally.add(SQLITE_FTS_TABLE, len(ids))
            cursor.execute(f"INSERT INTO {SQLITE_FTS_TABLE}({SQLITE_FTS_TABLE}) VALUES ('optimize')")  # noqa: S608
    chosen = AIMemory.objects.filter(pk__in=memories.values("pk"))
    AIMemory.objects.filter(superseded_by__in=chosen.values("pk")).update(
        superseded_by=None, status=AIMemory.Status.ARCHIVED
    )
    # A decision's members are ids in JSON (no foreign key): read per student, in Python.
    gone = set(ids)
    decisions = ConsolidationDecision.objects.filter(student__in=chosen.values("student"))
    weighed = [
        pk
        for pk, members, merged in decisions.values_list("pk", "members", "merged")
        if merged in gone or gone.intersection(members or [])
    ]
    tally.delete(ConsolidationDecision.objects.filter(pk__in=weighed))
    for start in range(0, len(ids), 500):  # SQLite bounds a statement's parameters
        tally.delete(AIMemory.objects.filter(pk__in=ids[start : start + 500]))
    return ids


def student_erase(*, student_id: int, confirm: object, reason: str, erased_by: User | None, via: str) -> Erasure:
    """Delete the student `student_id` and everything about them; returns the audit record.

    `confirm` must be the student's id or username (a ValidationError otherwise, nothing
    deleted). The caller checks who may erase (`erasure_student_get` for the API; the command
    is run by whoever may run manage.py).

    One transaction: it commits whole or not at all. It first locks the student's row and their
    conversations, so a chat turn or a new conversation of theirs waits, then fails on commit;
    a row of theirs written in the meantime by something that takes neither lock makes a
    PROTECT (or database) foreign key refuse the last deletes, and the whole erasure rolls back
    with an error: run it again. Not idempotent by design: a second call finds no student (404).
    """
    clean_reason = " ".join(str(reason or "").split())[:REASON_MAX_CHARS]
    if not clean_reason:
        raise ValidationError({"reason": [_("Give the reason for the erasure.")]})
    with transaction.atomic():
        student = User.objects.select_for_update().filter(pk=student_id, role=User.Role.STUDENT).first()
        if student is None:
            raise NotFound(_("Student not found."))
        if not _confirmed(student, confirm):
            raise ValidationError({"confirm": [_("Type the student's id or username to confirm the erasure.")]})
        tally = Tally()

        conversations = Conversation.objects.filter(student=student)
        conversation_ids = list(conversations.select_for_update().order_by("pk").values_list("pk", flat=True))
        memories = AIMemory.objects.filter(student=student)
        memory_ids = list(memories.order_by("pk").values_list("pk", flat=True))
        messages = Message.objects.filter(conversation__student=student)
        files = ConversationFile.objects.filter(conversation__student=student)
        storage_names = list(files.values_list("storage_name", flat=True))
        quizzes = Quiz.objects.filter(student=student)
        # What the admin can act on and log (a user's change, a memory archived there...).
        logged: dict[type[Model], list[int]] = {
            User: [student.pk],
            Conversation: conversation_ids,
            AIMemory: memory_ids,
        }

        # Usage stays, without its owner: spend totals (a class's budget, /usage/) keep counting it.
        anonymised = LLMUsage.objects.filter(
            Q(student=student) | Q(conversation_id__in=conversations.values("pk"))
        ).update(student=None, conversation_id=None, asker=None)

        # Questions about the student, by them, or whose prompt showed their evidence (a class's),
        # with their access log (AskMemory cascades), before the memories it names.
        asked = AskLog.objects.filter(Q(student=student) | Q(asker=student) | Q(subjects=student))
        tally.delete(AskLog.objects.filter(pk__in=list(asked.values_list("pk", flat=True))))

        # The access log and the memory lifecycle's own rows, before the memories they name.
        tally.delete(ReplyMemory.objects.filter(Q(message__conversation__student=student) | Q(memory__student=student)))
        tally.delete(
            SupersessionReview.objects.filter(
                Q(student=student) | Q(older__student=student) | Q(newer__student=student)
            )
        )
        tally.delete(ConsolidationDecision.objects.filter(student=student))
        # The student card and its log (which names the facts that proposed changes).
        tally.delete(CardChange.objects.filter(student=student))
        tally.delete(StudentCard.objects.filter(student=student))

        # Memories of every status, with their vectors, links and index rows; then the
        # student's index statistics.
        memories_delete(memories, tally=tally)
        tally.delete(TermStatistic.objects.filter(student=student))
        tally.delete(StudentStatistic.objects.filter(student=student))
        tally.delete(StudentMemoryRevision.objects.filter(student=student))

        # Learning: quizzes (questions, attempts, answers cascade), review cards, mastery, tasks set to them alone.
        tally.delete(ReviewCard.objects.filter(student=student))
        tally.delete(SkillMastery.objects.filter(student=student))
        tally.delete(quizzes)
        tally.delete(TaskStatus.objects.filter(student=student))
        tally.delete(Task.objects.filter(student=student))

        # Safety: the flags about the student, with their log and alerts (cascades), before the
        # messages and files they are about.
        flags = Flag.objects.filter(student=student)
        logged[Flag] = list(flags.order_by("pk").values_list("pk", flat=True))
        tally.delete(flags)

        # Conversations: a reply protects the message it answers, so the links go first.
        messages.filter(reply_to__isnull=False).update(reply_to=None)
        tally.delete(ContextCheckpoint.objects.filter(conversation__student=student))
        tally.delete(files)
        tally.delete(messages)
        tally.delete(conversations)

        # Who read their records: the access log's one deletion besides its period's purge.
        tally.delete(AccessEntry._base_manager.filter(student=student))

        # The account: classes, tokens, sessions, the admin's log about it all, the user row.
        tally.delete(Enrollment.objects.filter(student=student))
        tally.delete(GuardianLink.objects.filter(student=student))
        tally.delete(Token.objects.filter(user=student))
        tally.delete(Session.objects.filter(session_key__in=_sessions_of(student.pk)))
        # The LMS's copy of them (django-lti's LTI users: names, email; their course memberships cascade).
        tally.delete(LtiUser.objects.filter(auth_user=student))
        for entries in _admin_log_about(logged):
            tally.delete(entries)
        tally.delete(LogEntry.objects.filter(user=student))
        tally.delete(User.objects.filter(pk=student.pk))

        counts = {"deleted": dict(sorted(tally.deleted.items())), "anonymised": {"llm.LLMUsage": anonymised}}
        erasure = Erasure.objects.create(
            erased_at=timezone.now(),
            erased_by=erased_by,
            via=via,
            reason=clean_reason,
            counts=counts,
            files_pending=len(storage_names),
        )
        if storage_names:
            transaction.on_commit(partial(_files_delete, erasure.pk, storage_names))
    logger.info("erasure %s done (%s): %s", erasure.reference, via, counts)
    return erasure
