"""The pattern rule: several lower-severity signals of distress in a short time raise a concern,
although none of them alone called for one (docs/safety.md)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core import background, events
from memory.models import AIMemory
from safety import offline
from safety.models import Flag, FlagAction
from safety.types import Category, Severity

logger = logging.getLogger(__name__)

# The categories whose quieter signals add up, and the severities that count (a crisis is
# alerted on its own).
PATTERN_CATEGORIES = frozenset({Category.DISTRESS.value, Category.SELF_HARM.value})
LOWER_SEVERITIES = (Severity.INFO, Severity.CONCERN)
# The newest memories of the window screened by the offline line, at most.
MEMORIES_SCREENED = 50
_OPEN = (Flag.Status.OPEN, Flag.Status.ACKNOWLEDGED)


@dataclass
class Evidence:
    """The signals found: one per flagged item, and one per memory the offline line flags."""

    flags: list[Flag] = field(default_factory=list)
    memories: list[AIMemory] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.flags) + len(self.memories)


def pattern_check(*, student_id: int) -> Flag | None:
    """Raise a `concern` pattern flag (category distress) when the student has
    SAFETY_PATTERN_COUNT or more signals within SAFETY_PATTERN_DAYS days; the flag, or None.

    What counts, in the window (each item once):
    - a flag of source message or file, of severity info or concern, whose category (or one of
      its `categories`) is distress or self-harm: one signal per message or file (a flag is
      unique per item); crises are left out, being alerted on their own;
    - an active memory of the student created in the window whose title and content the offline
      line (`safety.offline.screen`) finds distress or self-harm in: one signal per memory,
      except a conversation summary of a conversation that already has a counted message flag
      (the summary retells those messages; they are not counted twice).

    What stops it: an open or acknowledged pattern flag created in the window already covers the
    student (None); after a resolved or dismissed one, only the signals newer than it count.
    The new flag cites the flags' messages (`cited_messages`) and the memories
    (`cited_memories`); its excerpt summarises the evidence without quoting it. Its alert is
    enqueued after commit (safety.tasks.flag_alert).

    Runs in the caller's transaction (recording.flag_record) or its own, holding the student's
    row lock, so two flags recorded at once for one student make one pattern flag.
    """
    now = timezone.now()
    days = settings.SAFETY_PATTERN_DAYS
    since = now - timedelta(days=days)
    with transaction.atomic():
        if not User.objects.select_for_update().filter(pk=student_id).exists():
            return None
        patterns = Flag.objects.filter(student_id=student_id, source=Flag.Source.PATTERN, created_at__gte=since)
        if patterns.filter(status__in=_OPEN).exists():
            return None
        latest = patterns.order_by("-created_at").values_list("created_at", flat=True).first()
        evidence = _evidence(student_id=student_id, since=max(since, latest) if latest else since)
        if evidence.count < settings.SAFETY_PATTERN_COUNT:
            return None
        flag = _pattern_flag_create(student_id=student_id, evidence=evidence, days=days)
        background.enqueue("safety.tasks.flag_alert", flag.pk)
    logger.info("safety flag %s: pattern of %d signals for student %s", flag.pk, evidence.count, student_id)
    return flag


def _evidence(*, student_id: int, since: datetime) -> Evidence:
    evidence = Evidence()
    flags = (
        Flag.objects.filter(
            student_id=student_id,
            source__in=(Flag.Source.MESSAGE, Flag.Source.FILE),
            severity__in=LOWER_SEVERITIES,
            created_at__gt=since,
        )
        .select_related("message")
        .order_by("created_at", "pk")
    )
    for flag in flags:
        if flag.category in PATTERN_CATEGORIES or PATTERN_CATEGORIES.intersection(flag.categories or []):
            evidence.flags.append(flag)
    counted_conversations = {f.conversation_id for f in evidence.flags if f.message_id is not None}
    memories = (
        AIMemory.objects.filter(student_id=student_id, status=AIMemory.Status.ACTIVE, created_at__gt=since)
        .only("pk", "kind", "title", "content", "source_conversation_id", "created_at")
        .order_by("-created_at", "-pk")[:MEMORIES_SCREENED]
    )
    for memory in memories:
        if memory.kind == AIMemory.Kind.SUMMARY and memory.source_conversation_id in counted_conversations:
            continue
        result = offline.screen(f"{memory.title}\n{memory.content}")
        if any(signal.category.value in PATTERN_CATEGORIES for signal in result.signals):
            evidence.memories.append(memory)
    return evidence


def _pattern_flag_create(*, student_id: int, evidence: Evidence, days: int) -> Flag:
    categories = {c for f in evidence.flags for c in [f.category, *(f.categories or [])] if c in PATTERN_CATEGORIES}
    flag = Flag.objects.create(
        student_id=student_id,
        source=Flag.Source.PATTERN,
        category=Category.DISTRESS,
        categories=sorted(categories | {Category.DISTRESS.value}),
        severity=Severity.CONCERN,
        excerpt=_summary(evidence, days=days)[: settings.SAFETY_EXCERPT_CHARS],
    )
    messages = [f.message_id for f in evidence.flags if f.message_id is not None]
    if messages:
        flag.cited_messages.set(messages)
    if evidence.memories:
        flag.cited_memories.set(evidence.memories)
    FlagAction.objects.create(
        flag=flag,
        kind=FlagAction.Kind.CREATED,
        note=f"pattern: flags {', '.join(str(f.pk) for f in evidence.flags) or '-'}; "
        f"memories {', '.join(str(m.pk) for m in evidence.memories) or '-'}",
    )
    flag_raised_emit(flag, rose=False)
    return flag


def flag_raised_emit(flag: Flag, *, rose: bool) -> None:
    """Emit `flag.raised` after commit: a flag made (`rose` False) or risen to a higher
    severity. Its kinds only: never the excerpt or the text behind it."""
    events.emit(
        events.FLAG_RAISED,
        student_id=flag.student_id,
        data={
            "flag_id": flag.pk,
            "student_id": flag.student_id,
            "severity": flag.severity,
            "category": flag.category,
            "source": flag.source,
            "rose": rose,
            "quiet": flag.quiet,
        },
    )


def _summary(evidence: Evidence, *, days: int) -> str:
    """ "3 signals of distress in 14 days: message (flag 12, 3 May), file (flag 14, 5 May),
    memory 31 (6 May)": what was counted and when, not what was said."""
    parts = [f"{f.source} (flag {f.pk}, {timezone.localtime(f.created_at):%d %b})" for f in evidence.flags]
    parts += [f"memory {m.pk} ({timezone.localtime(m.created_at):%d %b})" for m in evidence.memories]
    return f"{evidence.count} signals of distress in {days} days: {', '.join(parts)}"
