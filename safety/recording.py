"""Recording what screening found: one `Flag` per screened item, kept up to date as slower
backends answer, and the alerts it calls for (a crisis, or a concern not kept quiet:
`Verdict.alerts`; a quiet concern waits in the teachers' queue).

`flag_record` is the one way a flag is made by screening. A flag is about one item (a student
message, a file, a tutor reply): recording it again (a slower backend answered, a redelivered
task) merges into the same row, whose severity only rises. The alert task is enqueued after
commit when the flag first reaches `concern` or `crisis`, or rises to `crisis`; then the pattern
rule looks across the student's recent signals (safety.patterns).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from core import background
from safety import alerts
from safety.models import Flag, FlagAction
from safety.types import Severity, Verdict, rank

logger = logging.getLogger(__name__)


def excerpt_of(text: str) -> str:
    limit = settings.SAFETY_EXCERPT_CHARS
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _merge_scores(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Each backend's latest answer, an answer never replaced by a backend's silence nor by
    the same finding again (only its timing would differ)."""
    merged = dict(old)
    for backend, record in new.items():
        kept = merged.get(backend, {})
        if kept.get("answered") and (not record.get("answered") or kept.get("signals") == record.get("signals")):
            continue
        merged[backend] = record
    return merged


def flag_record(
    *,
    student_id: int,
    source: str,
    verdict: Verdict,
    conversation_id: int | None = None,
    message_id: int | None = None,
    file_id: int | None = None,
    excerpt: str = "",
    original_text: str = "",
) -> Flag | None:
    """Record `verdict` about one item (`message_id` with `source`, or `file_id`); None when it
    found nothing. Safe to call again for the same item (merged; severity never falls). A flag
    made, or risen to concern or crisis, emits `flag.raised` after commit."""
    severity, category = verdict.severity, verdict.category
    if severity is None or category is None:
        return None
    for attempt in (1, 2):
        try:
            with transaction.atomic():
                flag, created, raised, alert = _upsert(
                    student_id=student_id,
                    source=source,
                    verdict=verdict,
                    conversation_id=conversation_id,
                    message_id=message_id,
                    file_id=file_id,
                    excerpt=excerpt,
                    original_text=original_text,
                )
                from safety import patterns

                if alert:
                    background.enqueue("safety.tasks.flag_alert", flag.pk)
                if created or raised:
                    patterns.flag_raised_emit(flag, rose=not created)
                if created:  # a merge changes no count of the pattern rule
                    patterns.pattern_check(student_id=student_id)
                return flag
        except IntegrityError:
            if attempt == 2:
                raise
            # A concurrent recording of the same item made the row first: merge into it.
    return None


def _upsert(
    *,
    student_id: int,
    source: str,
    verdict: Verdict,
    conversation_id: int | None,
    message_id: int | None,
    file_id: int | None,
    excerpt: str,
    original_text: str,
) -> tuple[Flag, bool, bool, bool]:
    """The item's flag, whether it was created, whether its severity rose, and whether it needs
    its alert: the verdict
    alerts, and the flag is new, or rose, or its severity was not alerted yet (it was quiet). A
    merge that changes nothing writes nothing."""
    severity, category = verdict.severity, verdict.category
    assert severity is not None and category is not None
    if file_id is not None:
        existing = Flag.objects.select_for_update().filter(file_id=file_id).first()
    elif message_id is not None:
        existing = Flag.objects.select_for_update().filter(message_id=message_id, source=source).first()
    else:
        existing = None  # a pattern: made by safety.patterns, never merged
    if existing is None:
        flag = Flag.objects.create(
            student_id=student_id,
            conversation_id=conversation_id,
            message_id=message_id,
            file_id=file_id,
            source=source,
            category=category,
            categories=verdict.categories,
            severity=severity,
            scores=verdict.scores(),
            excerpt=excerpt_of(excerpt),
            original_text=original_text,
        )
        FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.CREATED, note=f"{severity} {category}")
        logger.info("safety flag %s: %s %s (%s)", flag.pk, severity, category, source)
        return flag, True, False, verdict.alerts
    before = existing.severity
    scores = _merge_scores(existing.scores, verdict.scores())
    categories = sorted({*existing.categories, *verdict.categories})
    raised = rank(severity) > rank(before)
    # A loud signal at the severity of a flag kept quiet so far alerts, once: `alerted` reads the
    # flag's log (a concurrent alert task not yet run makes a second one, which is idempotent).
    # (A crisis always alerts when it is made or reached, so only a concern can have been quiet.)
    louder = verdict.alerts and severity == before == Severity.CONCERN and not alerts.alerted(existing)
    fills_original = bool(original_text and not existing.original_text)
    unchanged = scores == existing.scores and categories == existing.categories
    if not raised and not louder and not fills_original and unchanged:
        return existing, False, False, False
    existing.scores, existing.categories = scores, categories
    if fills_original:
        existing.original_text = original_text
    if raised:
        existing.severity, existing.category = severity, category
        FlagAction.objects.create(flag=existing, kind=FlagAction.Kind.NOTE, note=f"raised to {severity} {category}")
        logger.info("safety flag %s: raised from %s to %s %s", existing.pk, before, severity, category)
    existing.save()
    return existing, False, raised, (raised and verdict.alerts) or louder
