"""How memories are shown to clients (the API and the chat turn's `memory` event)."""

from __future__ import annotations

from rest_framework import serializers

from memory.models import AIMemory, SupersessionReview


class MemoryOutput(serializers.ModelSerializer[AIMemory]):
    tier = serializers.ChoiceField(choices=AIMemory.Tier.choices, read_only=True)
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
