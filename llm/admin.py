"""The admin's view of LLM metering: read-only, written only by llm.gateway."""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import ReadOnlyAdmin
from llm.models import LLMUsage


@admin.register(LLMUsage)
class LLMUsageAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "purpose",
        "model",
        "student",
        "conversation_id",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "latency_ms",
        "ok",
    )
    list_filter = ("purpose", "ok")
    search_fields = ("model", "student__username")
    list_select_related = ("student",)
    ordering = ("-id",)
    show_full_result_count = False
