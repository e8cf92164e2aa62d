"""The admin's view of memories: read-only, with their provenance. Memories are written by the
tutor, the summary task and teachers through memory.services, and never deleted; the one change
made here is archiving, through `memory_archive_by_staff`, with a reason. A scoped user sees, and
archives, the memories the API shows them (memory.selectors.memories_visible_to: a teacher the
memories of their classes' students, teacher-only notes included)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.utils import flatten_fieldsets
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin
from accounts.selectors import students_visible_to
from audit.services import Kind
from memory.models import AIMemory, StudentCard
from memory.selectors import memories_visible_to
from memory.services.lifecycle import MEMORY_ARCHIVE_PERMISSION, memory_archive_by_staff


class ArchiveActionForm(ActionForm):
    # The action bar's own form: its fields are posted with the action and the selected rows.
    reason = forms.CharField(required=False, max_length=300, label="Reason (to archive)")


@admin.register(AIMemory)
class AIMemoryAdmin(ReadOnlyAdmin):
    list_display = ("title", "student", "kind", "source", "status", "needs_review", "confidence", "created_at")
    list_filter = ("kind", "status", "source", "visibility", "needs_review")
    search_fields = ("title",)
    list_select_related = ("student",)
    access_kind = Kind.MEMORIES
    fieldsets = (
        (None, {"fields": ("student", "title", "content", "visibility", "status", "archived_reason")}),
        (
            "Provenance",
            {
                "fields": (
                    "kind",
                    "source",
                    "source_conversation",
                    "author",
                    "model",
                    "evidence",
                    "confidence",
                    "needs_review",
                )
            },
        ),
        ("Relations", {"fields": ("superseded_by", "links")}),
        ("What worked", {"fields": ("successes", "failures")}),
        (
            "Bookkeeping",
            {"fields": ("token_count", "recall_count", "last_recalled_at", "revision", "created_at", "updated_at")},
        ),
    )
    readonly_fields = flatten_fieldsets(fieldsets)
    action_form = ArchiveActionForm
    actions = ["archive_selected"]

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=memories_visible_to(request.user).values("pk"))

    def has_archive_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(MEMORY_ARCHIVE_PERMISSION)

    @admin.action(description="Archive selected memories", permissions=["archive"])
    def archive_selected(self, request: HttpRequest, queryset: QuerySet[AIMemory]) -> None:
        # `queryset` is the scoped changelist's selection: a posted id outside the scope is not in it.
        ids = list(queryset.filter(status=AIMemory.Status.ACTIVE).values_list("pk", flat=True))
        try:
            for memory_id in ids:
                memory_archive_by_staff(staff=request.user, memory_id=memory_id, reason=request.POST.get("reason", ""))
        except ValidationError as error:
            self.message_user(request, " ".join(error.messages), messages.ERROR)
            return
        self.message_user(request, f"Archived {len(ids)} memories.", messages.SUCCESS)


@admin.register(StudentCard)
class StudentCardAdmin(ReadOnlyAdmin):
    """Student cards, read-only: teachers and students edit them through the API (memory.card),
    which logs every change. A scoped user sees the cards of the students the API shows them."""

    list_display = ("student", "level", "register", "token_count", "updated_at")
    access_kind = Kind.CARD
    search_fields = ("student__username",)
    list_select_related = ("student",)
    fields = (
        "student",
        "goals",
        "accommodations",
        "interests",
        "level",
        "register",
        "student_editable",
        "token_count",
        "updated_at",
    )
    readonly_fields = fields

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(student__in=students_visible_to(request.user).values("pk"))
