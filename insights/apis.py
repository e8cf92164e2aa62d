"""Questions about a student or a class (POST, JSON or Server-Sent Events), and the log of those
asked about a student. The POSTs are asynchronous views (`student_ask`, `classroom_ask`): DRF
authenticates, throttles and validates in one database step with the scope and budget checks
(insights.services.ask_target), then insights.asking answers without holding a connection."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import Pagination
from core.db import db_step
from core.errors import ApplicationError, error_body
from core.feeds import sse
from core.schema import ErrorEnvelope
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


class _AskApi(APIView):
    throttle_classes = [AskRateThrottle]
    target_kwarg = ""

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `Accept: text/event-stream` is answered by `post`, not by a DRF renderer.
        return super().perform_content_negotiation(request, force=True)

    def prepare(self, request: HttpRequest, pk: int) -> HttpResponseBase | services.Target:
        """The question's target (scope and budget checked), or the rendered error response."""
        self.args, self.kwargs = (), {self.target_kwarg: pk}
        drf_request = self.initialize_request(request)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            self.initial(drf_request)
            data = AskInput(data=drf_request.data)
            data.is_valid(raise_exception=True)
            question = data.validated_data["question"].strip()
            if self.target_kwarg == "student_id":
                return services.ask_target(user=drf_request.user, question=question, student_id=pk)
            return services.ask_target(user=drf_request.user, question=question, classroom_id=pk)
        except Exception as exc:
            response = self.finalize_response(drf_request, self.handle_exception(exc))
            if isinstance(response, Response):
                response.render()
            return response

    async def post(self, request: HttpRequest, pk: int) -> HttpResponseBase:
        prepared = await db_step(self.prepare, request, pk)
        if isinstance(prepared, HttpResponseBase):
            return prepared
        try:
            feed = await asking.ask_open(prepared)
        except ApplicationError as exc:
            return _error_response(exc)
        if "text/event-stream" in request.headers.get("Accept", ""):
            response = StreamingHttpResponse(sse(feed), content_type="text/event-stream; charset=utf-8")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
            return response
        # If this request is cancelled (the client left), the answer's own task still stores it.
        await feed.wait()
        if feed.error is not None:
            return _error_response(feed.error)
        assert feed.log is not None
        return JsonResponse(feed.events[-1][1], status=200)


class StudentAskApi(_AskApi):
    target_kwarg = "student_id"

    @_schema("a student", "Ask a question about a student")
    async def post(self, request: HttpRequest, pk: int) -> HttpResponseBase:
        """Ask about a student in plain words: the answer, in the asker's language, cites its
        evidence (memories of every tier, quizzes, mastery, tasks, files, the card); refs the
        prompt never showed are dropped, claims without a ref are marked. For the student's
        teachers and staff, and the student about themself (never from teacher-only notes)."""
        return await super().post(request, pk)


class ClassroomAskApi(_AskApi):
    target_kwarg = "classroom_id"

    @_schema("a class", "Ask a question about a class")
    async def post(self, request: HttpRequest, pk: int) -> HttpResponseBase:
        """Ask about a class ("who still confuses perimeter and area?"): a shortlist of its
        students from mastery and recall, then one answer naming the students with their
        evidence. For the class's teacher and staff."""
        return await super().post(request, pk)


def _error_response(exc: ApplicationError) -> JsonResponse:
    response = JsonResponse(error_body(exc.code, exc.message, exc.details, exc.retry_safe), status=exc.status_code)
    if exc.retry_after:
        response["Retry-After"] = str(exc.retry_after)
    return response


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"


def _async_view(api: type[_AskApi]) -> Any:
    @csrf_exempt  # DRF's SessionAuthentication enforces CSRF itself, in `prepare`.
    async def view(request: HttpRequest, **kwargs: int) -> HttpResponseBase:
        if request.method == "POST":
            return await api().post(request, kwargs[api.target_kwarg])
        response = _error_response(MethodNotAllowed(_('Method "%(method)s" not allowed.') % {"method": request.method}))
        response["Allow"] = "POST"
        return response

    # The schema generator documents this view through its class.
    view.cls = api  # type: ignore[attr-defined]
    view.initkwargs = {}  # type: ignore[attr-defined]
    return view


student_ask = _async_view(StudentAskApi)
classroom_ask = _async_view(ClassroomAskApi)


class StudentAsksApi(APIView):
    pagination_class = Pagination

    @extend_schema(summary="Past questions about a student", responses=AskAnswerOutput(many=True))
    def get(self, request: Request, student_id: int) -> Response:
        """The questions asked about a student and their answers, newest first: all of them for
        the student's teachers and staff, their own for the student."""
        asks = selectors.ask_list(user=request.user, student_id=student_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(asks, request, view=self)
        return paginator.get_paginated_response(AskAnswerOutput(page, many=True).data)
