"""The audit of legal erasures: what was erased, when, by whom and why, never whose."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

# The permissions of this app (Erasure.Meta.permissions); superusers have both.
ERASE_PERMISSION = "privacy.erase_student"
EXPORT_PERMISSION = "privacy.export_student"


def erasure_reference() -> str:
    """A random reference to quote for an erasure ("er_" and 16 hex digits): it derives from
    nothing about the student, so it cannot be traced back to them."""
    return f"er_{secrets.token_hex(8)}"


class Erasure(models.Model):
    """One legal erasure of a student (privacy.services.student_erase).

    It names no content and not the student (neither id nor username): the reference, when,
    the staff user who did it (empty: `manage.py erase_student` without `--by`), the reason they
    gave, and how many rows each table lost. `files_pending` stored files were to be deleted after
    commit; `files_failed` of them could not be (their names are in the error log).
    """

    class Via(models.TextChoices):
        API = "api", "API"
        COMMAND = "command", "manage.py erase_student"
        RETENTION = "retention", "Retention policy (a deactivated student)"
        GUARDIAN_REQUEST = "guardian_request", "A guardian's request, approved by the school"

    reference = models.CharField(max_length=32, unique=True, default=erasure_reference, editable=False)
    erased_at = models.DateTimeField()
    # PROTECT: an audit record outlives nothing it names; deactivate a staff account instead.
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    via = models.CharField(max_length=16, choices=Via.choices)
    # Free text written by staff, kept as given: it must not name the student (docs/privacy.md).
    reason = models.TextField()
    # {"deleted": {"app.Model": n, ...}, "anonymised": {"llm.LLMUsage": n}}.
    counts = models.JSONField(default=dict)
    files_pending = models.PositiveIntegerField(default=0)
    files_failed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-erased_at", "-id"]
        permissions = [
            ("erase_student", "Can erase a student and all their data (legal erasure)"),
            ("export_student", "Can export any student's data"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(files_failed__lte=models.F("files_pending")), name="erasure_files"),
        ]

    def __str__(self) -> str:
        return f"Erasure {self.reference}"


class ConsentChange(models.Model):
    """One change of a student's consent to memory (`User.memory_consent`), append-only: who set
    it (empty once that account is deleted), when, on or off, and why (privacy.consent).
    Never edited or deleted but with the student (a legal erasure)."""

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="consent_changes")
    memory_consent = models.BooleanField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField()
    archived = models.PositiveIntegerField(default=0, help_text="Memories archived by this change.")
    changed_at = models.DateTimeField()

    class Meta:
        ordering = ["student", "changed_at", "id"]

    def __str__(self) -> str:
        return f"memory consent of {self.student_id} {'on' if self.memory_consent else 'off'} at {self.changed_at}"


class ErasureRequest(models.Model):
    """A guardian's request that their child's data be erased (docs/privacy.md#guardians), and
    the school's decision: approved (the erasure it ran, `erasure`) or refused (with its reason).

    The row outlives the child: an approved request's `student` is emptied by the erasure, and
    the request keeps who filed it, when, the decision, who made it and why. `school` (the
    child's, when filed) says which administrators decide it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved: erased"
        REFUSED = "refused", "Refused"

    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    school = models.ForeignKey("accounts.School", on_delete=models.PROTECT, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="erasure_requests"
    )
    requested_at = models.DateTimeField()
    # Free text by the guardian, kept as given.
    reason = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)
    erasure = models.OneToOneField(Erasure, null=True, blank=True, on_delete=models.PROTECT, related_name="request")

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["student"], condition=Q(status="pending"), name="erasure_request_one_pending"
            ),
        ]

    def __str__(self) -> str:
        return f"erasure request {self.pk} ({self.status})"
