from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from core.retry import backoff_seconds
from llm import gateway
from memory import consolidation, extraction, services
from memory.search import embeddings
from memory.selectors import memories_missing_embedding

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, acks_late=True)
def memory_embed(self, memory_id: int) -> int:  # type: ignore[no-untyped-def]
    """Compute and store the vector of one memory (after a write or an edit).

    Safe to run twice or to be redelivered: `memory_embeddings_write` skips a memory whose
    vector was made by the current model from its current text, and skips archived memories.
    An unavailable embedder retries with exponential backoff and jitter up to
    EMBEDDINGS_MAX_RETRIES; after that `embeddings_sweep` picks the memory up later, and recall
    finds it lexically meanwhile.
    """
    try:
        return services.memory_embeddings_write(memory_ids=[memory_id])
    except embeddings.EmbedderUnavailable as exc:
        if self.request.retries >= settings.EMBEDDINGS_MAX_RETRIES:
            logger.warning(
                "embedding of memory %s gave up after %s tries: %s", memory_id, self.request.retries + 1, exc
            )
            return 0
        countdown = backoff_seconds(settings.EMBEDDINGS_RETRY_BACKOFF_SECONDS, self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(acks_late=True)
def student_reindex(student_id: int) -> int:
    """Re-index a student's memories in their current language (after a language change).

    Idempotent, so a redelivery after a killed worker just does it again."""
    count = services.student_memories_reindex(student_id=student_id)
    logger.info("re-indexed %d memories of student %s", count, student_id)
    return count


@shared_task(acks_late=True)
def embeddings_sweep() -> int:
    """Embed a batch of active memories that have no vector from the current model. Idempotent.

    Catches up after a lost message or an embedder outage; `manage.py reembed` does the same in
    bulk for a model change.
    """
    model = embeddings.current_model_name()
    if model is None:
        return 0
    ids = memories_missing_embedding(model=model, limit=settings.EMBEDDINGS_SWEEP_BATCH)
    stored = 0
    batch = settings.EMBEDDINGS_BATCH_SIZE
    for start in range(0, len(ids), batch):
        try:
            stored += services.memory_embeddings_write(memory_ids=ids[start : start + batch])
        except embeddings.EmbedderUnavailable as exc:
            logger.warning("embeddings sweep: embedder unavailable (%s); next sweep retries", exc)
            break
    if stored:
        logger.info("embeddings sweep: embedded %d memories", stored)
    return stored


@shared_task(bind=True, max_retries=None, acks_late=True)
def memory_facts_extract(self, memory_id: int) -> int:  # type: ignore[no-untyped-def]
    """Extract the facts and approaches of one new memory (memory.extraction). Returns how many
    were stored.

    Safe to run twice: the facts of a memory carry its id in a unique source_ref, and a memory
    with facts is not asked about again. An unreachable model retries with backoff up to
    SUMMARY_MAX_RETRIES, then gives up (facts are a bonus; the memory itself is kept).
    """
    try:
        _, stored = extraction.facts_extract(memory_id=memory_id)
    except gateway.LLMUnavailable as exc:
        if self.request.retries >= settings.SUMMARY_MAX_RETRIES:
            logger.warning(
                "extraction of memory %s gave up after %s tries: %s", memory_id, self.request.retries + 1, exc
            )
            return 0
        countdown = backoff_seconds(settings.SUMMARY_RETRY_BACKOFF_SECONDS, self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from exc
    return len(stored)


@shared_task(bind=True, max_retries=None, acks_late=True)
def memory_consolidate(self, student_id: int) -> int:  # type: ignore[no-untyped-def]
    """Merge one student's near-duplicate memories (memory.consolidation). Returns how many
    clusters were merged.

    Safe to run twice: each cluster is decided once (ConsolidationDecision), merged members are
    archived, and a merge's source_ref is unique. An unreachable model retries with backoff.
    """
    try:
        report = consolidation.consolidate_student(student_id=student_id)
    except gateway.LLMUnavailable as exc:
        if self.request.retries >= settings.SUMMARY_MAX_RETRIES:
            logger.warning("consolidation of student %s gave up: %s", student_id, exc)
            return 0
        countdown = backoff_seconds(settings.SUMMARY_RETRY_BACKOFF_SECONDS, self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from exc
    return report.count("merged")


@shared_task(acks_late=True)
def memories_consolidate_due() -> int:
    """The periodic task: consolidate every student with a note, fact or approach written in the
    last two intervals (a missed run is caught up by the next). Returns how many were enqueued."""
    since = timezone.now() - timedelta(hours=2 * settings.MEMORY_CONSOLIDATION_INTERVAL_HOURS)
    students = consolidation.students_due(since=since)
    for student_id in students:
        memory_consolidate.delay(student_id)
    return len(students)
