"""Thin views: validate input, call one service or selector, serialise the result."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations import selectors, services
from conversations.models import Conversation, Message
from tutor.api import Pagination, StrictCharField


class MessageOutput(serializers.ModelSerializer[Message]):
    class Meta:
        model = Message
        fields = [
            "id",
            "seq",
            "role",
            "content",
            "client_message_id",
            "reply_to",
            "token_count",
            "prompt_tokens",
            "completion_tokens",
            "model",
            "created_at",
        ]


class ConversationOutput(serializers.ModelSerializer[Conversation]):
    class Meta:
        model = Conversation
        fields = [
            "id",
            "student",
            "subject",
            "status",
            "created_at",
            "last_activity_at",
            "ended_at",
            "message_count",
            "summary_status",
        ]


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

    def post(self, request: Request, conversation_id: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        turn = services.message_send(user=request.user, conversation_id=conversation_id, **data.validated_data)
        return Response(
            {
                "student_message": MessageOutput(turn.student_message).data,
                "reply": MessageOutput(turn.reply).data,
                "replayed": not turn.created,
            },
            status=status.HTTP_201_CREATED,
        )


class ConversationEndApi(APIView):
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = services.conversation_end(user=request.user, conversation_id=conversation_id)
        return Response(ConversationOutput(conversation).data, status=status.HTTP_202_ACCEPTED)
