"""The daily application of the retention policies."""

from __future__ import annotations

from celery import shared_task

from retention import services


@shared_task(acks_late=True)
def retention_apply() -> dict[int, dict[str, int]]:
    """Apply every school's policy (beat, once a day); returns each school's counts. Safe to run
    twice: what a run erased is not found again and a memory is archived once
    (retention.services.retention_apply)."""
    return {run.school_id: run.counts for run in services.retention_apply()}
