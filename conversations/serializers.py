"""How conversations and messages are shown to clients (the API and the chat turn's events)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from conversations.models import Conversation, Message
from memory.models import AIMemory
from memory.serializers import MemoryOutput


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


def memory_event(memory: AIMemory) -> dict[str, Any]:
    """The data of the chat turn's `memory` event: the note the model just saved."""
    return dict(MemoryOutput(memory).data)
