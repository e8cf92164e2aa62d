"""Thin views: validate input, call one service or selector, serialise the result."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record, access_record_rows
from conversations import files, screening, selectors, services
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
from conversations.turn import drive
from conversations.turn.feed import TurnFeed, message_data
from core.api import MAX_ID, Pagination, StrictCharField, query_params
from core.feeds import EventFeed
from core.schema import ErrorEnvelope
from core.streamed import StreamedAnswerApi
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
        page = paginator.paginate_queryset(qs, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.CONVERSATIONS, surface=Surface.API, rows=page)
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


def _message_page(request: Request, conversation: Any, kind: str) -> dict[str, Any]:
    """A page of the conversation's messages, its reading recorded as `kind` (the conversation's
    id for the conversation, the messages' for a page of messages)."""
    params = MessagePageInput(data=query_params(request))
    params.is_valid(raise_exception=True)
    page = selectors.message_page(
        conversation=conversation, before=params.validated_data.get("before"), limit=params.validated_data["limit"]
    )
    ids = [conversation.pk] if kind == Kind.CONVERSATIONS else [message.pk for message in page["results"]]
    access_record(
        actor=request.user, kind=kind, surface=Surface.API, reads=[(conversation.student_id, pk) for pk in ids]
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
        messages = _message_page(request, conversation, Kind.CONVERSATIONS)
        return Response(ConversationDetailOutput(conversation, context={"messages": messages}).data)


class MessagesApi(StreamedAnswerApi):
    """/conversations/{id}/messages/: read the messages (GET) or send one, a chat turn (POST).

    Served by `message_send`, an asynchronous view (core.streamed): GET goes through DRF's
    `dispatch` in one short database step; POST authenticates, throttles and validates through
    DRF (`prepare`) in the database step that claims the turn, then runs the turn asynchronously
    (conversations.turn).
    """

    throttle_classes = [SendRateThrottle]
    sync_methods = ("GET", "HEAD")

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
        return Response(_message_page(request, conversation, Kind.MESSAGES))

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
    async def post(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        """Send a student message and get the tutor's reply (a chat turn).

        The student message is stored before the model is called. A retry with the same
        `client_message_id` never calls the model twice: it replays the stored reply
        (`replayed: true`), or follows the turn still answering."""
        return await super().post(request, **kwargs)

    def checked(self, request: Request, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """The user and the validated message."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        return request.user, dict(data.validated_data)

    async def open(self, request: HttpRequest, **kwargs: Any) -> EventFeed | HttpResponseBase:
        # The request's checks and the turn's claim: one database step.
        conversation_id = kwargs["conversation_id"]
        return await drive.turn_open_checked(lambda: self.prepare(request, **kwargs), conversation_id=conversation_id)

    def answer(self, feed: EventFeed) -> tuple[dict[str, Any], int]:
        assert isinstance(feed, TurnFeed) and feed.student_message is not None and feed.reply is not None
        body = {
            "student_message": message_data(feed.student_message),
            "reply": message_data(feed.reply),
            "replayed": feed.replayed,
            "events": feed.extra_events(),
            # Kept one release for the clients that read them (docs/api.md): `events` has them.
            "quizzes": feed.tool_data("quiz"),
            "safety": feed.tool_data(screening.SAFETY),
        }
        return body, 201


message_send = MessagesApi.as_async_view()


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
        rows = list(selectors.reply_memories(user=request.user, conversation_id=conversation_id, message_id=message_id))
        reads = [(row.memory.student_id, row.memory_id) for row in rows]
        access_record(actor=request.user, kind=Kind.MEMORIES, surface=Surface.API, reads=reads)
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
        rows = list(files.file_list(user=request.user, conversation_id=conversation_id))
        reads = [(row.conversation.student_id, row.pk) for row in rows]
        access_record(actor=request.user, kind=Kind.FILES, surface=Surface.API, reads=reads)
        return Response(FileOutput(rows, many=True).data)

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
