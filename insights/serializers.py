"""How questions and answers are read and shown (the Ask contract, docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import StrictCharField
from core.schema import ErrorEnvelope
from insights.items import KINDS
from insights.models import AskLog

QUESTION_MAX_CHARS = 1000


class AskInput(serializers.Serializer[None]):
    # Not trimmed before the length check: the limit is on the text as sent (the schema's maxLength).
    question = StrictCharField(
        max_length=QUESTION_MAX_CHARS,
        trim_whitespace=False,
        help_text=f"The question, in plain words (1 to {QUESTION_MAX_CHARS} characters).",
        error_messages={
            "blank": _("Ask a question."),
            "max_length": _("A question has at most {max_length} characters."),
        },
    )

    def validate_question(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError(_("Ask a question."))
        return value


@extend_schema_field({"oneOf": [{"type": "integer"}, {"type": "string"}]})
class RecordId(serializers.Field):
    """A record's id: a number, or a skill's key."""

    def to_representation(self, value: Any) -> Any:
        return value


class ClaimOutput(serializers.Serializer[None]):
    text = serializers.CharField(help_text="One sentence of the answer, without its refs.")
    refs = serializers.ListField(child=serializers.CharField(), help_text="The refs it cites, all shown in the prompt.")
    supported = serializers.BooleanField(help_text="False when it cites nothing.")


class CitationOutput(serializers.Serializer[None]):
    ref = serializers.CharField(help_text="As the answer writes it: m12, quiz 4, skill fractions, card...")
    kind = serializers.ChoiceField(choices=list(KINDS))
    id = RecordId(help_text="The record's id (a memory, quiz, task, file, card), or a skill's key.")
    student = serializers.IntegerField(help_text="Whose record it is.")
    title = serializers.CharField()
    excerpt = serializers.CharField(help_text="The start of what the prompt showed of it.")


class NamedStudentOutput(serializers.Serializer[None]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    refs = serializers.ListField(child=serializers.CharField(), help_text="The refs cited of this student's evidence.")


class AskAnswerOutput(serializers.ModelSerializer[AskLog]):
    """A question and its checked answer."""

    answer = serializers.CharField(help_text="The text, with refs in brackets ([m12] [quiz 4]); only refs shown.")
    claims = ClaimOutput(many=True, help_text="The answer's sentences, each with its refs.")
    citations = CitationOutput(many=True, help_text="Each ref the answer cites, described from the evidence shown.")
    dropped = serializers.ListField(
        child=serializers.CharField(), help_text="Refs the model wrote that the prompt never showed: removed."
    )
    insufficient = serializers.BooleanField(help_text="The evidence does not answer the question; the answer says so.")
    students = NamedStudentOutput(many=True, help_text="A class's answer: the students it names; [] for a student.")

    class Meta:
        model = AskLog
        fields = [
            "id",
            "question",
            "language",
            "answer",
            "claims",
            "citations",
            "dropped",
            "insufficient",
            "students",
            "created_at",
        ]
        read_only_fields = fields


_answer_output: AskAnswerOutput | None = None


def answer_data(log: AskLog) -> dict[str, Any]:
    """`AskAnswerOutput(log).data`, from one serializer built once."""
    global _answer_output
    if _answer_output is None:
        _answer_output = AskAnswerOutput()
    return dict(_answer_output.to_representation(log))


# The Server-Sent Events of a streamed answer, one serializer per event for the schema.
class AskDeltaData(serializers.Serializer[None]):
    text = serializers.CharField()


def _event(name: str, data: Any, doc: str) -> type[serializers.Serializer[None]]:
    # The label sets the choice apart from the chat turn's event of the same name (its enum).
    attrs = {"event": serializers.ChoiceField(choices=[(name, f"{name} (ask)")]), "data": data, "__doc__": doc}
    return type(f"Ask{name.capitalize()}Event", (serializers.Serializer,), attrs)


AskDeltaEvent = _event("delta", AskDeltaData(), "A piece of the answer as the model writes it (unchecked).")
AskAnswerEvent = _event("answer", AskAnswerOutput(), "The stored answer, its citations checked (last, on success).")
AskErrorEvent = _event("error", ErrorEnvelope(), "The model failed; nothing but its metering was stored (last).")
ASK_EVENTS: dict[str, serializers.Serializer[Any] | type[serializers.Serializer[Any]]] = {
    "delta": AskDeltaEvent,
    "answer": AskAnswerEvent,
    "error": AskErrorEvent,
}


class ExportAsk(AskAnswerOutput):
    """A question asked about the student and its checked answer (insights), with who asked and
    the memories its prompt showed, in prompt order (its access log)."""

    memories = serializers.SerializerMethodField()

    class Meta(AskAnswerOutput.Meta):
        model = AskLog
        fields = [*AskAnswerOutput.Meta.fields, "asker", "model", "memories"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_memories(self, log: AskLog) -> list[int]:
        return [access.memory_id for access in log.memory_accesses.all()]
