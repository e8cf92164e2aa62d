"""Thin views: validate input, call one service or selector, serialise the result."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import files, screening, selectors, services, streaming
from conversations.serializers import (
    ConversationDetailOutput,
    ConversationOutput,
    FileOutput,
    MessageOutput,
    MessagePage,
    ReplyMemoryOutput,
    TurnOutput,
    turn_events,
)
from core.api import MAX_ID, Pagination, StrictCharField, query_params
from core.db import db_step
from core.errors import ApplicationError, error_body
from core.feeds import sse
from core.schema import ErrorEnvelope
from core.throttles import SendRateThrottle


class ConversationFilters(serializers.Serializer[None]):
    student = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="Only this student's (a teacher's students)."
    )


class ConversationListCreateApi(APIView):
    pagination_class = Pagination

    class Input(serializers.Serializer[None]):
        subject = StrictCharField(max_length=200, required=False, allow_blank=True, default="")

    @extend_schema(
        summary="List conversations", parameters=[ConversationFilters], responses=ConversationOutput(many=True)
    )
    def get(self, request: Request) -> Response:
        filters = ConversationFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        qs = selectors.conversation_list(user=request.user, student_id=filters.validated_data.get("student"))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(ConversationOutput(page, many=True).data)

    @extend_schema(summary="Start a conversation", request=Input, responses={201: ConversationOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = services.conversation_create(user=request.user, **data.validated_data)
        return Response(ConversationOutput(conversation).data, status=status.HTTP_201_CREATED)


class MessagePageInput(serializers.Serializer[None]):
    before = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="A message id: the page of messages older than it."
    )
    limit = serializers.IntegerField(required=False, min_value=1, max_value=100, default=50)


def _message_page(request: Request, conversation: Any) -> dict[str, Any]:
    params = MessagePageInput(data=query_params(request))
    params.is_valid(raise_exception=True)
    page = selectors.message_page(
        conversation=conversation, before=params.validated_data.get("before"), limit=params.validated_data["limit"]
    )
    return {"results": MessageOutput(page["results"], many=True).data, "next_before": page["next_before"]}


class ConversationDetailApi(APIView):
    @extend_schema(
        summary="Get a conversation and its latest messages",
        parameters=[MessagePageInput],
        responses=ConversationDetailOutput,
    )
    def get(self, request: Request, conversation_id: int) -> Response:
        """The conversation and its latest messages, newest first (`?limit=`, default 50)."""
        conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
        messages = _message_page(request, conversation)
        return Response(ConversationDetailOutput(conversation, context={"messages": messages}).data)


class MessagesApi(APIView):
    """/conversations/{id}/messages/: read the messages (GET) or send one, a chat turn (POST).

    Served by `message_send` below, an asynchronous view: GET goes through this class's
    `dispatch` in one short database step; POST authenticates, throttles and validates through
    DRF (`prepare`) in the database step that claims the turn, then runs the turn asynchronously
    (conversations.streaming).
    """

    throttle_classes = [SendRateThrottle]

    class Input(serializers.Serializer[None]):
        content = StrictCharField(trim_whitespace=False)
        client_message_id = StrictCharField(
            max_length=100, help_text="Chosen by the client, unique per message: a retry with it sends nothing twice."
        )

        def validate_content(self, value: str) -> str:
            if not value.strip():
                raise serializers.ValidationError(_("Message content must not be empty."))
            if len(value) > settings.MESSAGE_MAX_CHARS:
                raise serializers.ValidationError(
                    _("Message content must be at most %(limit)s characters (got %(length)s).")
                    % {"limit": settings.MESSAGE_MAX_CHARS, "length": len(value)}
                )
            return value

    def get_throttles(self) -> list[Any]:
        return super().get_throttles() if self.request.method == "POST" else []

    @extend_schema(summary="List a conversation's messages", parameters=[MessagePageInput], responses=MessagePage)
    def get(self, request: Request, conversation_id: int) -> Response:
        """Messages newest first, for chat screens: the first page is the latest `limit` (default
        50); the next, older page is `?before=<next_before>`, until `next_before` is null."""
        conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
        return Response(_message_page(request, conversation))

    @extend_schema(
        summary="Send a message and get the tutor's reply",
        request=Input,
        responses={
            (201, "application/json"): TurnOutput,
            (200, "text/event-stream"): OpenApiResponse(
                PolymorphicProxySerializer(
                    component_name="TurnEvent",
                    serializers=turn_events,
                    resource_type_field_name="event",
                ),
                description=(
                    "With `Accept: text/event-stream`: 200 and the turn as Server-Sent Events, each "
                    "`event: <name>` and `data: <JSON>`: message, then delta*, memory* and quiz*, then done or error."
                ),
            ),
            502: OpenApiResponse(ErrorEnvelope, description="The model failed to answer; see retry_safe."),
            504: OpenApiResponse(ErrorEnvelope, description="The model took too long; see retry_safe."),
        },
    )
    async def post(self, request: HttpRequest, conversation_id: int) -> HttpResponseBase:
        """Send a student message and get the tutor's reply (a chat turn).

        The student message is stored before the model is called. A retry with the same
        `client_message_id` never calls the model twice: it replays the stored reply
        (`replayed: true`), or follows the turn still answering."""
        try:
            # The request's checks and the turn's claim: one database step.
            opened = await streaming.turn_open_checked(
                lambda: self.prepare(request, conversation_id), conversation_id=conversation_id
            )
        except ApplicationError as exc:
            return _error_response(exc)
        if isinstance(opened, HttpResponseBase):
            return opened
        feed = opened
        if "text/event-stream" in request.headers.get("Accept", ""):
            response = StreamingHttpResponse(sse(feed), content_type="text/event-stream; charset=utf-8")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
            return response
        # If this request is cancelled (the client left), the turn's own task still completes it.
        await feed.wait()
        if feed.error is not None:
            return _error_response(feed.error)
        assert feed.student_message is not None and feed.reply is not None
        body = {
            "student_message": streaming.message_data(feed.student_message),
            "reply": streaming.message_data(feed.reply),
            "replayed": feed.replayed,
            "quizzes": feed.tool_data("quiz"),
            "safety": feed.tool_data(screening.SAFETY),
        }
        return JsonResponse(body, status=201)

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `Accept: text/event-stream` is answered by `post`, not by a DRF renderer; errors
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

    def read(self, request: HttpRequest, conversation_id: int) -> HttpResponseBase:
        """GET, dispatched by DRF (authentication, the scoped lookup, errors) in one step."""
        return _rendered(self.dispatch(request, conversation_id=conversation_id))


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
    if request.method == "POST":
        return await MessagesApi().post(request, conversation_id)
    if request.method in ("GET", "HEAD"):
        return await db_step(MessagesApi().read, request, conversation_id)
    response = _error_response(MethodNotAllowed(_('Method "%(method)s" not allowed.') % {"method": request.method}))
    response["Allow"] = "GET, HEAD, POST"  # RFC 9110: a 405 names the methods the URL supports
    return response


# The schema generator documents this view through its class.
message_send.cls = MessagesApi  # type: ignore[attr-defined]
message_send.initkwargs = {}  # type: ignore[attr-defined]


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"


class ConversationEndApi(APIView):
    @extend_schema(summary="End a conversation", request=None, responses={202: ConversationOutput})
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = services.conversation_end(user=request.user, conversation_id=conversation_id)
        return Response(ConversationOutput(conversation).data, status=status.HTTP_202_ACCEPTED)


class ReplyMemoriesApi(APIView):
    @extend_schema(summary="Memories a reply was written with", responses=ReplyMemoryOutput(many=True))
    def get(self, request: Request, conversation_id: int, message_id: int) -> Response:
        """What the tutor knew when it wrote this reply: the memories of its prompt, in the
        order the prompt showed them, with their scores and signals (the access log, written
        with the reply and never changed). A student's message, or a reply without memories,
        gives an empty list."""
        rows = selectors.reply_memories(user=request.user, conversation_id=conversation_id, message_id=message_id)
        return Response(ReplyMemoryOutput(rows, many=True).data)


@extend_schema_field({"type": "string", "format": "binary", "minLength": 1})
class UploadField(serializers.FileField):
    """A file of at least one byte (an empty one is the service's 400 `file_empty`)."""


class ConversationFilesApi(APIView):
    """/conversations/{id}/files/: the files of a conversation (GET) or attach one (POST)."""

    # Multipart, not the project's JSON default. A file over FILES_MAX_BYTES is dropped as it
    # streams in (files.FileSizeLimitHandler), before Django's handlers keep it whole.
    parser_classes = [MultiPartParser, FormParser]

    class Input(serializers.Serializer[None]):
        file = UploadField(
            allow_empty_file=True,
            help_text="PDF, plain text, Markdown or an image (PNG, JPEG, WebP, GIF), at most FILES_MAX_BYTES. "
            "The type is found from the content, whatever its size: a file that is none of these (a single "
            "byte that is not text, say) is a 400 `file_type_not_allowed`; an empty one a 400 `file_empty`.",
        )

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        # Before anything reads the body (a session's CSRF check parses it too).
        request.upload_handlers = [files.FileSizeLimitHandler(request), *request.upload_handlers]
        return super().initialize_request(request, *args, **kwargs)

    @extend_schema(summary="List a conversation's files", responses=FileOutput(many=True))
    def get(self, request: Request, conversation_id: int) -> Response:
        """The conversation's files, oldest first, with their extraction status and page count."""
        return Response(FileOutput(files.file_list(user=request.user, conversation_id=conversation_id), many=True).data)

    @extend_schema(
        summary="Share a file in a conversation",
        request={"multipart/form-data": Input},
        responses={
            201: FileOutput,
            400: OpenApiResponse(
                ErrorEnvelope,
                description="`file_too_large` (over FILES_MAX_BYTES), `file_type_not_allowed` (the content is "
                "not an allowed type), `file_empty`, or `invalid` (no `file` field).",
            ),
            409: OpenApiResponse(
                ErrorEnvelope, description="The conversation has ended (`conflict`) or is full (`file_limit_reached`)."
            ),
            415: OpenApiResponse(ErrorEnvelope, description="The body is not multipart/form-data."),
        },
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        """Attach a file (multipart field `file`), by the conversation's student. The type is
        found from the content; its text is extracted in the background (`status` pending, then
        ready or unreadable with a `reason`)."""
        conversation = files.file_upload_conversation(user=request.user, conversation_id=conversation_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        stored = files.file_upload(conversation=conversation, upload=data.validated_data["file"])
        return Response(FileOutput(stored).data, status=status.HTTP_201_CREATED)
