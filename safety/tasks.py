"""The safety app's background work: screening an uploaded file, and the alerts of a flag
(safety.alerts). Tasks take ids, re-read their rows and delegate; each says why a second run is
harmless. Services enqueue them by name (core.background.enqueue), after commit."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from core import background
from safety import alerts

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def file_screen(file_id: int) -> str:
    """Screen an uploaded file (safety.files.file_screen)."""
    from safety import files

    return files.file_screen(file_id=file_id)


@shared_task(acks_late=True)
def flag_alert(flag_id: int) -> int:
    """Alert the level-0 recipients of a concern or crisis flag (`alerts.flag_alert`): one
    delivery per recipient and channel, each sent by `delivery_send`. Safe to run twice: the
    deliveries are unique per flag, channel, target and level, and the flag's log records, in
    the same transaction, that its severity was alerted; a second run only re-enqueues the
    deliveries still pending."""
    return alerts.flag_alert(flag_id=flag_id)


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(alerts.DeliveryFailed, OperationalError, InterfaceError),
    max_retries_setting="SAFETY_DELIVERY_MAX_RETRIES",
    retry_backoff_setting="SAFETY_DELIVERY_BACKOFF_SECONDS",
)
def delivery_send(self, delivery_id: int) -> str:  # type: ignore[no-untyped-def]
    """Send one alert (an email or a signed webhook) and record it (`alerts.delivery_send`).

    Safe to run twice: only a pending delivery is sent, and it is settled by an update
    conditional on `status = pending`, so it is logged `notified` once. A transient failure (an
    SMTP or network error, a webhook's non-2xx answer, the database restarting) is retried by
    Celery (`background.Retrying`: exponential backoff with jitter) up to
    SAFETY_DELIVERY_MAX_RETRIES; the delivery's `attempts` count every task's tries, so a
    delivery re-sent by the sweep stops at the same total. After the last try it is settled
    failed and logged `notify_failed` with the error.
    """
    try:
        return alerts.delivery_send(delivery_id=delivery_id)
    except alerts.DeliveryFailed as exc:
        if not background.last_try(self) and exc.attempts <= settings.SAFETY_DELIVERY_MAX_RETRIES:
            logger.info("safety delivery %s: retry in %.1fs (%s)", delivery_id, background.retry_countdown(self), exc)
            raise
        alerts.delivery_fail(delivery_id=delivery_id, error=f"{exc} (after {exc.attempts} tries)")
        return "failed"


@shared_task(acks_late=True)
def escalations_due() -> int:
    """Escalate the open crises past their `escalate_at` (`alerts.escalations_due`). Runs every
    minute (beat). Safe twice: each flag is re-checked under its lock and its `escalate_at` moved
    in the same transaction as its new deliveries."""
    return alerts.escalations_due()


@shared_task(acks_late=True)
def deliveries_sweep() -> int:
    """Re-enqueue the pending deliveries whose task was lost (`alerts.deliveries_due`: the broker
    down when they were enqueued, a worker that died). Runs every five minutes (beat). Safe
    twice: a delivery that is no longer pending is not sent again."""
    due = alerts.deliveries_due()
    for delivery_id in due:
        background.send("safety.tasks.delivery_send", delivery_id)
    if due:
        logger.info("safety deliveries sweep: re-enqueued %d deliveries", len(due))
    return len(due)


@shared_task(acks_late=True)
def messages_sweep() -> int:
    """Screen again, with the offline line, the student messages stored since the last sweep
    (`sweep.messages_sweep`). Safe to run twice: a cursor under a row lock, and flags merge."""
    from safety import sweep

    return sweep.messages_sweep()
