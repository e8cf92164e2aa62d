"""How flags are shown to teachers and staff (the flags API and the staff export). Students
never see a flag, so nothing here is ever serialised for one."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User
from conversations.serializers import FileOutput, MessageOutput
from memory.serializers import MemoryOutput
from safety.models import Delivery, Flag, FlagAction


class FlagStudentOutput(serializers.ModelSerializer[User]):
    class Meta:
        model = User
        fields = ["id", "username", "first_name", "last_name"]
        read_only_fields = fields


class FlagActionOutput(serializers.ModelSerializer[FlagAction]):
    """One entry of the flag's append-only log."""

    class Meta:
        model = FlagAction
        fields = ["id", "kind", "actor", "recipient", "note", "at"]
        read_only_fields = fields
        extra_kwargs = {
            "actor": {"help_text": "Who acted (a teacher, staff); null for the system."},
            "recipient": {"help_text": 'Who was notified, and how: "email:...", "webhook:...".'},
        }


class DeliveryOutput(serializers.ModelSerializer[Delivery]):
    """One alert to one recipient, and whether it went out."""

    class Meta:
        model = Delivery
        fields = ["id", "channel", "target", "level", "status", "attempts", "last_error", "created_at", "sent_at"]
        read_only_fields = fields


SAFETY_FLAG_FIELDS = [
    "id",
    "student",
    "conversation",
    "message",
    "file",
    "source",
    "category",
    "categories",
    "severity",
    "excerpt",
    "status",
    "outcome",
    "escalation_level",
    "escalate_at",
    "alert_unrouted",
    "quiet",
    "created_at",
    "updated_at",
]


class FlagOutput(serializers.ModelSerializer[Flag]):
    """A flag in the queue."""

    student = FlagStudentOutput(read_only=True)
    categories = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="Every category found (`category` is the most severe)."
    )
    quiet = serializers.BooleanField(
        read_only=True,
        help_text="A concern that waits in this queue without an alert: the learned screen's own concerns, "
        "less certain than the other findings (docs/safety.md). False once a finding that alerts reaches it.",
    )

    class Meta:
        model = Flag
        fields = SAFETY_FLAG_FIELDS
        read_only_fields = fields
        extra_kwargs = {
            "message": {"help_text": "The message it is about: the student's, or the stored tutor reply."},
            "excerpt": {"help_text": "What the flag is about, shortened."},
            "outcome": {"help_text": "The start of the note that closed it."},
            "escalate_at": {"help_text": "When the next contact is alerted if no one acknowledges; null: none."},
            "alert_unrouted": {
                "help_text": "A crisis that none of the student's teachers and safety contacts could receive: "
                "it went to the school's safety lead or staff instead (docs/safety.md)."
            },
        }


class FlagDetailOutput(FlagOutput):
    """A flag with what it is about and its whole log: the messages around its message in its
    conversation (its own among them, by `message`), its file, the items a pattern cites, the
    tutor's withheld reply, every action and every alert."""

    files = serializers.SerializerMethodField()
    cited_messages = MessageOutput(many=True, read_only=True, help_text="A pattern's evidence: the messages it cites.")
    cited_memories = MemoryOutput(many=True, read_only=True, help_text="A pattern's evidence: the memories it cites.")
    surrounding = serializers.SerializerMethodField()
    scores = serializers.DictField(
        read_only=True, help_text="Each backend's answer: answered, scores, signals, error, ms."
    )
    actions = FlagActionOutput(many=True, read_only=True, help_text="The log, oldest first.")
    deliveries = DeliveryOutput(many=True, read_only=True, help_text="The alerts, oldest first.")

    class Meta(FlagOutput.Meta):
        fields = [
            *SAFETY_FLAG_FIELDS,
            "scores",
            "original_text",
            "files",
            "cited_messages",
            "cited_memories",
            "surrounding",
            "actions",
            "deliveries",
        ]
        read_only_fields = fields
        extra_kwargs = {
            **FlagOutput.Meta.extra_kwargs,
            "original_text": {"help_text": "A withheld tutor reply: what the model wrote (the student saw `message`)."},
        }

    @extend_schema_field(
        MessageOutput(many=True, help_text="The messages around it in its conversation, oldest first.")
    )
    def get_surrounding(self, flag: Flag) -> Any:
        return MessageOutput(self.context.get("surrounding", []), many=True).data

    @extend_schema_field(FileOutput(many=True, help_text="The file it is about: one for a file's flag, else none."))
    def get_files(self, flag: Flag) -> Any:
        return FileOutput([flag.file] if flag.file is not None else [], many=True).data


class ExportFlag(serializers.ModelSerializer[Flag]):
    """A safety flag about the student, with its whole log and its alerts. Only in an export by
    staff or the student's teacher: a student never sees a flag, in their own export neither."""

    categories = serializers.ListField(child=serializers.CharField(), read_only=True)
    scores = serializers.DictField(read_only=True)
    cited_messages: serializers.PrimaryKeyRelatedField[Any] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    cited_memories: serializers.PrimaryKeyRelatedField[Any] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    actions = FlagActionOutput(many=True, read_only=True, help_text="The log, oldest first.")
    deliveries = DeliveryOutput(many=True, read_only=True, help_text="The alerts, oldest first.")

    class Meta:
        model = Flag
        fields = [
            *SAFETY_FLAG_FIELDS,
            "scores",
            "original_text",
            "cited_messages",
            "cited_memories",
            "actions",
            "deliveries",
        ]
        read_only_fields = fields
