"""Webhook subscriptions of a school (or of every school, made by staff) and the log of their
deliveries (docs/webhooks.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Webhook(models.Model):
    """A receiver of the product's events: a URL, its signing secret and the events it wants,
    for the students of one school (and of the schools under it, for a district) or, with no
    school, of every school. A receiver that keeps failing is disabled (`active` off) with the
    reason in `disabled_reason`."""

    school = models.ForeignKey("accounts.School", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=200)
    events = models.JSONField(default=list)
    description = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["active"], name="webhook_active")]

    def __str__(self) -> str:
        return f"webhook {self.pk} -> {self.url}"


class WebhookDelivery(models.Model):
    """One event for one webhook: its payload (ids and kinds only), its stable `message_id` (the
    `webhook-id` header of every try) and how its tries went."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event_type = models.CharField(max_length=40)
    message_id = models.CharField(max_length=40, unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="webhook_delivery_log"),
            models.Index(
                fields=["status", "created_at"], name="webhook_delivery_pending", condition=Q(status="pending")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.message_id} ({self.status})"
