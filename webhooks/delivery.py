"""Delivering the product's events to the webhooks (docs/webhooks.md).

`event_receive` is core.events' durable sink: in the transaction of the write that emits an
event, it makes one `WebhookDelivery` per active webhook that wants the event and covers the
student's schools, and sends each by its own task once that transaction commits.
`delivery_send` signs and posts one (core.signed_post, the Standard Webhooks format, as the
safety alerts are); the task retries a transient failure with exponential backoff and jitter,
then `delivery_fail` settles it; a webhook whose deliveries keep failing
(WEBHOOKS_DISABLE_AFTER_FAILURES in a row) is disabled with the reason.

At least once: a delivery is sent until it is settled, and may be sent twice (a worker that died
after the receiver answered, a sweep racing a slow retry); its `message_id` (the `webhook-id`
header) is the same on every try, so the receiver drops a duplicate. The deliveries commit with
the write, or not at all: a rolled back write announces nothing, and one whose process dies
right after its commit, before the tasks are sent, leaves pending deliveries that the sweep
(`deliveries_due`) sends.
"""

from __future__ import annotations

import json
import logging
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core import background, signed_post
from core.events import Event
from webhooks.models import Webhook, WebhookDelivery
from webhooks.selectors import school_ancestry, student_school_ids

logger = logging.getLogger(__name__)

SEND_TASK = "webhooks.tasks.delivery_send"


class DeliveryFailed(Exception):
    """A transient failure (network, a non-2xx answer): the task retries. `attempts` counts the
    delivery's tries so far, all tasks together."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


# --- Making the deliveries --------------------------------------------------------------------


def event_receive(event: Event) -> None:
    """Make the deliveries of `event` (core.events' durable sink: in the emitting transaction)
    and send each once it commits. One query when no active webhook wants the event."""
    hooks = [hook for hook in Webhook.objects.filter(active=True) if event.type in hook.events]
    if not hooks:
        return
    direct = set(event.school_ids)
    if event.student_id is not None:
        direct |= student_school_ids(event.student_id)
    ancestry = school_ancestry(direct)
    rows = []
    for hook in hooks:
        mine = sorted(s for s, above in ancestry.items() if hook.school_id is None or hook.school_id in above)
        if hook.school_id is not None and not mine:
            continue
        rows.append(
            WebhookDelivery(
                webhook=hook,
                event_type=event.type,
                message_id=f"msg_{secrets.token_hex(12)}",
                payload=payload_for(event, schools=mine),
            )
        )
    if not rows:
        return
    with transaction.atomic():
        made = WebhookDelivery.objects.bulk_create(rows)
        for delivery in made:
            background.enqueue(SEND_TASK, delivery.pk)
    logger.info("event %s: %d webhook deliveries", event.type, len(made))


def payload_for(event: Event, *, schools: list[int]) -> dict[str, Any]:
    """What the receiver gets: the type, the event's time, and its data with the schools it
    concerns that the webhook covers (`school_id`: the first of them; None if none)."""
    return {
        "type": event.type,
        "timestamp": event.timestamp.isoformat(),
        "data": {**event.data, "school_id": schools[0] if schools else None, "school_ids": schools},
    }


# --- Sending one delivery ---------------------------------------------------------------------


def delivery_send(*, delivery_id: int) -> str:
    """Send one delivery and record it: "sent", "done" (not pending: settled already), "failed"
    (no try can succeed: settled at once) or "cancelled" (its webhook was disabled meanwhile).
    Raises DeliveryFailed on a transient failure, with the error and the answer's status kept;
    the task retries, then settles it with `delivery_fail`.

    Each try counts in `attempts` (a conditional update: only a pending delivery is tried). No
    lock is held while sending; two tasks sending it at once may both send it, which the stable
    `message_id` lets the receiver see.
    """
    now = timezone.now()
    pending = WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
    if not pending.update(attempts=F("attempts") + 1, last_attempt_at=now):
        return "done"
    delivery = WebhookDelivery.objects.select_related("webhook").get(pk=delivery_id)
    hook = delivery.webhook
    if not hook.active:
        _settle(delivery_id, status=WebhookDelivery.Status.FAILED, last_error="cancelled: the webhook is disabled")
        return "cancelled"
    refusal = signed_post.url_refusal(hook.url, allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_URLS)
    if refusal:
        delivery_fail(delivery_id=delivery_id, error=f"webhook: {refusal}")
        return "failed"
    body = json.dumps(delivery.payload, separators=(",", ":"))
    try:
        response = signed_post.signed_post(
            hook.url,
            secret=hook.secret,
            message_id=delivery.message_id,
            body=body,
            timeout=settings.WEBHOOKS_TIMEOUT_SECONDS,
            now=now,
        )
    except signed_post.PostImpossible as exc:
        delivery_fail(delivery_id=delivery_id, error=str(exc))
        return "failed"
    except signed_post.PostFailed as exc:
        WebhookDelivery.objects.filter(pk=delivery_id).update(last_error=str(exc)[:2000], response_code=exc.status_code)
        raise DeliveryFailed(str(exc), attempts=delivery.attempts) from exc
    if _settle(
        delivery_id, status=WebhookDelivery.Status.SENT, sent_at=timezone.now(), response_code=response.status_code
    ):
        Webhook.objects.filter(pk=hook.pk, consecutive_failures__gt=0).update(consecutive_failures=0)
    logger.info("webhook %s: %s %s sent", hook.pk, delivery.event_type, delivery.message_id)
    return "sent"


def delivery_fail(*, delivery_id: int, error: str) -> None:
    """Settle a pending delivery failed (once), and count it against its webhook: the
    WEBHOOKS_DISABLE_AFTER_FAILURES-th failure in a row disables the webhook, with the reason.
    A sent delivery resets the count."""
    with transaction.atomic():
        delivery = WebhookDelivery.objects.filter(pk=delivery_id).only("webhook_id").first()
        if delivery is None or not _settle(delivery_id, status=WebhookDelivery.Status.FAILED, last_error=error[:2000]):
            return
        hook = Webhook.objects.select_for_update().get(pk=delivery.webhook_id)
        hook.consecutive_failures += 1
        fields = ["consecutive_failures", "updated_at"]
        limit = settings.WEBHOOKS_DISABLE_AFTER_FAILURES
        if hook.active and limit > 0 and hook.consecutive_failures >= limit:
            hook.active, hook.disabled_at = False, timezone.now()
            hook.disabled_reason = (
                f"disabled after {hook.consecutive_failures} failed deliveries in a row; the last: {error}"[:500]
            )
            fields += ["active", "disabled_at", "disabled_reason"]
            logger.error("webhook %s disabled: %s", hook.pk, hook.disabled_reason)
        hook.save(update_fields=fields)
    logger.warning("webhook delivery %s failed: %s", delivery_id, error)


def _settle(delivery_id: int, *, status: str, **changes: Any) -> bool:
    """Move a pending delivery to `status` with `changes`; False if it was not pending any more."""
    pending = WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
    return bool(pending.update(status=status, **changes))


# --- The sweep --------------------------------------------------------------------------------


def deliveries_due(*, now: datetime | None = None) -> list[int]:
    """The pending deliveries whose task was lost (core.signed_post.lost_deliveries)."""
    pending = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING)
    return signed_post.lost_deliveries(pending, budget=retry_budget(), now=now or timezone.now())


def retry_budget() -> timedelta:
    """The longest a delivery's tries may take, by the WEBHOOKS_DELIVERY_* settings."""
    return signed_post.retry_budget(
        retries=settings.WEBHOOKS_DELIVERY_MAX_RETRIES,
        backoff_seconds=settings.WEBHOOKS_DELIVERY_BACKOFF_SECONDS,
        try_seconds=settings.WEBHOOKS_TIMEOUT_SECONDS,
    )
