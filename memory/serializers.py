"""How memories are shown to clients (the API and the chat turn's `memory` event)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User
from llm.serializers import ModelIdField
from memory.models import AIMemory, CardChange, StudentCard, SupersessionReview

# Why a memory waits for a teacher: the only memories marked `needs_review` are the summaries
# written from the conversation itself when the model could not write one.
REVIEW_REASON = _(
    "No automatic summary could be written for this conversation: this note was written from the "
    "conversation itself. Check it, then confirm or correct it."
)


class MemoryOutput(serializers.ModelSerializer[AIMemory]):
    """A memory of a student. Its `review_reason` is shown to teachers and staff only."""

    # `review_reason` needs the `request` of a reader who is not a student in the context;
    # without one it is "" (fail-closed).

    tier = serializers.ChoiceField(choices=AIMemory.Tier.choices, read_only=True)
    model = ModelIdField()
    review_reason = serializers.SerializerMethodField(
        help_text="Why a teacher should review this memory (needs_review), for teachers and staff; "
        "empty for a student, and when it needs no review."
    )
    evidence = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    supersedes: serializers.PrimaryKeyRelatedField[AIMemory] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True, help_text="The memories this one replaced (superseded or merged into it)."
    )

    class Meta:
        model = AIMemory
        fields = [
            "id",
            "student",
            "kind",
            "tier",
            "title",
            "content",
            "source",
            "source_conversation",
            "author",
            "status",
            "visibility",
            "archived_reason",
            "superseded_by",
            "supersedes",
            "needs_review",
            "review_reason",
            "confidence",
            "evidence",
            "model",
            "successes",
            "failures",
            "recall_count",
            "last_recalled_at",
            "created_at",
            "updated_at",
        ]
        # Output only: every field is in every answer (required in the schema).
        read_only_fields = fields

    def get_review_reason(self, memory: AIMemory) -> str:
        request = self.context.get("request")
        reader = getattr(request, "user", None)
        if not memory.needs_review or reader is None or getattr(reader, "role", User.Role.STUDENT) == User.Role.STUDENT:
            return ""
        return str(REVIEW_REASON)


class SupersessionReviewOutput(serializers.ModelSerializer[SupersessionReview]):
    older = MemoryOutput(read_only=True)
    newer = MemoryOutput(read_only=True)

    class Meta:
        model = SupersessionReview
        fields = [
            "id",
            "student",
            "older",
            "newer",
            "confidence",
            "reason",
            "model",
            "status",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = fields


# --- A student's export (privacy.export, docs/privacy.md) ----------------------------------------


def _visible_ids(ids: list[int], context: dict[str, Any]) -> list[int]:
    hidden: set[int] = context.get("hidden", set())
    return [pk for pk in ids if pk not in hidden]


class ExportMemory(MemoryOutput):
    """A memory as the export holds it: the API's fields (MemoryOutput) but the student and the
    review reason, with its provenance and its supersession chain both ways, and its links.

    The context gives `supersedes` ({memory id: [ids it replaced]}), `links` ({id: [ids]}) and
    `hidden` (the ids of teacher-only notes left out of a student's own export, which no id here
    names either)."""

    # The ids are read through the context, which leaves out the hidden ones.
    evidence = serializers.SerializerMethodField(help_text="Ids of the memories it was drawn from.")  # type: ignore[assignment]
    superseded_by = serializers.SerializerMethodField(help_text="The newer memory that replaced this one.")
    supersedes = serializers.SerializerMethodField(help_text="Ids of the memories this one replaced.")  # type: ignore[assignment]
    links = serializers.SerializerMethodField()

    class Meta(MemoryOutput.Meta):
        fields = [
            "id",
            "kind",
            "tier",
            "title",
            "content",
            "status",
            "visibility",
            "archived_reason",
            "source",
            "source_ref",
            "source_conversation",
            "author",
            "evidence",
            "confidence",
            "needs_review",
            "model",
            "superseded_by",
            "supersedes",
            "links",
            "successes",
            "failures",
            "recall_count",
            "last_recalled_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_evidence(self, memory: AIMemory) -> list[int]:
        ids = [int(pk) for pk in memory.evidence if isinstance(pk, int) and not isinstance(pk, bool)]
        return _visible_ids(ids, self.context)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_superseded_by(self, memory: AIMemory) -> int | None:
        pk = memory.superseded_by_id
        return pk if pk is not None and _visible_ids([pk], self.context) else None

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_supersedes(self, memory: AIMemory) -> list[int]:
        return _visible_ids(self.context.get("supersedes", {}).get(memory.pk, []), self.context)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_links(self, memory: AIMemory) -> list[int]:
        return _visible_ids(self.context.get("links", {}).get(memory.pk, []), self.context)


class ExportSupersessionReview(serializers.ModelSerializer[SupersessionReview]):
    # Plain text here: the enum's schema name is the memory app's to choose (its review API).
    status = serializers.CharField(read_only=True, help_text="open, applied or dismissed.")

    class Meta:
        model = SupersessionReview
        fields = [
            "id",
            "older",
            "newer",
            "confidence",
            "reason",
            "model",
            "status",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = fields


class ExportCard(serializers.ModelSerializer[StudentCard]):
    """The student card (docs/card.md) as the tutor's prompt shows it; empty, `updated_at`
    null, if none was written."""

    updated_at = serializers.DateTimeField(allow_null=True, read_only=True)
    goals = serializers.ListField(child=serializers.CharField(), read_only=True)
    accommodations = serializers.ListField(child=serializers.CharField(), read_only=True)
    interests = serializers.ListField(child=serializers.CharField(), read_only=True)
    student_editable = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = StudentCard
        fields = [
            "goals",
            "accommodations",
            "interests",
            "level",
            "register",
            "student_editable",
            "token_count",
            "updated_at",
        ]
        read_only_fields = fields


class ExportCardChange(serializers.ModelSerializer[CardChange]):
    """One change of the card's log. `memory` is the fact that proposed it (null in the
    student's own export if it is a teacher-only note since)."""

    memory = serializers.SerializerMethodField()

    class Meta:
        model = CardChange
        fields = [
            "id",
            "field",
            "op",
            "value",
            "status",
            "source",
            "actor",
            "confidence",
            "memory",
            "reason",
            "created_at",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_memory(self, change: CardChange) -> int | None:
        pk = change.memory_id
        return None if pk is None or pk in self.context.get("hidden", set()) else pk
