"""Questions about a student or a class (POST, JSON or Server-Sent Events), and the log of those
asked about a student. The POSTs are asynchronous views (`student_ask`, `classroom_ask`, the
streamed answer of core.streamed): DRF authenticates, throttles and validates in one database step
with the scope and budget checks (insights.services.ask_target), then insights.asking answers
without holding a connection."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record_rows
from core.api import Pagination
from core.feeds import EventFeed
from core.schema import ErrorEnvelope
from core.streamed import StreamedAnswerApi
from core.throttles import SendRateThrottle
from insights import asking, selectors, services
from insights.serializers import ASK_EVENTS, AskAnswerOutput, AskInput


class AskRateThrottle(SendRateThrottle):
    """Questions per user, at the chat's rate (THROTTLE_SEND_RATE), counted apart from sends."""

    scope = "ask"


def _schema(who: str, summary: str) -> Any:
    return extend_schema(
        summary=summary,
        request=AskInput,
        responses={
            (200, "application/json"): AskAnswerOutput,
            (200, "text/event-stream"): OpenApiResponse(
                PolymorphicProxySerializer(
                    component_name="AskEvent", serializers=ASK_EVENTS, resource_type_field_name="event"
                ),
                description="With `Accept: text/event-stream`: Server-Sent Events, each `event: <name>` and "
                "`data: <JSON>`: delta*, then answer or error.",
            ),
            404: OpenApiResponse(ErrorEnvelope, description=f"Not {who} the requester may ask about."),
            429: OpenApiResponse(ErrorEnvelope, description="Throttled, or a budget is used up (`budget_exceeded`)."),
            502: OpenApiResponse(ErrorEnvelope, description="The model gave an unusable answer; see retry_safe."),
        },
    )


class _AskApi(StreamedAnswerApi):
    throttle_classes = [AskRateThrottle]
    target_kwarg = ""

    def checked(self, request: Request, **kwargs: Any) -> services.Target:
        """The question's target (scope and budget checked)."""
        pk = kwargs[self.target_kwarg]
        data = AskInput(data=request.data)
        data.is_valid(raise_exception=True)
        question = data.validated_data["question"].strip()
        if self.target_kwarg == "student_id":
            return services.ask_target(user=request.user, question=question, student_id=pk)
        return services.ask_target(user=request.user, question=question, classroom_id=pk)

    async def start(self, checked: Any, **kwargs: Any) -> EventFeed:
        return await asking.ask_open(checked)

    def answer(self, feed: EventFeed) -> tuple[dict[str, Any], int]:
        assert isinstance(feed, asking.AskFeed) and feed.log is not None
        return feed.events[-1][1], 200


class StudentAskApi(_AskApi):
    target_kwarg = "student_id"

    @_schema("a student", "Ask a question about a student")
    async def post(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        """Ask about a student in plain words: the answer, in the asker's language, cites its
        evidence (memories of every tier, quizzes, mastery, tasks, files, the card); refs the
        prompt never showed are dropped, claims without a ref are marked. For the student's
        teachers and staff, and the student about themself (never from teacher-only notes)."""
        return await super().post(request, **kwargs)


class ClassroomAskApi(_AskApi):
    target_kwarg = "classroom_id"

    @_schema("a class", "Ask a question about a class")
    async def post(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        """Ask about a class ("who still confuses perimeter and area?"): a shortlist of its
        students from mastery and recall, then one answer naming the students with their
        evidence. For the class's teacher and staff."""
        return await super().post(request, **kwargs)


student_ask = StudentAskApi.as_async_view()
classroom_ask = ClassroomAskApi.as_async_view()


class StudentAsksApi(APIView):
    pagination_class = Pagination

    @extend_schema(summary="Past questions about a student", responses=AskAnswerOutput(many=True))
    def get(self, request: Request, student_id: int) -> Response:
        """The questions asked about a student and their answers, newest first: all of them for
        the student's teachers and staff, their own for the student."""
        asks = selectors.ask_list(user=request.user, student_id=student_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(asks, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.INSIGHTS, surface=Surface.API, rows=page)
        return paginator.get_paginated_response(AskAnswerOutput(page, many=True).data)
