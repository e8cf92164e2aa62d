"""A student's guardians (docs/privacy.md#guardians): listed, linked and unlinked by a school
administrator of the child's school or staff (accounts.guardians)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.guardians import guardian_link_add, guardian_link_end, guardian_links, guardian_student_get
from core.api import MAX_ID


class GuardianLinkOutput(serializers.Serializer[Any]):
    guardian = serializers.IntegerField(source="guardian_id")
    username = serializers.CharField(source="guardian.username")
    given_name = serializers.CharField(source="guardian.first_name")
    family_name = serializers.CharField(source="guardian.last_name")
    active = serializers.BooleanField(help_text="false: the link ended; the guardian reads nothing of the child.")
    external_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class StudentGuardiansApi(APIView):
    class Input(serializers.Serializer[None]):
        guardian = serializers.IntegerField(
            min_value=1, max_value=MAX_ID, help_text="A guardian's id (GET /api/v1/users/?role=guardian)."
        )

    @extend_schema(summary="List a student's guardians", responses=GuardianLinkOutput(many=True))
    def get(self, request: Request, student_id: int) -> Response:
        """The student's guardian links, ended ones too, oldest first."""
        student = guardian_student_get(actor=request.user, student_id=student_id)
        return Response(GuardianLinkOutput(guardian_links(student=student), many=True).data)

    @extend_schema(
        summary="Link a guardian to a student",
        request=Input,
        responses={200: GuardianLinkOutput, 201: GuardianLinkOutput},
    )
    def post(self, request: Request, student_id: int) -> Response:
        """Link a guardian (created, 201), or make an ended link active again (200)."""
        student = guardian_student_get(actor=request.user, student_id=student_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        link, created = guardian_link_add(
            actor=request.user, student=student, guardian_id=data.validated_data["guardian"]
        )
        return Response(GuardianLinkOutput(link).data, status=201 if created else 200)


class StudentGuardianDetailApi(APIView):
    @extend_schema(
        summary="Unlink a guardian from a student",
        description="The link is kept, inactive: the guardian gets 404 on the child from now on.",
        responses={204: None},
    )
    def delete(self, request: Request, student_id: int, user_id: int) -> Response:
        student = guardian_student_get(actor=request.user, student_id=student_id)
        guardian_link_end(student=student, guardian_id=user_id)
        return Response(status=204)
