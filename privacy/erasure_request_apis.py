"""Guardians' erasure requests (privacy.erasure_requests, docs/privacy.md#guardians)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from accounts.selectors import is_guardian, is_school_manager
from core.api import Pagination, StrictCharField
from core.errors import Forbidden
from privacy import erasure_requests
from privacy.models import ErasureRequest
from privacy.services import REASON_MAX_CHARS


class ErasureRequestOutput(serializers.ModelSerializer[ErasureRequest]):
    erasure_reference = serializers.CharField(
        source="erasure.reference", allow_null=True, default=None, help_text="The erasure it ran, once approved."
    )

    class Meta:
        model = ErasureRequest
        fields = [
            "id",
            "student",
            "school",
            "requested_by",
            "requested_at",
            "reason",
            "status",
            "decided_by",
            "decided_at",
            "decision_reason",
            "erasure_reference",
        ]
        read_only_fields = fields
        extra_kwargs = {"student": {"help_text": "Empty once the student is erased."}}


class ReasonInput(serializers.Serializer[None]):
    reason = StrictCharField(max_length=REASON_MAX_CHARS)


class StudentErasureRequestApi(APIView):
    @extend_schema(
        summary="Request a child's erasure (a guardian)", request=ReasonInput, responses={201: ErasureRequestOutput}
    )
    def post(self, request: Request, student_id: int) -> Response:
        """A guardian asks the child's school to erase the child's data; the school decides."""
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        filed = erasure_requests.erasure_request_file(
            guardian=request.user, student_id=student_id, reason=data.validated_data["reason"]
        )
        return Response(ErasureRequestOutput(filed).data, status=201)


class ErasureRequestListApi(APIView):
    pagination_class = Pagination

    @extend_schema(summary="List erasure requests", responses=ErasureRequestOutput(many=True))
    def get(self, request: Request) -> Response:
        """A guardian's own requests; a school administrator's schools' (staff: all), newest
        first. Anyone else: 403."""
        user: Any = request.user
        if not (is_guardian(user) or is_school_manager(user)):
            raise Forbidden(_("Erasure requests are guardians' and school administrators'."))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            erasure_requests.erasure_requests_visible_to(user).select_related("erasure"), request, view=self
        )
        return paginator.get_paginated_response(ErasureRequestOutput(page, many=True).data)


class ErasureRequestApproveApi(APIView):
    @extend_schema(summary="Approve an erasure request: erase the child", request=None, responses=ErasureRequestOutput)
    def post(self, request: Request, request_id: int) -> Response:
        """The child's school administrator (or staff) approves: the child is erased at once, as
        by a legal erasure (via `guardian_request`). Cannot be undone."""
        assert isinstance(request.user, User)
        decided = erasure_requests.erasure_request_approve(actor=request.user, request_id=request_id)
        return Response(ErasureRequestOutput(decided).data)


class ErasureRequestRefuseApi(APIView):
    @extend_schema(summary="Refuse an erasure request", request=ReasonInput, responses=ErasureRequestOutput)
    def post(self, request: Request, request_id: int) -> Response:
        """The child's school administrator (or staff) refuses, with a reason (required)."""
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        assert isinstance(request.user, User)
        decided = erasure_requests.erasure_request_refuse(
            actor=request.user, request_id=request_id, reason=data.validated_data["reason"]
        )
        return Response(ErasureRequestOutput(decided).data)
