"""How memories are shown to clients (the API and the chat turn's `memory` event)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from accounts.models import User
from llm.serializers import ModelIdField
from memory.models import AIMemory, SupersessionReview

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
