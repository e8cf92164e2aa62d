from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from conversations.models import Conversation
from llm.gateway import LLMError
from memory import embeddings, services, summaries
from memory.selectors import memories_missing_embedding
from tutor.retry import backoff_seconds

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, acks_late=True)
def conversation_summarize(self, conversation_id: int) -> str:  # type: ignore[no-untyped-def]
    """Write the summary memory of an ended conversation.

    Safe to run twice or to be redelivered: `conversation_summary_write` skips a conversation
    whose summary is settled, and a unique constraint allows one summary per conversation.
    A conversation ended while a turn was in progress waits for that turn's reply. Errors retry
    with exponential backoff and jitter, up to SUMMARY_MAX_RETRIES; after that:
    - a transient error (the model unreachable, the database restarting): a fallback memory is
      stored (so the student's conversation is never without one), the summary stays pending,
      and `summaries_sweep` enqueues it again later: a model's summary then replaces the
      fallback;
    - a permanent database error (`summaries.is_permanent_database_error`: the summary cannot be
      stored, however often the model is asked): the summary is settled by
      `summary_settle_failed`, with the fallback memory if that can be stored, else marked
      failed, and logged with its traceback; the sweep never sends it again.
    Permanent failures of the model are settled inside `conversation_summary_write` with a
    fallback, never retried.
    """
    try:
        return summaries.conversation_summary_write(conversation_id=conversation_id).value
    except summaries.TurnInProgress as exc:
        # The conversation ended mid-turn: the reply is stored when the turn finishes (or its
        # lease expires), and the summary is written after it.
        raise self.retry(exc=exc, countdown=max(1.0, settings.TURN_LEASE_SECONDS / 6)) from exc
    except (LLMError, DatabaseError, InterfaceError) as exc:
        retries = self.request.retries
        last = retries >= settings.SUMMARY_MAX_RETRIES
        permanent = summaries.is_permanent_database_error(exc)
        try:
            summaries.summary_attempt_failed(conversation_id=conversation_id, error=str(exc))
            if last and permanent:
                logger.exception(
                    "summary: conversation %s: permanent database error after %s tries; settled",
                    conversation_id,
                    retries + 1,
                )
                return summaries.summary_settle_failed(conversation_id=conversation_id, error=str(exc)).value
            if last:
                summaries.summary_fallback_pending(conversation_id=conversation_id, error=str(exc))
        except (OperationalError, InterfaceError):
            logger.warning("summary: conversation %s: the database is down too", conversation_id)
        if last:
            logger.warning(
                "summary: conversation %s still pending after %s tries (%s); fallback stored, the sweep will retry",
                conversation_id,
                retries + 1,
                exc,
            )
            return "pending"
        countdown = backoff_seconds(settings.SUMMARY_RETRY_BACKOFF_SECONDS, retries)
        logger.info("summary: conversation %s retry in %.1fs (%s)", conversation_id, countdown, exc)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(acks_late=True)
def summaries_sweep() -> int:
    """Re-enqueue the pending summaries nothing is working on (see
    `summaries.pending_summaries_due`): a lost or unsent message, a worker that died. Runs every
    minute (beat) and when a worker starts. Idempotent: a summary enqueued twice is written once."""
    due = summaries.pending_summaries_due()
    if due:
        Conversation.objects.filter(pk__in=due).update(summary_requested_at=timezone.now(), summary_owner="")
    for conversation_id in due:
        conversation_summarize.delay(conversation_id)
    if due:
        logger.info("summary sweep: re-enqueued %d conversations", len(due))
    return len(due)


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
