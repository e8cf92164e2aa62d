"""Memories of what happened elsewhere in the app: a graded quiz or an uploaded file, a
conversation's summary, what the model drew from other memories, and the quiz outcomes counted
for the approaches shown in a reply."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memory.models import AIMemory
from memory.services.writing import memory_create, memory_rewrite
from memory.validation import TITLE_MAX_CHARS, clip, clip_content, validate_content, validate_title

# A fallback summary says only what the conversation itself shows (its subject, date, questions).
FALLBACK_CONFIDENCE = 0.2


def memory_record_save(
    *, student_id: int, kind: str, source_ref: str, title: str, content: str, conversation_id: int | None = None
) -> tuple[AIMemory, bool]:
    """Store the memory of an app record: a graded quiz (kind quiz_result, source quiz) or an
    uploaded file's text (kind file, source file_upload). Returns (memory, created).

    One memory per `source_ref` ("quiz:12") and student: a second call (a redelivered task)
    returns the first. The text is the app's own rendering of the record (not validated like a
    note: cut to the limits of memory.validation, `clip`, `clip_content`). Runs in the
    caller's transaction when there is one (the grading transaction, for a quiz).
    """
    sources: dict[str, str] = {
        AIMemory.Kind.QUIZ_RESULT: AIMemory.Source.QUIZ,
        AIMemory.Kind.FILE: AIMemory.Source.FILE_UPLOAD,
    }
    if kind not in sources or not source_ref:
        raise ValueError(f"not a record memory: kind {kind!r}, source_ref {source_ref!r}")
    existing = AIMemory.objects.filter(student_id=student_id, source_ref=source_ref).first()
    if existing is not None:
        return existing, False
    clean_content = clip_content(content)
    clean_title = clip(title, max_chars=TITLE_MAX_CHARS)
    try:
        with transaction.atomic():
            memory = memory_create(
                student_id=student_id,
                kind=kind,
                source=sources[kind],
                source_ref=source_ref,
                source_conversation_id=conversation_id,
                title=clean_title,
                content=clean_content,
            )
    except IntegrityError:  # the same record stored meanwhile (memory_one_per_source_ref)
        return AIMemory.objects.get(student_id=student_id, source_ref=source_ref), False
    return memory, True


def memory_derived_store(
    *,
    student_id: int,
    kind: str,
    source: str,
    source_ref: str,
    title: str,
    content: str,
    evidence: list[int],
    confidence: float,
    model: str,
    confirmed: bool = True,
) -> tuple[AIMemory, bool]:
    """Store a memory the model drew from others: an extracted fact or approach, or a merge.
    Returns (memory, created).

    The title and content were validated by the caller's parser; `evidence` lists the memories
    it rests on. `confirmed`: whether a second source agrees (a merge; an extraction says);
    an unconfirmed fact stays out of the prompt's most confident block (AIMemory.confirmed_at).
    One memory per `source_ref` and student, so a redelivered task stores nothing new. Runs in
    the caller's transaction when there is one.
    """
    existing = AIMemory.objects.filter(student_id=student_id, source_ref=source_ref).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            memory = memory_create(
                student_id=student_id,
                kind=kind,
                source=source,
                source_ref=source_ref,
                title=title,
                content=content,
                evidence=sorted(set(evidence)),
                confidence=min(max(confidence, 0.0), 1.0),
                model=model[:200],
                confirmed_at=timezone.now() if confirmed else None,
            )
    except IntegrityError:  # stored meanwhile by another delivery (memory_one_per_source_ref)
        return AIMemory.objects.get(student_id=student_id, source_ref=source_ref), False
    return memory, True


def approaches_outcome_record(*, student_id: int, passed: bool, since: Any) -> int:
    """Count a quiz outcome for each of the student's active approaches shown in a reply's
    prompt since `since` (the previous quiz result, or None for ever). Returns how many moved.

    Called once per graded quiz, in the transaction that stores its result memory (whose
    creation is the guard against counting a redelivery twice).
    """
    qs = AIMemory.objects.active().filter(student_id=student_id, kind=AIMemory.Kind.APPROACH)
    qs = qs.filter(last_recalled_at__isnull=False)
    if since is not None:
        qs = qs.filter(last_recalled_at__gt=since)
    field = "successes" if passed else "failures"
    return qs.update(**{field: F(field) + 1})


def memory_summary_store(
    *, student_id: int, conversation_id: int, title: str, content: str, fallback: bool = False
) -> tuple[AIMemory, bool]:
    """Store the one summary of a conversation. Returns (memory, created).

    Idempotent: the unique constraint `memory_one_summary_per_conversation` makes a second
    store (a redelivered task, a sweep racing a retry) return the existing summary. A
    `fallback` (written from the conversation itself, see memory.summaries) is stored with low
    confidence and `needs_review`; a model's summary stored later replaces it in place.
    """
    clean_title = validate_title(title)
    clean_content = validate_content(content, is_summary=True)
    with transaction.atomic():
        existing = (
            AIMemory.objects.select_for_update()
            .filter(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY)
            .first()
        )
        if existing is not None:
            if existing.needs_review and not fallback and existing.status == AIMemory.Status.ACTIVE:
                memory_rewrite(existing, title=clean_title, content=clean_content)
            return existing, False
        try:
            with transaction.atomic():
                memory = memory_create(
                    student_id=student_id,
                    kind=AIMemory.Kind.SUMMARY,
                    source=AIMemory.Source.SUMMARY_TASK,
                    source_conversation_id=conversation_id,
                    title=clean_title,
                    content=clean_content,
                    needs_review=fallback,
                    confidence=FALLBACK_CONFIDENCE if fallback else 1.0,
                )
        except IntegrityError:
            return AIMemory.objects.get(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY), False
    return memory, True
