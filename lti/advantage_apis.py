"""The LTI services on a class (docs/lti.md): sync its roster from the LMS courses it is linked to
(NRPS), and read the quiz scores sent to them (AGS). A class's teachers, its school's
administrators and staff; anyone else, and any class for a student, gets a 404
(accounts.selectors.classroom_get_overseen)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import classroom_get_overseen
from core.api import Pagination
from core.schema import ErrorEnvelope
from lti import grades, nrps
from lti.models import RosterSync, ScoreSubmission


class SyncOutput(serializers.ModelSerializer[RosterSync]):
    course = serializers.IntegerField(source="context_id", help_text="The LMS course (its LtiContext's id).")
    course_title = serializers.CharField(source="context.title", help_text="The course's title on the LMS.")
    counts = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="created, updated (made active again), ended, unchanged, skipped. Empty until done.",
    )

    class Meta:
        model = RosterSync
        fields = ["id", "course", "course_title", "status", "counts", "detail", "created_at", "finished_at"]
        read_only_fields = fields


class SyncsOutput(serializers.Serializer[None]):
    syncs = SyncOutput(many=True)


class ScoreOutput(serializers.ModelSerializer[ScoreSubmission]):
    quiz = serializers.IntegerField(source="attempt.quiz_id")
    student = serializers.IntegerField(source="attempt.quiz.student_id")
    line_item = serializers.CharField(
        source="line_item.label", allow_null=True, default=None, help_text="The gradebook column, once made."
    )
    course_title = serializers.CharField(source="resource_link.context.title")

    class Meta:
        model = ScoreSubmission
        fields = [
            "id",
            "quiz",
            "student",
            "course_title",
            "line_item",
            "score_given",
            "score_maximum",
            "timestamp",
            "status",
            "attempts",
            "last_error",
            "response_code",
            "created_at",
            "sent_at",
        ]
        read_only_fields = fields
        extra_kwargs = {"response_code": {"help_text": "The platform's last answer to a failed try, if any."}}


_NOT_VISIBLE = OpenApiResponse(ErrorEnvelope, description="No such class, or not one the requester oversees.")


class ClassroomLtiSyncApi(APIView):
    @extend_schema(
        summary="Sync a class's roster from its LMS courses",
        request=None,
        responses={
            202: SyncsOutput,
            404: _NOT_VISIBLE,
            409: OpenApiResponse(ErrorEnvelope, description="The class is linked to no LMS course."),
        },
    )
    def post(self, request: Request, classroom_id: int) -> Response:
        """Queue a sync of each LMS course linked to the class: the course's members (Names and
        Role Provisioning Services) become the class's students and teachers, and a member no
        longer listed has their enrolment ended. Each sync's counts are in GET once done."""
        classroom = classroom_get_overseen(user=request.user, classroom_id=classroom_id)
        syncs = nrps.classroom_syncs_request(classroom=classroom, requested_by=request.user)
        return Response({"syncs": SyncOutput(syncs, many=True).data}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(summary="A class's latest roster syncs", responses={200: SyncsOutput, 404: _NOT_VISIBLE})
    def get(self, request: Request, classroom_id: int) -> Response:
        """The class's 20 latest syncs, the newest first: queued, running, done (with counts)
        or failed (`detail` says why)."""
        classroom = classroom_get_overseen(user=request.user, classroom_id=classroom_id)
        return Response({"syncs": SyncOutput(nrps.classroom_syncs(classroom=classroom), many=True).data})


class ClassroomLtiScoresApi(APIView):
    pagination_class = Pagination

    @extend_schema(
        summary="Quiz scores sent to a class's LMS courses", responses={200: ScoreOutput(many=True), 404: _NOT_VISIBLE}
    )
    def get(self, request: Request, classroom_id: int) -> Response:
        """The scores of the class's students' quizzes launched from its LMS courses, the newest
        first: pending, sending, sent, or failed (`last_error` says why)."""
        classroom = classroom_get_overseen(user=request.user, classroom_id=classroom_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            grades.classroom_scores(user=request.user, classroom=classroom), request, view=self
        )
        return paginator.get_paginated_response(ScoreOutput(page, many=True).data)
