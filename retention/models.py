"""How long a school keeps its students' data (a policy per school, or per class), the runs that
applied it, and the memories it archived on their way out. docs/privacy.md#retention."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

# Ten years: a longer period is a typo, and keeping is said with null.
MAX_DAYS = 3650
PERIOD_FIELDS = ("transcript_days", "memory_days", "memory_grace_days", "flag_days", "inactive_days")


def _days(help_text: str) -> models.PositiveIntegerField[int | None, int | None]:
    return models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(MAX_DAYS)], help_text=help_text
    )


class RetentionPolicy(models.Model):
    """A school's retention periods, or a class's own (which replaces its school's for the
    class's students). Each period is in days; null keeps that kind of data.
    `retention.policies.policy_for_student` says which applies to a student."""

    FIELDS = PERIOD_FIELDS

    school = models.OneToOneField(
        "accounts.School", null=True, blank=True, on_delete=models.CASCADE, related_name="retention_policy"
    )
    classroom = models.OneToOneField(
        "accounts.Classroom", null=True, blank=True, on_delete=models.CASCADE, related_name="retention_policy"
    )
    transcript_days = _days("Messages and files of a conversation ended this many days ago are erased; null: kept.")
    memory_days = _days("Memories are archived this many days after the student's last activity; null: kept.")
    memory_grace_days = _days("A memory archived by the policy is erased this many days later; null: kept archived.")
    flag_days = _days("A resolved safety flag is erased this many days after it was resolved; null: kept.")
    inactive_days = _days("A deactivated student is erased this many days after deactivation; null: kept.")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name_plural = "retention policies"
        constraints = [
            models.CheckConstraint(
                condition=(Q(school__isnull=False) & Q(classroom__isnull=True))
                | (Q(school__isnull=True) & Q(classroom__isnull=False)),
                name="retention_policy_school_or_classroom",
            ),
            *(
                models.CheckConstraint(
                    condition=Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__lte": MAX_DAYS}),
                    name=f"retention_{field}_at_most_max",
                )
                for field in PERIOD_FIELDS
            ),
        ]

    def __str__(self) -> str:
        return f"Retention of {self.classroom or self.school}"


class RetentionRun(models.Model):
    """One application of the policies to one school's students (`retention.services.retention_apply`):
    when, whether it was a dry run (nothing changed, the counts are what would have gone), and
    how many of each kind went (`counts`, RetentionRun.KINDS)."""

    KINDS = (
        "conversations",
        "messages",
        "files",
        "memories_archived",
        "memories_erased",
        "flags",
        "students_erased",
    )

    school = models.ForeignKey("accounts.School", on_delete=models.CASCADE, related_name="retention_runs")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    dry_run = models.BooleanField(default=False)
    counts = models.JSONField(default=dict)
    # Stored files that could not be deleted after commit (their names are in the error log).
    files_failed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["school", "dry_run", "-started_at"], name="retention_run_latest")]

    def __str__(self) -> str:
        return f"Retention run {self.pk} of {self.school_id}{' (dry run)' if self.dry_run else ''}"


class ArchivedMemory(models.Model):
    """A memory the policy archived (its status is `archived`, with the reason "Retention
    period."): erased `memory_grace_days` after `archived_at`. Goes with the memory."""

    memory = models.OneToOneField("memory.AIMemory", primary_key=True, on_delete=models.CASCADE, related_name="+")
    archived_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"memory {self.memory_id} archived {self.archived_at:%Y-%m-%d}"
