from __future__ import annotations

import logging
import random

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from conversations.models import Conversation
from llm.gateway import LLMError
from memory import summaries

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, acks_late=True)
def conversation_summarize(self, conversation_id: int) -> str:  # type: ignore[no-untyped-def]
    """Write the summary memory of an ended conversation.

    Safe to run twice or to be redelivered: `conversation_summary_write` skips a conversation
    whose summary is settled, and a unique constraint allows one summary per conversation.
    Transient model errors retry with exponential backoff and jitter, up to SUMMARY_MAX_RETRIES;
    after that the summary stays pending and `summaries_sweep` enqueues it again later, so a
    model that is down for hours loses nothing.
    """
    try:
        return summaries.conversation_summary_write(conversation_id=conversation_id).value
    except LLMError as exc:
        summaries.summary_attempt_failed(conversation_id=conversation_id, error=str(exc))
        if not exc.transient or self.request.retries >= settings.SUMMARY_MAX_RETRIES:
            logger.warning(
                "summary: conversation %s still pending after %s tries (%s); the sweep will retry",
                conversation_id,
                self.request.retries + 1,
                exc,
            )
            return "pending"
        base = settings.SUMMARY_RETRY_BACKOFF_SECONDS * (2**self.request.retries)
        countdown = base * random.uniform(0.8, 1.2)
        logger.info("summary: conversation %s retry in %.1fs (%s)", conversation_id, countdown, exc)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(acks_late=True)
def summaries_sweep() -> int:
    """Re-enqueue summaries still pending (model down, broker lost the message). Idempotent."""
    due = summaries.pending_summaries_due()
    if due:
        Conversation.objects.filter(pk__in=due).update(summary_requested_at=timezone.now())
    for conversation_id in due:
        conversation_summarize.delay(conversation_id)
    if due:
        logger.info("summary sweep: re-enqueued %d conversations", len(due))
    return len(due)
