"""Reading the access log (audit.models.AccessEntry): who read a student's records.

`access_log_get` is the rule: the school's administrators and staff read a student's log; a
student the requester may not see is a 404 (accounts.selectors.student_get_overseen), and their
teacher, or the student themself, a 403 (a student finds their log in their export, privacy.export).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User
from accounts.selectors import is_staff_account, student_get_overseen
from audit.models import AccessEntry
from core.errors import Forbidden
from memory.card_apis import USER_REF, user_ref


def access_log_get(*, user: Any, student_id: Any) -> QuerySet[AccessEntry]:
    """The access log of a student `user` may read it of, newest first; NotFound or Forbidden."""
    student = student_get_overseen(user=user, student_id=student_id)
    if not (is_staff_account(user) or user.role == User.Role.ADMINISTRATOR):
        raise Forbidden(_("Only the school's administrators read a student's access log."))
    return access_log_of(student)


def access_log_of(student: User) -> QuerySet[AccessEntry]:
    """Every entry of `student`'s log, newest first, with its reader."""
    return AccessEntry.objects.filter(student=student).select_related("actor").order_by("-at", "-id")


class AccessEntryOutput(serializers.ModelSerializer[AccessEntry]):
    """One read of the student's records by someone else."""

    actor = serializers.SerializerMethodField(help_text="Who read; null: a machine client or an account since deleted.")
    record_ids = serializers.ListField(
        child=serializers.JSONField(), help_text=f"The ids of the rows read, at most {AccessEntry.IDS_MAX}."
    )

    class Meta:
        model = AccessEntry
        fields = ["id", "at", "actor", "kind", "record_ids", "surface"]
        read_only_fields = fields

    @extend_schema_field(USER_REF)
    def get_actor(self, entry: AccessEntry) -> dict[str, Any] | None:
        return user_ref(entry.actor)
