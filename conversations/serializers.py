"""How conversations and messages are shown to clients (the API and the chat turn's events)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from conversations import screening
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from conversations.screening import SafetyNoticeData
from core.schema import ErrorEnvelope
from learning.serializers import QuizOutput
from llm.serializers import ModelIdField
from llm.tools import event_types
from memory.serializers import MemoryOutput


class MessageOutput(serializers.ModelSerializer[Message]):
    model = ModelIdField()

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
        # Output only: every field is in every answer (required in the schema).
        read_only_fields = fields


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
        # Output only: every field is in every answer (required in the schema).
        read_only_fields = fields


class MessagePage(serializers.Serializer[None]):
    """A page of a conversation's messages, newest first (a chat screen opens on the latest)."""

    results = MessageOutput(many=True)
    next_before = serializers.IntegerField(
        allow_null=True, help_text="The `before` of the next (older) page; null on the oldest page."
    )


class ConversationDetailOutput(ConversationOutput):
    """A conversation with its latest messages: the first page of GET .../messages/, given
    as the `messages` context."""

    messages = serializers.SerializerMethodField()

    class Meta(ConversationOutput.Meta):
        fields = [*ConversationOutput.Meta.fields, "messages"]

    @extend_schema_field(MessagePage)
    def get_messages(self, conversation: Conversation) -> dict[str, Any]:
        return dict(self.context["messages"])


class TurnEventOutput(serializers.Serializer[None]):
    """One event of a turn's tools or screening, as the stream sends it."""

    event = serializers.CharField(help_text="The event's name, as in the stream (`memory`, `quiz`, `safety`, ...).")
    # A declared field is taken out of the class (SerializerMetaclass): `.data` stays the property.
    data = serializers.DictField(help_text="The event's data, as in the stream (see TurnEvent).")  # type: ignore[assignment]


class TurnOutput(serializers.Serializer[None]):
    """The answer to a send without `Accept: text/event-stream`, once the reply is stored."""

    student_message = MessageOutput()
    reply = MessageOutput()
    replayed = serializers.BooleanField(help_text="True when this is a retry answered from the stored reply.")
    events = TurnEventOutput(
        many=True,
        help_text="Every event of the turn's tools and screening (a plug-in's too), in the order the stream sent "
        "them: the events a streamed turn sends between `message` and `done`, but `delta`.",
    )
    quizzes = QuizOutput(
        many=True,
        help_text="Deprecated, kept one release: the `quiz` events' data (in `events`). The quizzes the tutor "
        "created in this turn (questions, no answers).",
    )
    safety = SafetyNoticeData(
        many=True,
        help_text="Deprecated, kept one release: the `safety` events' data (in `events`). At most one: the "
        "student may be in crisis, show its message and resources prominently.",
    )


# The Server-Sent Events of a streamed turn, one serializer per event for the schema: each is
# sent as `event: <name>` and `data: <JSON>`.
class DeltaData(serializers.Serializer[None]):
    content = serializers.CharField()


class DoneData(MessageOutput):
    replayed = serializers.BooleanField()

    class Meta(MessageOutput.Meta):
        fields = [*MessageOutput.Meta.fields, "replayed"]


def _event(name: str, data: Any, doc: str) -> type[serializers.Serializer[None]]:
    attrs = {
        "event": serializers.ChoiceField(choices=[name]),
        "data": data,
        "__doc__": doc,
    }
    camel = "".join(part.capitalize() for part in name.split("_"))
    return type(f"{camel}Event", (serializers.Serializer,), attrs)


MessageEvent = _event("message", MessageOutput(), "The stored student message (first).")
DeltaEvent = _event("delta", DeltaData(), "A chunk of the reply as the model writes it.")
DoneEvent = _event("done", DoneData(), "The stored reply (last, on success).")
ErrorEvent = _event("error", ErrorEnvelope(), "The turn failed (last); see retry_safe.")


def turn_events() -> dict[str, serializers.Serializer[Any] | type[serializers.Serializer[Any]]]:
    """The turn's events by name, for the schema's TurnEvent (discriminated by `event`): the
    message, the deltas, the events the registered tools declare (llm.tools), done and error.
    Called when the schema is generated, the apps' tools registered."""
    tools = {t.name: _event(t.name, t.serializer, t.description) for t in [*event_types(), *screening.event_types()]}
    return {"message": MessageEvent, "delta": DeltaEvent, **tools, "done": DoneEvent, "error": ErrorEvent}


class FileOutput(serializers.ModelSerializer[ConversationFile]):
    """A file attached to a conversation: its metadata only (the content is never served)."""

    reason = serializers.SerializerMethodField(help_text="Why an unreadable file could not be read; null otherwise.")

    class Meta:
        model = ConversationFile
        fields = ["id", "conversation", "name", "content_type", "size", "status", "pages", "reason", "created_at"]
        # Output only: every field is in every answer (required in the schema).
        read_only_fields = fields
        extra_kwargs = {
            "content_type": {"help_text": "Found from the content, not the name: application/pdf, text/plain..."},
            "size": {"help_text": "In bytes."},
            "pages": {"help_text": "A PDF's page count, once read; null for text and images."},
        }

    @extend_schema_field(serializers.ChoiceField(choices=ConversationFile.Reason.choices, allow_null=True))
    def get_reason(self, file: ConversationFile) -> str | None:
        return file.reason or None


class ReplyMemoryOutput(serializers.ModelSerializer[ReplyMemory]):
    memory = MemoryOutput(read_only=True)
    signals = serializers.DictField(
        read_only=True,
        help_text="Why it was in the prompt: tier (a fact or an approach, shown first), latest (among the "
        "newest memories), and for a recalled memory its fused score, lexical_rank, semantic_rank and related.",
    )

    class Meta:
        model = ReplyMemory
        fields = ["rank", "score", "signals", "memory"]
        read_only_fields = fields


# --- A student's export (privacy.export, docs/privacy.md) ----------------------------------------


class ExportFile(serializers.ModelSerializer[ConversationFile]):
    """A file's metadata only: its bytes and extracted text stay out of the export."""

    class Meta:
        model = ConversationFile
        fields = ["id", "name", "content_type", "size", "status", "created_at"]
        read_only_fields = fields


class ExportCheckpoint(serializers.ModelSerializer[ContextCheckpoint]):
    """A summary of the conversation's older messages written by context compression."""

    class Meta:
        model = ContextCheckpoint
        fields = ["id", "covers_through_seq", "covered_messages", "summary", "created_at"]
        read_only_fields = fields


class ExportConversationHead(serializers.ModelSerializer[Conversation]):
    """A conversation's own fields; the export writes its messages, files and checkpoints after."""

    class Meta:
        model = Conversation
        fields = [
            "id",
            "subject",
            "status",
            "created_at",
            "last_activity_at",
            "ended_at",
            "message_count",
            "summary_status",
        ]
        read_only_fields = fields


class ExportConversation(ExportConversationHead):
    """For the schema: a conversation as the document holds it."""

    messages = MessageOutput(many=True, read_only=True, help_text="Oldest first.")
    files = ExportFile(many=True, read_only=True)
    checkpoints = ExportCheckpoint(many=True, read_only=True)

    class Meta(ExportConversationHead.Meta):
        fields = [*ExportConversationHead.Meta.fields, "messages", "files", "checkpoints"]
        read_only_fields = fields


class ExportReplyMemory(serializers.ModelSerializer[ReplyMemory]):
    """One memory that was in the prompt of one tutor reply (the access log)."""

    signals = serializers.DictField(read_only=True)

    class Meta:
        model = ReplyMemory
        fields = ["message", "memory", "rank", "score", "signals"]
        read_only_fields = fields
