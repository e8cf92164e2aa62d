"""Accounts' background work: roster imports sent through the API (docs/roster.md)."""

from __future__ import annotations

from celery import shared_task

from accounts.roster.imports import roster_import_run as run


@shared_task(acks_late=True)
def roster_import_run(import_id: int) -> str:
    """Import the queued roster bundle `import_id` (accounts.roster.imports.roster_import_run).

    Safe to deliver twice: the import is claimed from queued to running in one statement, and
    a second delivery finds it running or finished and does nothing."""
    return run(import_id=import_id)
