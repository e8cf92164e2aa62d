"""The LTI services' background work: a course's roster sync (lti.nrps), a quiz's score sent to
its course (lti.grades) and the sweep of lost scores. Tasks take ids, re-read their rows and
delegate; each says why a second run is harmless. They are enqueued by name after commit."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from core import background
from lti import grades, nrps

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def roster_sync(sync_id: int) -> dict[str, int]:
    """Read a course's members from the platform and apply them to its class (`nrps.roster_sync`).

    Safe to run twice: only a queued sync is run (a conditional update claims it), and applying
    the same members again changes nothing."""
    return nrps.roster_sync(sync_id=sync_id)


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(grades.ScoreFailed, OperationalError, InterfaceError),
    max_retries_setting="LTI_SCORE_MAX_RETRIES",
    retry_backoff_setting="LTI_SCORE_BACKOFF_SECONDS",
)
def score_send(self, submission_id: int) -> str:  # type: ignore[no-untyped-def]
    """Post one quiz score to its course (`grades.score_send`).

    Safe to run twice: a submission is claimed by one conditional update before it is sent and
    marked sent after, so a second task finds nothing to claim. A transient failure (network, a
    5xx or 429, the database restarting) releases the claim and is retried by Celery with
    exponential backoff and jitter up to LTI_SCORE_MAX_RETRIES; `attempts` counts every task's
    tries, so one re-sent by the sweep stops at the same total. After the last try it is settled
    failed."""
    try:
        return grades.score_send(submission_id=submission_id)
    except grades.ScoreFailed as exc:
        if not background.last_try(self) and exc.attempts <= settings.LTI_SCORE_MAX_RETRIES:
            logger.info("LTI score %s: retry in %.1fs (%s)", submission_id, background.retry_countdown(self), exc)
            raise
        grades.score_fail(submission_id=submission_id, error=f"{exc} (after {exc.attempts} tries)")
        return "failed"


@shared_task(acks_late=True)
def scores_sweep() -> int:
    """Re-enqueue the submissions whose task was lost (`grades.submissions_due`). Runs every five
    minutes (beat). Safe twice: a submission sent or being sent is not claimed again."""
    due = grades.submissions_due()
    for submission_id in due:
        background.send(grades.SEND_TASK, submission_id)
    return len(due)
