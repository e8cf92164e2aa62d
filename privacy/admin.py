"""The audit of erasures and the access log, read-only: an erasure is made by the API or
`manage.py erase_student`, an access entry by audit.services. Both are staff's alone: a scoped
user (a teacher with is_staff) sees none, whatever their permissions (TenantScoped's default).
The record of consent to memory, read-only too: a school administrator sees their students' (as
through the API), a teacher none."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin import ReadOnlyAdmin
from accounts.models import User
from accounts.selectors import students_visible_to
from audit.models import AccessEntry
from privacy.models import ConsentChange, Erasure


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyAdmin):
    list_display = ("reference", "erased_at", "erased_by", "via", "files_pending", "files_failed")
    list_filter = ("via",)
    search_fields = ("reference",)
    fields = ("reference", "erased_at", "erased_by", "via", "reason", "counts", "files_pending", "files_failed")


@admin.register(ConsentChange)
class ConsentChangeAdmin(ReadOnlyAdmin):
    list_display = ("student", "memory_consent", "changed_by", "changed_at", "archived")
    list_filter = ("memory_consent",)
    list_select_related = ("student", "changed_by")
    search_fields = ("student__username", "reason")
    fields = ("student", "memory_consent", "changed_by", "changed_at", "reason", "archived")

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if getattr(request.user, "role", None) != User.Role.ADMINISTRATOR:
            return queryset.none()
        return queryset.filter(student__in=students_visible_to(request.user).values("pk"))


@admin.register(AccessEntry)
class AccessEntryAdmin(ReadOnlyAdmin):
    """The access log, read-only and staff's alone in the admin (a school's administrators read
    their students' through the API): entries are appended by audit.services.access_record and
    leave only through the period's purge."""

    list_display = ("at", "student", "actor", "kind", "surface")
    list_filter = ("kind", "surface")
    list_select_related = ("student", "actor")
    search_fields = ("student__username", "actor__username")
    fields = ("at", "student", "actor", "kind", "record_ids", "surface")
    show_full_result_count = False
