"""The access log's daily purge: entries older than ACCESS_LOG_DAYS leave it."""

from __future__ import annotations

from celery import shared_task

from audit.services import access_log_purge


@shared_task
def access_log_purge_due() -> int:
    """Delete the entries past their period; how many. Safe to run twice: a second run finds
    nothing older than the cutoff left."""
    return access_log_purge()
