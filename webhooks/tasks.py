"""The webhooks' background work: sending a delivery, and the sweep of lost ones
(webhooks.delivery). Tasks take ids, re-read their rows and delegate; each says why a second run
is harmless. Deliveries are enqueued by name after commit (core.background.enqueue)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from core import background
from webhooks import delivery

logger = logging.getLogger(__name__)


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(delivery.DeliveryFailed, OperationalError, InterfaceError),
    max_retries_setting="WEBHOOKS_DELIVERY_MAX_RETRIES",
    retry_backoff_setting="WEBHOOKS_DELIVERY_BACKOFF_SECONDS",
)
def delivery_send(self, delivery_id: int) -> str:  # type: ignore[no-untyped-def]
    """Sign and post one delivery and record it (`delivery.delivery_send`).

    Safe to run twice: only a pending delivery is sent, and it is settled by an update
    conditional on `status = pending`; a receiver sees the same `webhook-id` on every try. A
    transient failure (network, a non-2xx answer, the database restarting) is retried by Celery
    (`background.Retrying`: exponential backoff with jitter) up to WEBHOOKS_DELIVERY_MAX_RETRIES;
    `attempts` counts every task's tries, so one re-sent by the sweep stops at the same total.
    After the last try it is settled failed (`delivery.delivery_fail`), which may disable the
    webhook.
    """
    try:
        return delivery.delivery_send(delivery_id=delivery_id)
    except delivery.DeliveryFailed as exc:
        if not background.last_try(self) and exc.attempts <= settings.WEBHOOKS_DELIVERY_MAX_RETRIES:
            logger.info("webhook delivery %s: retry in %.1fs (%s)", delivery_id, background.retry_countdown(self), exc)
            raise
        delivery.delivery_fail(delivery_id=delivery_id, error=f"{exc} (after {exc.attempts} tries)")
        return "failed"


@shared_task(acks_late=True)
def deliveries_sweep() -> int:
    """Re-enqueue the pending deliveries whose task was lost (`delivery.deliveries_due`). Runs
    every five minutes (beat). Safe twice: a delivery no longer pending is not sent again."""
    due = delivery.deliveries_due()
    for delivery_id in due:
        background.send(delivery.SEND_TASK, delivery_id)
    return len(due)
