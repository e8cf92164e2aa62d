"""Applying the retention policies: what each student's periods let go, found first, then erased.

`retention_apply` finds, for every student in scope, everything their periods let go
(`student_plan`), then (unless it is a dry run) applies each student's plan in one transaction
and records one `RetentionRun` per school with the counts. Finding everything before changing
anything is what makes a dry run's counts the ones a real run then applies: a memory the run
archives is erased by a later run, never by the same one.

What a plan may take (docs/privacy.md#retention):
- a conversation ended `transcript_days` ago loses its messages, files (deleted from storage
  after commit) and checkpoints; the row stays, with its counts and its summary memory;
- a student inactive for `memory_days` has their memories archived ("Retention period."), of
  every tier and status; `memory_grace_days` after, they are erased with their vectors and
  index rows (`privacy.services.memories_delete`);
- a flag resolved `flag_days` ago is erased with its log and alerts;
- a student deactivated `inactive_days` ago is erased (`privacy.services.student_erase`).
An open (or acknowledged) safety flag keeps what it cites: its conversation's messages and files,
the messages and memories it cites, and its student.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.db.models import Exists, F, Max, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import School, User
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message
from memory.models import AIMemory
from memory.services.lifecycle import memory_retire
from privacy.models import Erasure
from privacy.services import Tally, memories_delete, stored_files_delete, student_erase
from retention.models import ArchivedMemory, RetentionRun
from retention.policies import Periods, PolicyBook, policy_for_student, student_classes
from safety.models import Flag, FlagAction

logger = logging.getLogger(__name__)

RETENTION_REASON = "Retention period."
OPEN_FLAG = (Flag.Status.OPEN, Flag.Status.ACKNOWLEDGED)
CLOSED_FLAG = (Flag.Status.RESOLVED, Flag.Status.FALSE_POSITIVE)


@dataclass
class StudentPlan:
    """What one student's periods let go now (ids), and how many of each kind (RetentionRun.KINDS)."""

    student_id: int
    erase_student: bool = False
    conversations: list[int] = field(default_factory=list)
    archive: list[int] = field(default_factory=list)
    erase_memories: list[int] = field(default_factory=list)
    flags: list[int] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def empty(self) -> bool:
        return not (self.erase_student or self.conversations or self.archive or self.erase_memories or self.flags)


def _days_ago(now: datetime, days: int) -> datetime:
    return now - timedelta(days=days)


def held_by_open_flags(student_id: int) -> tuple[set[int], set[int]]:
    """The conversations and memories the student's open (or acknowledged) flags cite: the
    flag's conversation, the conversations of its message, file and cited messages, and its
    cited memories."""
    flags = Flag.objects.filter(student_id=student_id, status__in=OPEN_FLAG)
    conversations = set(flags.exclude(conversation=None).values_list("conversation_id", flat=True))
    conversations |= set(flags.exclude(message=None).values_list("message__conversation_id", flat=True))
    conversations |= set(flags.exclude(file=None).values_list("file__conversation_id", flat=True))
    conversations |= set(
        Message.objects.filter(pk__in=flags.values("cited_messages")).values_list("conversation_id", flat=True)
    )
    memories = set(AIMemory.objects.filter(pk__in=flags.values("cited_memories")).values_list("pk", flat=True))
    return conversations, memories


def last_activity(student: User) -> datetime:
    """The student's last activity: their latest conversation's, their last sign-in, or when
    their account was made, whichever is latest."""
    latest = Conversation.objects.filter(student=student).aggregate(at=Max("last_activity_at"))["at"]
    return max(moment for moment in (latest, student.last_login, student.date_joined) if moment is not None)


def _closed_flags_due(student_id: int, before: datetime) -> QuerySet[Flag]:
    """The student's closed flags resolved before `before` (the time of their "resolved" log
    entry; a flag closed without one counts from its last change)."""
    resolved = Max("actions__at", filter=Q(actions__kind=FlagAction.Kind.RESOLVED))
    return (
        Flag.objects.filter(student_id=student_id, status__in=CLOSED_FLAG)
        .annotate(resolved_at=Coalesce(resolved, F("updated_at")))
        .filter(resolved_at__lte=before)
    )


def student_plan(student: User, periods: Periods, *, now: datetime) -> StudentPlan:
    """What `periods` let go of `student`'s data at `now`; changes nothing."""
    plan = StudentPlan(student.pk)
    held_conversations, held_memories = held_by_open_flags(student.pk)
    open_flags = Flag.objects.filter(student=student, status__in=OPEN_FLAG).exists()
    if (
        periods.inactive_days is not None
        and not student.is_active
        and student.deactivated_at is not None
        and student.deactivated_at <= _days_ago(now, periods.inactive_days)
        and not open_flags
    ):
        plan.erase_student = True
        plan.counts["students_erased"] = 1
        return plan
    if periods.transcript_days is not None:
        ended = Conversation.objects.filter(
            student=student,
            status=Conversation.Status.ENDED,
            ended_at__lte=_days_ago(now, periods.transcript_days),
        ).exclude(pk__in=held_conversations)
        with_content = ended.filter(
            Exists(Message.objects.filter(conversation=OuterRef("pk")))
            | Exists(ConversationFile.objects.filter(conversation=OuterRef("pk")))
            | Exists(ContextCheckpoint.objects.filter(conversation=OuterRef("pk")))
        )
        plan.conversations = list(with_content.order_by("pk").values_list("pk", flat=True))
        plan.counts["conversations"] = len(plan.conversations)
        plan.counts["messages"] = Message.objects.filter(conversation_id__in=plan.conversations).count()
        plan.counts["files"] = ConversationFile.objects.filter(conversation_id__in=plan.conversations).count()
    if periods.memory_days is not None and last_activity(student) <= _days_ago(now, periods.memory_days):
        waiting = AIMemory.objects.filter(student=student).exclude(pk__in=ArchivedMemory.objects.values("memory_id"))
        plan.archive = list(waiting.exclude(pk__in=held_memories).order_by("pk").values_list("pk", flat=True))
        plan.counts["memories_archived"] = len(plan.archive)
    if periods.memory_grace_days is not None:
        due = ArchivedMemory.objects.filter(
            memory__student=student, archived_at__lte=_days_ago(now, periods.memory_grace_days)
        ).exclude(memory_id__in=held_memories)
        plan.erase_memories = list(due.order_by("memory_id").values_list("memory_id", flat=True))
        plan.counts["memories_erased"] = len(plan.erase_memories)
    if periods.flag_days is not None:
        due_flags = _closed_flags_due(student.pk, _days_ago(now, periods.flag_days))
        plan.flags = list(due_flags.order_by("pk").values_list("pk", flat=True))
        plan.counts["flags"] = len(plan.flags)
    return plan


def _transcripts_erase(conversation_ids: list[int]) -> list[str]:
    """Delete the messages, files and checkpoints of these conversations (the rows stay);
    returns the stored files' names, to delete after commit. A closed flag about one of the
    messages or files keeps its excerpt and loses the link."""
    messages = Message.objects.filter(conversation_id__in=conversation_ids)
    files = ConversationFile.objects.filter(conversation_id__in=conversation_ids)
    names = list(files.values_list("storage_name", flat=True))
    Flag.objects.filter(message__in=messages.values("pk")).update(message=None)
    Flag.objects.filter(file__in=files.values("pk")).update(file=None)
    ContextCheckpoint.objects.filter(conversation_id__in=conversation_ids).delete()
    files.delete()
    # A reply protects the message it answers, so the links go first.
    messages.filter(reply_to__isnull=False).update(reply_to=None)
    messages.delete()
    return names


def _memories_archive(memory_ids: list[int], now: datetime) -> None:
    """Archive these memories with the retention reason (an active one leaves the index and
    loses its vector: memory.services.lifecycle.memory_retire) and mark each for erasure."""
    for memory in AIMemory.objects.select_for_update().filter(pk__in=memory_ids).order_by("pk"):
        memory_retire(memory, reason=RETENTION_REASON)
    ArchivedMemory.objects.bulk_create(
        [ArchivedMemory(memory_id=pk, archived_at=now) for pk in memory_ids], ignore_conflicts=True
    )


def _drop_newly_held(plan: StudentPlan) -> None:
    """Leave out of the plan what a flag opened since it was made now cites (read again in the
    applying transaction), and count what is left."""
    conversations, memories = held_by_open_flags(plan.student_id)
    if conversations.intersection(plan.conversations):
        plan.conversations = [pk for pk in plan.conversations if pk not in conversations]
        plan.counts["conversations"] = len(plan.conversations)
        plan.counts["messages"] = Message.objects.filter(conversation_id__in=plan.conversations).count()
        plan.counts["files"] = ConversationFile.objects.filter(conversation_id__in=plan.conversations).count()
    if memories.intersection(plan.archive) or memories.intersection(plan.erase_memories):
        plan.archive = [pk for pk in plan.archive if pk not in memories]
        plan.erase_memories = [pk for pk in plan.erase_memories if pk not in memories]
        plan.counts["memories_archived"] = len(plan.archive)
        plan.counts["memories_erased"] = len(plan.erase_memories)


def plan_apply(plan: StudentPlan, *, now: datetime, run: RetentionRun) -> None:
    """Apply one student's plan in one transaction; the stored files go after commit."""
    if plan.erase_student:
        student_erase(
            student_id=plan.student_id,
            confirm=plan.student_id,
            reason=f"Retention policy of school {run.school_id}: deactivated student.",
            erased_by=None,
            via=Erasure.Via.RETENTION,
        )
        return
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=plan.student_id).first()
        _drop_newly_held(plan)
        names = _transcripts_erase(plan.conversations) if plan.conversations else []
        if plan.archive:
            _memories_archive(plan.archive, now)
        if plan.erase_memories:
            # One made active again since (by the admin, say) leaves the index first.
            _memories_archive(
                list(
                    AIMemory.objects.filter(pk__in=plan.erase_memories, status=AIMemory.Status.ACTIVE).values_list(
                        "pk", flat=True
                    )
                ),
                now,
            )
            memories_delete(AIMemory.objects.filter(pk__in=plan.erase_memories), tally=Tally())
        if plan.flags:
            Flag.objects.filter(pk__in=plan.flags).delete()
        if names:
            transaction.on_commit(partial(_files_delete, run.pk, names))


def _files_delete(run_id: int, names: list[str]) -> None:
    failed = stored_files_delete(names, what=f"retention run {run_id}")
    if failed:
        RetentionRun.objects.filter(pk=run_id).update(files_failed=F("files_failed") + failed)


def students_by_school(school_ids: set[int]) -> tuple[dict[int, list[User]], dict[int, list[tuple[int, int]]]]:
    """The students each school's run covers: those of the school (User.school), or, for a
    student of none, of their first active class's school; and each student's active classes
    (`retention.policies.student_classes`)."""
    students = list(User.objects.filter(role=User.Role.STUDENT).order_by("pk"))
    classes = student_classes(s.pk for s in students)
    grouped: dict[int, list[User]] = {}
    for student in students:
        home = student.school_id or min((school for _c, school in classes.get(student.pk, [])), default=None)
        if home in school_ids:
            grouped.setdefault(home, []).append(student)
    return grouped, classes


def retention_apply(*, school_id: int | None = None, dry_run: bool = False) -> list[RetentionRun]:
    """Apply every policy (or only to the students of school `school_id`) and record one run per
    school, counts per kind (RetentionRun.KINDS); a dry run finds the same and changes nothing
    but its run records. Each student's plan is applied in its own transaction, so a failure
    leaves the others applied; it is logged and re-raised after the run is recorded.

    Safe to run twice (and by the daily task and the command at once, at worst each doing part):
    what a run erased is not found again, an archived memory is archived once (its mark is the
    primary key)."""
    now = timezone.now()
    book = PolicyBook()
    schools = School.objects.all() if school_id is None else School.objects.filter(pk=school_id)
    grouped, classes = students_by_school(set(schools.values_list("pk", flat=True)))
    runs = []
    failure: Exception | None = None
    for school in schools.order_by("pk"):
        run = RetentionRun.objects.create(school=school, started_at=now, dry_run=dry_run)
        students = grouped.get(school.pk, [])
        counts: Counter[str] = Counter(dict.fromkeys(RetentionRun.KINDS, 0))
        for student in students:
            periods = policy_for_student(book, student, classes.get(student.pk, []))
            if periods.keeps_all:
                continue
            plan = student_plan(student, periods, now=now)
            if plan.empty:
                continue
            if not dry_run:
                try:
                    plan_apply(plan, now=now, run=run)
                except Exception as error:
                    logger.exception("retention run %s: student %s not done", run.pk, student.pk)
                    failure = failure or error
                    continue
            counts.update(plan.counts)
        run.counts = dict(counts)
        run.finished_at = timezone.now()
        run.save(update_fields=["counts", "finished_at"])
        runs.append(run)
    if failure is not None:
        raise failure
    return runs
