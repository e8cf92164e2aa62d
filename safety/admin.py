"""The admin of safety: flags (read-only, with their log and alerts), and the school's safety
contacts and class resources (staff's).

Flags are written by screening and acted on through the flags API (the teacher page), which
keeps the log; here they are read only, and a flag's log is never changed or deleted. A scoped
user (a teacher with is_staff) sees the flags the API shows them (safety.selectors.flags_visible_to:
their classes' students'). Contacts and class resources are edited by those who see all (staff);
a scoped user sees none (TenantScoped's default).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin
from accounts.admin_tenancy import TenantScoped, TenantScopedAdmin
from audit.services import Kind
from safety.models import ClassroomSafety, Delivery, Flag, FlagAction, SafetyContact
from safety.selectors import flags_visible_to


class _ReadOnlyInline(TenantScoped, admin.TabularInline):
    """Rows of a flag the admin shows and never adds, changes or deletes."""

    extra = 0
    can_delete = False

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(flag__in=flags_visible_to(request.user).values("pk"))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class FlagActionInline(_ReadOnlyInline):
    """The flag's append-only log."""

    model = FlagAction
    fields = ("at", "kind", "actor", "recipient", "note")
    readonly_fields = fields


class DeliveryInline(_ReadOnlyInline):
    model = Delivery
    fields = ("created_at", "channel", "target", "level", "status", "attempts", "last_error", "sent_at")
    readonly_fields = fields


@admin.register(Flag)
class FlagAdmin(ReadOnlyAdmin):
    list_display = ("id", "severity", "category", "source", "status", "student", "created_at")
    access_kind = Kind.FLAGS
    list_filter = ("severity", "category", "source", "status")
    search_fields = ("student__username",)
    list_select_related = ("student",)
    date_hierarchy = "created_at"
    fields = (
        "student",
        "severity",
        "category",
        "categories",
        "source",
        "status",
        "outcome",
        "excerpt",
        "original_text",
        "conversation",
        "message",
        "file",
        "cited_messages",
        "cited_memories",
        "scores",
        "escalation_level",
        "escalate_at",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = [FlagActionInline, DeliveryInline]

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=flags_visible_to(request.user).values("pk"))


@admin.register(SafetyContact)
class SafetyContactAdmin(TenantScopedAdmin):
    list_display = ("name", "email", "webhook_url", "classroom", "order", "concerns_too", "active")
    list_filter = ("active", "concerns_too")
    search_fields = ("name", "email")
    list_select_related = ("classroom",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(ClassroomSafety)
class ClassroomSafetyAdmin(TenantScopedAdmin):
    list_display = ("classroom",)
    list_select_related = ("classroom",)
