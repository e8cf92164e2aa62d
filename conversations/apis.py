"""Thin views: validate input, call one service or selector, serialise the result."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import selectors, services, streaming
from conversations.serializers import ConversationOutput, MessageOutput
from tutor.api import Pagination, StrictCharField
from tutor.db import db_step
from tutor.errors import ApplicationError, error_body
from tutor.throttles import SendRateThrottle


class ConversationListCreateApi(APIView):
    class Input(serializers.Serializer[None]):
        subject = StrictCharField(max_length=200, required=False, allow_blank=True, default="")

    def get(self, request: Request) -> Response:
        qs = selectors.conversation_list(user=request.user, student_id=request.query_params.get("student"))
        paginator = Pagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(ConversationOutput(page, many=True).data)

    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = services.conversation_create(user=request.user, **data.validated_data)
        return Response(ConversationOutput(conversation).data, status=status.HTTP_201_CREATED)


class MessagePagination(Pagination):
    page_size = 50


class ConversationDetailApi(APIView):
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
        paginator = MessagePagination()
        page = paginator.paginate_queryset(selectors.message_list(conversation=conversation), request, view=self)
        body = ConversationOutput(conversation).data
        body["messages"] = paginator.get_paginated_response(MessageOutput(page, many=True).data).data
        return Response(body)


class MessageSendApi(APIView):
    """POST /conversations/{id}/messages/: one chat turn.

    Authentication, throttling and input validation run through DRF in one short synchronous
    step (`prepare`); the turn itself is asynchronous (conversations.streaming), served by
    `message_send` below. With `Accept: text/event-stream` the reply streams as Server-Sent
    Events; otherwise the answer is 201 `{student_message, reply, replayed}` once it is stored.
    """

    throttle_classes = [SendRateThrottle]

    class Input(serializers.Serializer[None]):
        content = StrictCharField(trim_whitespace=False)
        client_message_id = StrictCharField(max_length=100)

        def validate_content(self, value: str) -> str:
            if not value.strip():
                raise serializers.ValidationError("Message content must not be empty.")
            if len(value) > settings.MESSAGE_MAX_CHARS:
                raise serializers.ValidationError(
                    f"Message content must be at most {settings.MESSAGE_MAX_CHARS} characters (got {len(value)})."
                )
            return value

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `Accept: text/event-stream` is answered by `message_send`, not by a DRF renderer; errors
        # found here are JSON whatever the client accepts.
        return super().perform_content_negotiation(request, force=True)

    def prepare(self, request: HttpRequest, conversation_id: int) -> HttpResponseBase | tuple[Any, dict[str, Any]]:
        """The user and the validated input, or the rendered error response."""
        self.args, self.kwargs = (), {"conversation_id": conversation_id}
        drf_request = self.initialize_request(request)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            self.initial(drf_request)
            data = self.Input(data=drf_request.data)
            data.is_valid(raise_exception=True)
            return drf_request.user, dict(data.validated_data)
        except Exception as exc:
            return _rendered(self.finalize_response(drf_request, self.handle_exception(exc)))


def _rendered(response: HttpResponseBase) -> HttpResponseBase:
    if isinstance(response, Response):
        response.render()
    return response


def _error_response(exc: ApplicationError) -> JsonResponse:
    response = JsonResponse(error_body(exc.code, exc.message, exc.details, exc.retry_safe), status=exc.status_code)
    if exc.retry_after:
        response["Retry-After"] = str(exc.retry_after)
    return response


@csrf_exempt  # DRF's SessionAuthentication enforces CSRF itself, in `prepare`.
async def message_send(request: HttpRequest, conversation_id: int) -> HttpResponseBase:
    if request.method != "POST":
        return _error_response(MethodNotAllowed(f'Method "{request.method}" not allowed.'))
    prepared = await db_step(MessageSendApi().prepare, request, conversation_id)
    if isinstance(prepared, HttpResponseBase):
        return prepared
    user, data = prepared
    try:
        feed = await streaming.turn_open(user=user, conversation_id=conversation_id, **data)
    except ApplicationError as exc:
        return _error_response(exc)
    if "text/event-stream" in request.headers.get("Accept", ""):
        response = StreamingHttpResponse(streaming.sse(feed), content_type="text/event-stream; charset=utf-8")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response
    # If this request is cancelled (the client left), the turn's own task still completes it.
    await feed.wait()
    if feed.error is not None:
        return _error_response(feed.error)
    assert feed.student_message is not None and feed.reply is not None
    body = {
        "student_message": MessageOutput(feed.student_message).data,
        "reply": MessageOutput(feed.reply).data,
        "replayed": feed.replayed,
    }
    return JsonResponse(body, status=201)


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"


class ConversationEndApi(APIView):
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = services.conversation_end(user=request.user, conversation_id=conversation_id)
        return Response(ConversationOutput(conversation).data, status=status.HTTP_202_ACCEPTED)
