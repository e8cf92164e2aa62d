"""The admin's view of LLM metering: read-only, written only by llm.gateway. A scoped user sees
the calls of the students they may see and their own questions (the API's /usage/), not the
anonymised ones."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin
from accounts.selectors import students_visible_to
from llm.models import LLMUsage


@admin.register(LLMUsage)
class LLMUsageAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "purpose",
        "model",
        "student",
        "asker",
        "conversation_id",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "latency_ms",
        "ok",
    )
    list_filter = ("purpose", "ok")
    search_fields = ("model", "student__username")
    list_select_related = ("student", "asker")
    ordering = ("-id",)
    show_full_result_count = False

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(
            Q(student__in=students_visible_to(request.user).values("pk")) | Q(asker=request.user, student__isnull=True)
        )
