from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, InterfaceError
from django.utils import timezone

from conversations import files, services
from conversations.models import ConversationFile
from tutor.retry import backoff_seconds

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def conversations_end_idle() -> int:
    """End conversations idle for CONVERSATION_IDLE_MINUTES. Safe twice: ending is idempotent."""
    return services.conversations_end_idle()


@shared_task(
    bind=True,
    max_retries=None,
    acks_late=True,
    soft_time_limit=settings.FILES_EXTRACT_TIME_LIMIT_SECONDS,
    time_limit=settings.FILES_EXTRACT_TIME_LIMIT_SECONDS + 30,
)
def file_extract(self, file_id: int) -> str:  # type: ignore[no-untyped-def]
    """Extract the text of an uploaded file and settle its status (`files.file_extract`).

    Safe to run twice or to be redelivered: only a pending file is read, and its outcome is
    written by an update conditional on `status = pending`. A malformed or encrypted PDF is
    settled unreadable inside the extraction, never raised. The storage or the database down
    for a moment retries with exponential backoff and jitter, up to FILES_EXTRACT_MAX_ATTEMPTS;
    after that `files_sweep` sends the file again later, and each try counts: past the cap the
    file is settled unreadable (`extraction_failed`), so a file that kills its worker is not
    redelivered for ever. A try past FILES_EXTRACT_TIME_LIMIT_SECONDS (prefork pool) is settled
    the same way.
    """
    try:
        return files.file_extract(file_id=file_id)
    except SoftTimeLimitExceeded:
        logger.error("file %s: extraction took longer than %ss", file_id, settings.FILES_EXTRACT_TIME_LIMIT_SECONDS)
        unreadable = files.Extraction(
            status=ConversationFile.Status.UNREADABLE, reason=ConversationFile.Reason.EXTRACTION_FAILED
        )
        return files.file_extract_settle(file_id=file_id, extraction=unreadable)
    except (files.StorageUnavailable, DatabaseError, InterfaceError) as exc:
        retries = self.request.retries
        if retries + 1 >= settings.FILES_EXTRACT_MAX_ATTEMPTS:
            logger.warning(
                "file %s: extraction still failing after %s tries (%s); the sweep retries", file_id, retries + 1, exc
            )
            return "pending"
        countdown = backoff_seconds(settings.FILES_EXTRACT_RETRY_BACKOFF_SECONDS, retries)
        logger.info("file %s: extraction retry in %.1fs (%s)", file_id, countdown, exc)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(acks_late=True)
def files_sweep() -> int:
    """Re-enqueue the files left pending (`files.files_pending_due`): a lost or unsent message, a
    worker that died. Runs every minute (beat). Idempotent: a file extracted twice is written once."""
    due = files.files_pending_due()
    if due:
        ConversationFile.objects.filter(pk__in=due).update(extract_requested_at=timezone.now())
    for file_id in due:
        file_extract.delay(file_id)
    if due:
        logger.info("file sweep: re-enqueued %d files", len(due))
    return len(due)
