"""Retention in the Django admin: each school's (and class's own) policy with the school's last
run, and the runs, scoped as the API is (staff see all, a school administrator their schools',
read only: they change policies through the API; anyone else none)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.admin_tenancy import ReadOnlyWhenScoped, TenantScopedAdmin
from retention.models import PERIOD_FIELDS, RetentionPolicy, RetentionRun
from retention.selectors import last_run, policies_visible_to, runs_visible_to


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(ReadOnlyWhenScoped, TenantScopedAdmin):
    list_display = ("__str__", "school", "classroom", *PERIOD_FIELDS, "last_run_counts", "updated_at")
    list_select_related = ("school", "classroom__school")
    raw_id_fields = ("school", "classroom")
    fields = ("school", "classroom", *PERIOD_FIELDS, "updated_by", "updated_at", "last_run_counts")
    readonly_fields = ("updated_by", "updated_at", "last_run_counts")

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=policies_visible_to(request.user).values("pk"))

    @admin.display(description="Last run of the school")
    def last_run_counts(self, policy: RetentionPolicy) -> str:
        school = policy.school or (policy.classroom.school if policy.classroom else None)
        run = last_run(school) if school is not None else None
        if run is None:
            return "-"
        counts = ", ".join(f"{kind} {run.counts.get(kind, 0)}" for kind in RetentionRun.KINDS)
        return f"{run.started_at:%Y-%m-%d %H:%M}{' (dry run)' if run.dry_run else ''}: {counts}"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(RetentionRun)
class RetentionRunAdmin(TenantScopedAdmin):
    """The runs, read only: what each took from each school."""

    list_display = ("school", "started_at", "finished_at", "dry_run", "counts", "files_failed")
    list_filter = ("dry_run",)
    list_select_related = ("school",)
    fields = list_display
    readonly_fields = fields

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=runs_visible_to(request.user).values("pk"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
