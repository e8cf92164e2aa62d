"""Safety flags, their append-only log, alert deliveries, and each school's contacts and
resources (docs/safety.md).

A `Flag` is one screened item that a backend found something in: a student message, a file, a
tutor reply, or a pattern across conversations. It is the student's data: erased with them,
in the staff export, never in the student's own export, never in the tutor's prompt.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from safety.types import Category, Severity, kept_quiet


class Flag(models.Model):
    class Source(models.TextChoices):
        MESSAGE = "message", "Student message"
        FILE = "file", "Uploaded file"
        REPLY = "reply", "Tutor reply"
        PATTERN = "pattern", "Pattern across conversations"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"
        FALSE_POSITIVE = "false_positive", "False positive"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="safety_flags")
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # The message it is about (the student's, or the stored tutor reply for `reply`); the file.
    message = models.ForeignKey(
        "conversations.Message", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    file = models.ForeignKey(
        "conversations.ConversationFile", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # A pattern's evidence: the messages it cites (the flags' messages) and the memories.
    cited_messages = models.ManyToManyField("conversations.Message", blank=True, related_name="+")
    cited_memories = models.ManyToManyField("memory.AIMemory", blank=True, related_name="+")
    source = models.CharField(max_length=16, choices=Source.choices)
    category = models.CharField(max_length=32, choices=Category.choices)
    # Every category found (the flag's `category` is the most severe one's).
    categories = models.JSONField(default=list, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    # Each backend's answer: {"offline": {"answered": true, "scores": {...}, "signals": [...],
    # "error": "", "ms": 0}, "moderation": {...}, "classifier": {...}}.
    scores = models.JSONField(default=dict, blank=True)
    # What the flag is about, for the queue (at most SAFETY_EXCERPT_CHARS characters).
    excerpt = models.TextField(blank=True)
    # A tutor reply withheld: the text the model wrote, kept for staff; the student saw the
    # message's stored content (the safe replacement) instead.
    original_text = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    outcome = models.CharField(max_length=200, blank=True)
    # Escalation of an unacknowledged crisis: how many contacts were alerted so far, and when the
    # next one is due (null: none).
    escalation_level = models.PositiveIntegerField(default=0)
    escalate_at = models.DateTimeField(null=True, blank=True)
    # A crisis that none of the student's own recipients could receive: alerted to the fallback
    # instead (safety.unrouted), shown in the queue and on /health/ready while open.
    alert_unrouted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["student", "-created_at"], name="flag_student_recent"),
            models.Index(fields=["status", "severity", "-created_at"], name="flag_queue"),
            models.Index(fields=["escalate_at"], name="flag_escalate_due", condition=Q(escalate_at__isnull=False)),
        ]
        constraints = [
            # A redelivered screening never makes a second flag for the same item.
            models.UniqueConstraint(
                fields=["message", "source"], condition=Q(message__isnull=False), name="flag_one_per_message"
            ),
            models.UniqueConstraint(fields=["file"], condition=Q(file__isnull=False), name="flag_one_per_file"),
            models.CheckConstraint(condition=Q(severity__in=["info", "concern", "crisis"]), name="flag_severity_valid"),
            models.CheckConstraint(
                condition=Q(status__in=["open", "acknowledged", "resolved", "false_positive"]), name="flag_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_severity_display()} flag {self.pk}: {self.category}"

    @property
    def quiet(self) -> bool:
        """A concern that waits in the teachers' queue without an alert: each concern-level signal
        its backends gave is quiet (safety.types.kept_quiet, as `Verdict.alerts` decides)."""
        quiets = [
            bool(signal.get("quiet"))
            for record in (self.scores or {}).values()
            if isinstance(record, dict) and record.get("answered")
            for signal in record.get("signals", [])
            if isinstance(signal, dict) and signal.get("severity") == Severity.CONCERN
        ]
        return kept_quiet(self.severity, quiets)


class FlagAction(models.Model):
    """The flag's append-only log: created, who was notified (and whether it failed), escalated,
    acknowledged, resolved, a note. Rows are never changed or deleted (but with the student)."""

    class Kind(models.TextChoices):
        CREATED = "created", "Created"
        NOTIFIED = "notified", "Notified"
        NOTIFY_FAILED = "notify_failed", "Notification failed"
        ESCALATED = "escalated", "Escalated"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"
        NOTE = "note", "Note"

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="actions")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # Who acted (a teacher, a staff account); null for the system.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Who was notified, and how: "email:a@school.fr", "webhook:https://...".
    recipient = models.CharField(max_length=500, blank=True)
    note = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} on flag {self.flag_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("A flag's log is append-only.")
        super().save(*args, **kwargs)


class SafetyContact(models.Model):
    """Who is alerted beyond the student's teachers: a school's safeguarding lead, a deputy, a
    system listening on a webhook. `classroom` empty: every class. Crises go to the contacts in
    `order` (the teachers first), the next one after SAFETY_ESCALATION_MINUTES unacknowledged."""

    name = models.CharField(max_length=120)
    email = models.EmailField(blank=True)
    webhook_url = models.URLField(blank=True, max_length=500)
    # The Standard Webhooks signing secret ("whsec_..."); empty: SAFETY_WEBHOOK_SECRET.
    webhook_secret = models.CharField(max_length=200, blank=True)
    classroom = models.ForeignKey(
        "accounts.Classroom", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    order = models.PositiveIntegerField(default=1, help_text="Escalation order: lower is alerted first.")
    # Alerted for crises only (the default), or for concerns too.
    concerns_too = models.BooleanField(default=False)
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["order", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(email="") | ~Q(webhook_url=""), name="contact_has_a_channel"),
        ]

    def __str__(self) -> str:
        return self.name


class ClassroomSafety(models.Model):
    """A class's own safety resources, shown to a student in crisis instead of SAFETY_RESOURCES:
    {"fr": [{"name": ..., "phone": ..., "url": ..., "text": ...}], "en": [...]}."""

    classroom = models.OneToOneField("accounts.Classroom", on_delete=models.CASCADE, related_name="safety")
    resources = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"Safety resources of {self.classroom_id}"


class Delivery(models.Model):
    """One alert to one recipient, sent by Celery with retries (safety.tasks)."""

    class Channel(models.TextChoices):
        EMAIL = "email", "Email"
        WEBHOOK = "webhook", "Webhook"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    flag = models.ForeignKey(Flag, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    target = models.CharField(max_length=500)
    contact = models.ForeignKey(SafetyContact, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # The escalation step it belongs to (0: the first alert).
    level = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # The Standard Webhooks message id (webhook-id), stable across retries.
    message_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["flag", "channel", "target", "level"], name="delivery_once"),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.channel} to {self.target} for flag {self.flag_id}"


class ScreeningCursor(models.Model):
    """How far the screening sweep (safety.sweep) has read the student messages, by id."""

    name = models.CharField(max_length=32, primary_key=True)
    last_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} screened up to {self.last_id}"
