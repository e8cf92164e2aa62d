"""How memories are shown to clients (the API and the chat turn's `memory` event)."""

from __future__ import annotations

from rest_framework import serializers

from memory.models import AIMemory


class MemoryOutput(serializers.ModelSerializer[AIMemory]):
    class Meta:
        model = AIMemory
        fields = [
            "id",
            "student",
            "kind",
            "title",
            "content",
            "source",
            "source_conversation",
            "author",
            "status",
            "visibility",
            "archived_reason",
            "needs_review",
            "confidence",
            "created_at",
            "updated_at",
        ]
        # Output only: every field is in every answer (required in the schema).
        read_only_fields = fields
