"""The flags API, for teachers (their students' flags) and staff (every flag): the queue, a
flag with its context and log, acknowledging and resolving. Students never see a flag: the
list is a 403 for them, and any flag a 404."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record_rows
from core.api import MAX_ID, Pagination, StrictCharField, query_params
from core.schema import ErrorEnvelope
from safety import selectors, services
from safety.models import Flag
from safety.serializers import FlagDetailOutput, FlagOutput
from safety.types import Severity


class FlagFilters(serializers.Serializer[None]):
    status = serializers.ChoiceField(choices=Flag.Status.choices, required=False)
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    student = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="Only this student's (one the requester may see)."
    )
    classroom = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="Only its students' flags; a class the requester does not teach gives none.",
    )
    ordering = serializers.ChoiceField(
        choices=[("newest", "Newest first"), ("severity", "Open first, then the most severe, then the newest")],
        required=False,
        default="newest",
    )


_FOR_TEACHERS = OpenApiResponse(ErrorEnvelope, description="A student: students never see flags.")
_NOT_VISIBLE = OpenApiResponse(ErrorEnvelope, description="No such flag, or not one the requester may see.")
_CLOSED = OpenApiResponse(ErrorEnvelope, description="The flag's status does not allow it (see details.status).")


class FlagListApi(APIView):
    pagination_class = Pagination

    @extend_schema(
        summary="List safety flags",
        parameters=[FlagFilters],
        responses={200: FlagOutput(many=True), 403: _FOR_TEACHERS},
    )
    def get(self, request: Request) -> Response:
        """The safety flags of the requester's students (a teacher's classes; every student for
        staff), newest first, or the queue's order with `?ordering=severity`."""
        filters = FlagFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        qs = selectors.flag_list(
            user=request.user,
            status=data.get("status"),
            severity=data.get("severity"),
            student_id=data.get("student"),
            classroom_id=data.get("classroom"),
            ordering=data["ordering"],
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.FLAGS, surface=Surface.API, rows=page)
        return paginator.get_paginated_response(FlagOutput(page, many=True).data)


class FlagDetailApi(APIView):
    @extend_schema(summary="Get a safety flag", responses={200: FlagDetailOutput, 404: _NOT_VISIBLE})
    def get(self, request: Request, flag_id: int) -> Response:
        """A flag with what it is about (its message or file, a pattern's cited items, the
        messages around it, a withheld reply's original text) and its log and alerts."""
        return _detail(request, flag_id)


def _detail(request: Request, flag_id: int) -> Response:
    flag = selectors.flag_detail(user=request.user, flag_id=flag_id)
    access_record_rows(actor=request.user, kind=Kind.FLAGS, surface=Surface.API, rows=[flag])
    surrounding = selectors.flag_surrounding_messages(flag=flag)
    return Response(FlagDetailOutput(flag, context={"surrounding": surrounding}).data)


class FlagAcknowledgeApi(APIView):
    class Input(serializers.Serializer[None]):
        note = StrictCharField(max_length=services.NOTE_MAX_CHARS, required=False, allow_blank=True, default="")

    @extend_schema(
        summary="Acknowledge a safety flag",
        request=Input,
        responses={200: FlagDetailOutput, 404: _NOT_VISIBLE, 409: _CLOSED},
    )
    def post(self, request: Request, flag_id: int) -> Response:
        """Acknowledge the flag: someone is on it. Its escalation stops; the log keeps who, when
        and the note. An acknowledged or closed flag is a 409."""
        selectors.flag_get_visible(user=request.user, flag_id=flag_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        flag = services.flag_acknowledge(user=request.user, flag_id=flag_id, note=data.validated_data["note"])
        return _detail(request, flag.pk)


class FlagResolveApi(APIView):
    class Input(serializers.Serializer[None]):
        note = StrictCharField(max_length=services.NOTE_MAX_CHARS, help_text="What was done (kept in the log).")
        outcome = serializers.ChoiceField(
            choices=[(s.value, s.label) for s in services.OUTCOMES],
            help_text="resolved: dealt with; false_positive: nothing was wrong.",
        )

    @extend_schema(
        summary="Resolve a safety flag",
        request=Input,
        responses={200: FlagDetailOutput, 404: _NOT_VISIBLE, 409: _CLOSED},
    )
    def post(self, request: Request, flag_id: int) -> Response:
        """Close the flag as resolved or a false positive, saying what was done. Its escalation
        stops; the log keeps who, when and the note. A closed flag is a 409."""
        selectors.flag_get_visible(user=request.user, flag_id=flag_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        flag = services.flag_resolve(user=request.user, flag_id=flag_id, **data.validated_data)
        return _detail(request, flag.pk)
