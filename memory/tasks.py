"""Memory's background work: embedding, re-indexing, fact extraction and consolidation.

Services enqueue these by name (core.background.enqueue); the tasks import the services, never
the reverse. A model or embedder that is down is retried by Celery (`autoretry_for` on
`background.Retrying`: exponential backoff with jitter, limits from the settings); the last try
gives up quietly (`background.last_try`), and a sweep or the next periodic run catches up.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, OperationalError
from django.utils import timezone

from core import background
from llm import gateway
from memory import consolidation, extraction
from memory.search import embeddings
from memory.selectors import memories_missing_embedding
from memory.services.embedding import memory_embeddings_write
from memory.services.lifecycle import student_memories_reindex

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    acks_late=True,
    base=background.Retrying,
    autoretry_for=(embeddings.EmbedderUnavailable,),
    max_retries_setting="EMBEDDINGS_MAX_RETRIES",
    retry_backoff_setting="EMBEDDINGS_RETRY_BACKOFF_SECONDS",
)
def memory_embed(self, memory_id: int) -> int:  # type: ignore[no-untyped-def]
    """Compute and store the vector of one memory (after a write or an edit).

    Safe to run twice or to be redelivered: `memory_embeddings_write` skips a memory whose
    vector was made by the current model from its current text, and skips archived memories.
    An unavailable embedder is retried up to EMBEDDINGS_MAX_RETRIES; after that `embeddings_sweep`
    picks the memory up later, and recall finds it lexically meanwhile.
    """
    try:
        return memory_embeddings_write(memory_ids=[memory_id])
    except embeddings.EmbedderUnavailable as exc:
        if not background.last_try(self):
            raise
        logger.warning("embedding of memory %s gave up after %s tries: %s", memory_id, self.request.retries + 1, exc)
        return 0


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, IntegrityError),
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=8,
)
def student_reindex(student_id: int) -> int:
    """Re-index a student's memories in their current language (after a language change).

    Idempotent, so a redelivery after a killed worker just does it again, and so does a retry:
    the writers of one student's index queue on their statistics row (memory.search.postings),
    and what may still fail against a concurrent writer or a database restarting (a deadlock, a
    lost connection) is retried by Celery, with its own exponential backoff and jitter (1 s
    doubling, at most 60 s), each batch already committed being done again harmlessly."""
    count = student_memories_reindex(student_id=student_id)
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
            stored += memory_embeddings_write(memory_ids=ids[start : start + batch])
        except embeddings.EmbedderUnavailable as exc:
            logger.warning("embeddings sweep: embedder unavailable (%s); next sweep retries", exc)
            break
    if stored:
        logger.info("embeddings sweep: embedded %d memories", stored)
    return stored


@shared_task(
    bind=True,
    acks_late=True,
    base=background.Retrying,
    autoretry_for=(gateway.LLMUnavailable,),
    max_retries_setting="SUMMARY_MAX_RETRIES",
    retry_backoff_setting="SUMMARY_RETRY_BACKOFF_SECONDS",
)
def memory_facts_extract(self, memory_id: int) -> int:  # type: ignore[no-untyped-def]
    """Extract the facts and approaches of one new memory (memory.extraction). Returns how many
    were stored.

    Safe to run twice: the facts of a memory carry its id in a unique source_ref, and a memory
    with facts is not asked about again. An unreachable model is retried up to
    SUMMARY_MAX_RETRIES, then given up (facts are a bonus; the memory itself is kept).
    """
    try:
        _, stored = extraction.facts_extract(memory_id=memory_id)
    except gateway.LLMUnavailable as exc:
        if not background.last_try(self):
            raise
        logger.warning("extraction of memory %s gave up after %s tries: %s", memory_id, self.request.retries + 1, exc)
        return 0
    return len(stored)


@shared_task(
    bind=True,
    acks_late=True,
    base=background.Retrying,
    autoretry_for=(gateway.LLMUnavailable,),
    max_retries_setting="SUMMARY_MAX_RETRIES",
    retry_backoff_setting="SUMMARY_RETRY_BACKOFF_SECONDS",
)
def memory_consolidate(self, student_id: int) -> int:  # type: ignore[no-untyped-def]
    """Merge one student's near-duplicate memories (memory.consolidation). Returns how many
    clusters were merged.

    Safe to run twice: each cluster is decided once (ConsolidationDecision), merged members are
    archived, and a merge's source_ref is unique. An unreachable model is retried, then given up
    until the next periodic run.
    """
    try:
        report = consolidation.consolidate_student(student_id=student_id)
    except gateway.LLMUnavailable as exc:
        if not background.last_try(self):
            raise
        logger.warning("consolidation of student %s gave up: %s", student_id, exc)
        return 0
    return report.count("merged")


@shared_task(acks_late=True)
def memories_consolidate_due() -> int:
    """The periodic task: consolidate every student with a note, fact or approach written in the
    last two intervals (a missed run is caught up by the next). Returns how many were enqueued."""
    since = timezone.now() - timedelta(hours=2 * settings.MEMORY_CONSOLIDATION_INTERVAL_HOURS)
    students = consolidation.students_due(since=since)
    for student_id in students:
        background.send("memory.tasks.memory_consolidate", student_id)
    return len(students)
