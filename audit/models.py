"""The access log: one row per student whose records someone else read, per request.

Append-only. The manager refuses `update`, `delete` and `bulk_update`, and a row refuses `save`
once stored and `delete`: what was read stays read. Two paths delete entries, through the base
manager: the period's purge (`AccessEntryQuerySet.purge_before`, run daily by audit.tasks), and
a student's erasure (privacy.services.student_erase), which deletes their entries with them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn

from django.conf import settings
from django.db import models
from django.utils import timezone


class AppendOnly(Exception):
    """An attempt to change or delete an access entry through the ORM."""


def _refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise AppendOnly("The access log is append-only: entries leave it only by its period's purge or an erasure.")


class AccessEntryQuerySet(models.QuerySet["AccessEntry"]):
    update = _refuse
    delete = _refuse
    bulk_update = _refuse
    update_or_create = _refuse

    def purge_before(self, cutoff: datetime, *, batch: int = 5000) -> int:
        """Delete the entries older than `cutoff`, `batch` rows per statement; how many."""
        purged = 0
        while True:
            ids = list(self.filter(at__lt=cutoff).order_by("pk").values_list("pk", flat=True)[:batch])
            if not ids:
                return purged
            # The base manager's queryset, which deletes (this one refuses).
            count, _ = AccessEntry._base_manager.filter(pk__in=ids).delete()
            purged += count


class AccessEntry(models.Model):
    """Someone other than the student read some of the student's records: who (`actor`, null
    for a machine client or an account since deleted), when, what kind of record, which ids
    (at most `IDS_MAX`), through which surface."""

    class Kind(models.TextChoices):
        PROFILE = "profile", "profile"
        CONVERSATIONS = "conversations", "conversations"
        MESSAGES = "messages", "messages"
        FILES = "files", "files"
        MEMORIES = "memories", "memories"
        CARD = "card", "card"
        SKILLS = "skills", "skills"
        REVIEWS = "reviews", "reviews"
        QUIZZES = "quizzes", "quizzes"
        TASKS = "tasks", "tasks"
        FLAGS = "flags", "flags"
        INSIGHTS = "insights", "insights answer"
        EXPORT = "export", "export"

    class Surface(models.TextChoices):
        API = "api", "API"
        MCP = "mcp", "MCP server"
        ADMIN = "admin", "admin"
        INSIGHTS = "insights", "question about a student or a class"
        EXPORT = "export", "export"

    # The most record ids an entry keeps (a list page's ids: at most 100 in the API).
    IDS_MAX = 100

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    record_ids = models.JSONField(default=list, blank=True)
    surface = models.CharField(max_length=16, choices=Surface.choices)

    objects = AccessEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["student", "-at", "-id"], name="access_student_recent"),
            models.Index(fields=["at"], name="access_at"),
        ]
        verbose_name_plural = "access entries"

    def __str__(self) -> str:
        return f"{self.actor_id or 'machine'} read {self.kind} of {self.student_id} at {self.at:%Y-%m-%d %H:%M}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            _refuse()
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()
