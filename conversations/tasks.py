from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from conversations import file_extraction, files, services, summaries
from conversations.models import Conversation, ConversationFile
from core import background
from llm.gateway import LLMError

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def conversations_end_idle() -> int:
    """End conversations idle for CONVERSATION_IDLE_MINUTES. Safe twice: ending is idempotent."""
    return services.conversations_end_idle()


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(files.StorageUnavailable, DatabaseError, InterfaceError),
    max_tries_setting="FILES_EXTRACT_MAX_ATTEMPTS",
    retry_backoff_setting="FILES_EXTRACT_RETRY_BACKOFF_SECONDS",
    # A backstop (prefork pool) above the reader's own limit, which holds in any pool: the
    # storage read and the database writes around it.
    soft_time_limit=settings.FILES_EXTRACT_TIME_LIMIT_SECONDS + 30,
    time_limit=settings.FILES_EXTRACT_TIME_LIMIT_SECONDS + 60,
)
def file_extract(self, file_id: int) -> str:  # type: ignore[no-untyped-def]
    """Extract the text of an uploaded file and settle its status (`file_extraction.file_extract`).

    Safe to run twice or to be redelivered: only a pending file is read, and its outcome is
    written by an update conditional on `status = pending`. A malformed or encrypted PDF is
    settled unreadable inside the extraction, never raised. The storage or the database down
    for a moment is retried by Celery (`background.Retrying`: exponential backoff with jitter),
    up to FILES_EXTRACT_MAX_ATTEMPTS tries; after that `files_sweep` sends the file again later,
    and each try counts: past the cap the file is settled unreadable (`extraction_failed`), so a
    file that kills its worker is not redelivered for ever. A PDF is read in a child process
    within bounds of decompressed bytes, memory and time (`file_extraction._pdf_extract`): a file past
    them is settled unreadable (`too_large`, `too_slow`), and the worker's memory is not touched
    by it. A try past Celery's time limit (prefork pool; the storage or the database hanging) is
    settled `extraction_failed`.
    """
    try:
        return file_extraction.file_extract(file_id=file_id)
    except SoftTimeLimitExceeded:
        logger.error(
            "file %s: extraction took longer than %ss", file_id, settings.FILES_EXTRACT_TIME_LIMIT_SECONDS + 30
        )
        unreadable = file_extraction.Extraction(
            status=ConversationFile.Status.UNREADABLE, reason=ConversationFile.Reason.EXTRACTION_FAILED
        )
        return file_extraction.file_extract_settle(file_id=file_id, extraction=unreadable)
    except (files.StorageUnavailable, DatabaseError, InterfaceError) as exc:
        if not background.last_try(self):
            logger.info("file %s: extraction retry in %.1fs (%s)", file_id, background.retry_countdown(self), exc)
            raise
        logger.warning(
            "file %s: extraction still failing after %s tries (%s); the sweep retries",
            file_id,
            self.request.retries + 1,
            exc,
        )
        return "pending"


@shared_task(acks_late=True)
def files_sweep() -> int:
    """Re-enqueue the files left pending (`file_extraction.files_pending_due`): a lost or unsent message, a
    worker that died. Runs every minute (beat). Idempotent: a file extracted twice is written once."""
    due = file_extraction.files_pending_due()
    if due:
        ConversationFile.objects.filter(pk__in=due).update(extract_requested_at=timezone.now())
    for file_id in due:
        file_extract.delay(file_id)
    if due:
        logger.info("file sweep: re-enqueued %d files", len(due))
    return len(due)


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(LLMError, DatabaseError, InterfaceError),
    max_retries_setting="SUMMARY_MAX_RETRIES",
    retry_backoff_setting="SUMMARY_RETRY_BACKOFF_SECONDS",
)
def conversation_summarize(self, conversation_id: int) -> str:  # type: ignore[no-untyped-def]
    """Write the summary memory of an ended conversation.

    Safe to run twice or to be redelivered: `conversation_summary_write` skips a conversation
    whose summary is settled, and a unique constraint allows one summary per conversation.
    A conversation ended while a turn was in progress waits for that turn's reply (a retry every
    sixth of TURN_LEASE_SECONDS; past SUMMARY_MAX_RETRIES, `summaries_sweep` sends it again).
    Errors are retried by Celery (`background.Retrying`: exponential backoff with jitter), up to
    SUMMARY_MAX_RETRIES; after that:
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
        if background.last_try(self):
            logger.warning(
                "summary: conversation %s: a turn is still in progress; the sweep will retry", conversation_id
            )
            return "pending"
        raise self.retry(exc=exc, countdown=max(1.0, settings.TURN_LEASE_SECONDS / 6)) from exc
    except (LLMError, DatabaseError, InterfaceError) as exc:
        retries = self.request.retries
        last = background.last_try(self)
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
        if not last:
            countdown = background.retry_countdown(self)
            logger.info("summary: conversation %s retry in %.1fs (%s)", conversation_id, countdown, exc)
            raise
        logger.warning(
            "summary: conversation %s still pending after %s tries (%s); fallback stored, the sweep will retry",
            conversation_id,
            retries + 1,
            exc,
        )
        return "pending"


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


# --- The names these tasks had in memory.tasks -----------------------------------------------------
# A message queued under an old name before an upgrade (a summary enqueued, a sweep sent by beat)
# still runs: each one is handed to the task under its new name. Remove them one release after.


@shared_task(name="memory.tasks.conversation_summarize", acks_late=True)
def conversation_summarize_under_old_name(conversation_id: int) -> None:
    """Send `conversation_summarize` again under its name. Safe twice, as that task is."""
    conversation_summarize.delay(conversation_id)


@shared_task(name="memory.tasks.summaries_sweep", acks_late=True)
def summaries_sweep_under_old_name() -> int:
    """Run `summaries_sweep`. Safe twice, as it is."""
    return int(summaries_sweep())
