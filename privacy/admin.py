"""The audit of erasures, read-only: an erasure is made by the API or `manage.py erase_student`.
Erasures are staff's alone: a scoped user (a teacher with is_staff) sees none, whatever their
permissions (TenantScoped's default)."""

from __future__ import annotations

from django.contrib import admin

from accounts.admin import ReadOnlyAdmin
from privacy.models import Erasure


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyAdmin):
    list_display = ("reference", "erased_at", "erased_by", "via", "files_pending", "files_failed")
    list_filter = ("via",)
    search_fields = ("reference",)
    fields = ("reference", "erased_at", "erased_by", "via", "reason", "counts", "files_pending", "files_failed")
