"""How an account is shown in a student's export (privacy.export, docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User


class ExportClassroom(serializers.Serializer[None]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    teachers = serializers.ListField(
        child=serializers.IntegerField(), help_text="Its teachers' user ids, primary first."
    )
    active = serializers.BooleanField(help_text="false: the enrolment ended (the roster dropped it).")
    enrolled_at = serializers.DateTimeField()


class ExportStudent(serializers.ModelSerializer[User]):
    """The profile: no password, no token."""

    email = serializers.CharField(read_only=True, help_text="Empty when none was given.")
    classrooms = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = [
            "id",
            "username",
            "first_name",
            "last_name",
            "email",
            "role",
            "language",
            "is_active",
            "memory_consent",
            "date_joined",
            "last_login",
            "classrooms",
        ]
        read_only_fields = fields

    @extend_schema_field(ExportClassroom(many=True))
    def get_classrooms(self, student: User) -> list[dict[str, Any]]:
        rows = student.enrollments.select_related("classroom").order_by("created_at", "id")
        return [
            {
                "id": e.classroom_id,
                "name": e.classroom.name,
                "teachers": list(
                    e.classroom.teacher_enrollments.order_by("-primary", "pk").values_list("teacher_id", flat=True)
                ),
                "active": e.active,
                "enrolled_at": serializers.DateTimeField().to_representation(e.created_at),
            }
            for e in rows
        ]
