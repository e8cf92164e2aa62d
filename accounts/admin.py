"""The admin of accounts: schools, users, classrooms and their enrollments, and API tokens.

Every admin of the project is scoped like the API through accounts.admin_tenancy.TenantScoped:
a user who does not see all (a teacher or a school administrator with is_staff) sees the
students and classes the API shows them, the schools they administer, and no API token.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.admin_tenancy import ReadOnlyWhenScoped, TenantScoped, TenantScopedAdmin, admin_sees_all
from accounts.models import Classroom, Enrollment, School, TeacherEnrollment, User
from accounts.selectors import classrooms_visible_to, schools_administered_by, students_visible_to
from audit.services import Kind


class ReadOnlyAdmin(TenantScopedAdmin):
    """For rows that only services write (messages, metering...): viewable with the view
    permission, added, changed and deleted by no one, superusers included."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# What makes an account powerful: only those who see all may change them.
PRIVILEGE_FIELDS = ("role", "is_staff", "is_superuser", "groups", "user_permissions")


@admin.register(User)
class TutorUserAdmin(TenantScoped, UserAdmin):
    """Users. A scoped user sees the students of their classes (the API's /students/), adds no
    account and changes no one's role, staff flag, groups or permissions. Consent to memory is
    shown, never changed here (PUT /api/v1/students/{id}/consent/)."""

    list_display = ("username", "role", "school", "language", "memory_consent", "is_active", "is_demo", "is_staff")
    list_filter = ("role", "is_active", "memory_consent", "is_demo", "is_staff", "groups")
    list_select_related = ("school",)
    raw_id_fields = ("school",)
    search_fields = ("username", "first_name", "last_name", "email", "external_id")
    fieldsets = (
        *(UserAdmin.fieldsets or ()),
        (
            "Tutor",
            {"fields": ("role", "school", "external_id", "language", "memory_consent", "is_demo", "deactivated_at")},
        ),
    )

    access_kind = Kind.PROFILE

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=students_visible_to(request.user).values("pk"))

    def access_student(self, obj: Any) -> int | None:
        """A student's own row is their record; a teacher's or staff member's is not."""
        return int(obj.pk) if obj.role == User.Role.STUDENT else None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin_sees_all(request.user) and super().has_add_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # Consent to memory is set through the API only (privacy.consent archives and records);
        # the deactivation date by deactivating (save_model).
        fields = (*super().get_readonly_fields(request, obj), "memory_consent", "deactivated_at")
        if admin_sees_all(request.user):
            return fields
        return fields + tuple(f for f in PRIVILEGE_FIELDS if f not in fields)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        # The date a retention policy counts from (accounts.services.users_set_active stamps it too).
        if "is_active" in form.changed_data:
            obj.deactivated_at = None if obj.is_active else timezone.now()
        super().save_model(request, obj, form, change)


@admin.register(School)
class SchoolAdmin(ReadOnlyWhenScoped, TenantScopedAdmin):
    """Schools and districts. A scoped user sees the ones they administer, and changes none."""

    list_display = ("name", "kind", "parent", "external_id", "active", "guardians_may_set_consent")
    list_filter = ("kind", "active")
    search_fields = ("name", "external_id")
    raw_id_fields = ("parent",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=schools_administered_by(request.user).values("pk"))


class EnrollmentInline(TenantScoped, admin.TabularInline):
    model = Enrollment
    extra = 0
    raw_id_fields = ("student",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(
            classroom__in=classrooms_visible_to(request.user).values("pk"),
            student__in=students_visible_to(request.user).values("pk"),
        )


class TeacherEnrollmentInline(ReadOnlyWhenScoped, TenantScoped, admin.TabularInline):
    """A class's teachers. A scoped user sees them and changes none (the provisioning API and
    the roster import do)."""

    model = TeacherEnrollment
    extra = 0
    raw_id_fields = ("teacher",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(classroom__in=classrooms_visible_to(request.user).values("pk"))


@admin.register(Classroom)
class ClassroomAdmin(TenantScopedAdmin):
    """Classrooms. A scoped user sees the classes the API shows them (a teacher's own, a school
    administrator's school's), enrols only students they already see, and moves no class to
    another school."""

    list_display = ("name", "school", "active")
    list_filter = ("active",)
    list_select_related = ("school",)
    search_fields = ("name", "external_id")
    raw_id_fields = ("school",)
    inlines = [TeacherEnrollmentInline, EnrollmentInline]

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=classrooms_visible_to(request.user).values("pk"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin_sees_all(request.user) and super().has_add_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields if admin_sees_all(request.user) else (*fields, "school")


# DRF's token admin lists every user's API token: it is registered again, scoped. A token is a
# credential: no scoped user sees one (TenantScoped's default), their own included.
admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class ScopedTokenAdmin(TenantScoped, TokenAdmin):
    """API tokens, for those who see all only."""
