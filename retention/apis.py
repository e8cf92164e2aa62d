"""The retention API (docs/api.md#retention): a school's policy at /schools/{id}/retention/,
a class's own at /classrooms/{id}/retention/, with the school's last run. Staff and the
school's administrators; anyone else is refused (403), a school or class outside theirs is 404."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.schema import ErrorEnvelope
from retention import edits, selectors
from retention.models import MAX_DAYS, PERIOD_FIELDS, RetentionRun

_HELP = {
    "transcript_days": "Days after a conversation ends before its messages and files are erased.",
    "memory_days": "Days after the student's last activity before their memories are archived.",
    "memory_grace_days": "Days after the policy archived a memory before it is erased.",
    "flag_days": "Days after a safety flag is resolved before it is erased.",
    "inactive_days": "Days after a student is deactivated before they are erased.",
}


def _period(help_text: str, **kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=0, max_value=MAX_DAYS, allow_null=True, help_text=f"{help_text} null: kept.", **kwargs
    )


class PeriodsInput(serializers.Serializer[None]):
    transcript_days = _period(_HELP["transcript_days"], required=False, default=None)
    memory_days = _period(_HELP["memory_days"], required=False, default=None)
    memory_grace_days = _period(_HELP["memory_grace_days"], required=False, default=None)
    flag_days = _period(_HELP["flag_days"], required=False, default=None)
    inactive_days = _period(_HELP["inactive_days"], required=False, default=None)


# The school's latest run, or null: inline, as OpenAPI 3.0 cannot make a referenced component nullable.
RUN_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "started_at": {"type": "string", "format": "date-time"},
        "finished_at": {"type": "string", "format": "date-time", "nullable": True},
        "dry_run": {"type": "boolean"},
        "counts": {
            "type": "object",
            "description": "How many went (or would go, in a dry run), per kind.",
            "properties": {kind: {"type": "integer"} for kind in RetentionRun.KINDS},
            "required": list(RetentionRun.KINDS),
        },
        "files_failed": {"type": "integer", "description": "Stored files that could not be deleted."},
    },
    "required": ["started_at", "finished_at", "dry_run", "counts", "files_failed"],
}


class PolicyOutput(serializers.Serializer[selectors.PolicyView]):
    school = serializers.IntegerField(source="school.pk")
    classroom = serializers.IntegerField(source="classroom.pk", allow_null=True, default=None)
    own = serializers.SerializerMethodField(
        help_text="True: these periods are this school's (or class's) own; false: inherited (from the "
        "class's school, or the school's district), or none set (every period null: everything kept)."
    )
    transcript_days = _period(_HELP["transcript_days"], source="periods.transcript_days")
    memory_days = _period(_HELP["memory_days"], source="periods.memory_days")
    memory_grace_days = _period(_HELP["memory_grace_days"], source="periods.memory_grace_days")
    flag_days = _period(_HELP["flag_days"], source="periods.flag_days")
    inactive_days = _period(_HELP["inactive_days"], source="periods.inactive_days")
    updated_at = serializers.DateTimeField(source="own.updated_at", allow_null=True, default=None)
    last_run = serializers.SerializerMethodField(help_text="The school's latest run (dry or not); null: none yet.")

    def get_own(self, view: selectors.PolicyView) -> bool:
        return view.own is not None

    @extend_schema_field(RUN_SCHEMA)
    def get_last_run(self, view: selectors.PolicyView) -> dict[str, Any] | None:
        run = view.last_run
        if run is None:
            return None
        return {
            "started_at": serializers.DateTimeField().to_representation(run.started_at),
            "finished_at": serializers.DateTimeField().to_representation(run.finished_at) if run.finished_at else None,
            "dry_run": run.dry_run,
            "counts": {kind: run.counts.get(kind, 0) for kind in RetentionRun.KINDS},
            "files_failed": run.files_failed,
        }


_MANAGERS = OpenApiResponse(ErrorEnvelope, description="Neither staff nor a school administrator.")


def _periods(request: Request) -> dict[str, int | None]:
    data = PeriodsInput(data=request.data)
    data.is_valid(raise_exception=True)
    return {name: data.validated_data[name] for name in PERIOD_FIELDS}


class SchoolRetentionApi(APIView):
    _missing = OpenApiResponse(ErrorEnvelope, description="No such school, or not one the requester administers.")

    @extend_schema(
        summary="Get a school's retention policy", responses={200: PolicyOutput, 403: _MANAGERS, 404: _missing}
    )
    def get(self, request: Request, school_id: int) -> Response:
        """The school's periods (its own, else its district's; all null: everything kept) and its last run."""
        school = selectors.school_get_managed(user=request.user, school_id=school_id)
        return Response(PolicyOutput(selectors.school_policy_view(school)).data)

    @extend_schema(
        summary="Set a school's retention policy",
        request=PeriodsInput,
        responses={200: PolicyOutput, 400: OpenApiResponse(ErrorEnvelope), 403: _MANAGERS, 404: _missing},
    )
    def put(self, request: Request, school_id: int) -> Response:
        """Set every period of the school's policy (one left out is null: kept). Its classes
        without a policy of their own follow it from the next run."""
        view = edits.school_policy_set(user=request.user, school_id=school_id, periods=_periods(request))
        return Response(PolicyOutput(view).data)


class ClassroomRetentionApi(APIView):
    _missing = OpenApiResponse(ErrorEnvelope, description="No such class, or not one the requester sees.")
    _teachers = OpenApiResponse(
        ErrorEnvelope, description="The class's teachers: its policy is its school's managers'."
    )

    @extend_schema(
        summary="Get a class's retention policy", responses={200: PolicyOutput, 403: _teachers, 404: _missing}
    )
    def get(self, request: Request, classroom_id: int) -> Response:
        """The class's own periods, or its school's (`own` false), and its school's last run."""
        classroom = selectors.classroom_get_managed(user=request.user, classroom_id=classroom_id)
        return Response(PolicyOutput(selectors.classroom_policy_view(classroom)).data)

    @extend_schema(
        summary="Set a class's own retention policy",
        request=PeriodsInput,
        responses={200: PolicyOutput, 400: OpenApiResponse(ErrorEnvelope), 403: _teachers, 404: _missing},
    )
    def put(self, request: Request, classroom_id: int) -> Response:
        """Give the class its own periods (one left out is null: kept), which replace its school's for its students."""
        view = edits.classroom_policy_set(user=request.user, classroom_id=classroom_id, periods=_periods(request))
        return Response(PolicyOutput(view).data)

    @extend_schema(
        summary="Remove a class's own retention policy",
        responses={200: PolicyOutput, 403: _teachers, 404: _missing},
    )
    def delete(self, request: Request, classroom_id: int) -> Response:
        """The class follows its school's policy again; the answer shows it."""
        view = edits.classroom_policy_clear(user=request.user, classroom_id=classroom_id)
        return Response(PolicyOutput(view).data)
