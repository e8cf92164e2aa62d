"""The admin of accounts: users, classrooms and their enrollments, and API tokens.

Every admin of the project is scoped like the API through accounts.admin_tenancy.TenantScoped:
a user who does not see all (a teacher with is_staff) sees the students of their classes and
those classes only, and no API token.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.db.models.fields.related import RelatedField
from django.http import HttpRequest
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.admin_tenancy import TenantScoped, TenantScopedAdmin, admin_sees_all
from accounts.models import Classroom, Enrollment, User
from accounts.selectors import students_visible_to


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
    account and changes no one's role, staff flag, groups or permissions."""

    list_display = ("username", "role", "language", "is_demo", "is_staff")
    list_filter = ("role", "is_demo", "is_staff", "groups")
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Tutor", {"fields": ("role", "language", "is_demo")}))

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=students_visible_to(request.user).values("pk"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return admin_sees_all(request.user) and super().has_add_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = tuple(super().get_readonly_fields(request, obj))
        if admin_sees_all(request.user):
            return fields
        return fields + tuple(f for f in PRIVILEGE_FIELDS if f not in fields)


def _classrooms_visible_to(user: Any) -> QuerySet[Classroom]:
    """The classrooms a teacher teaches; none for anyone else (as the API's classroom endpoints)."""
    if getattr(user, "role", None) != User.Role.TEACHER:
        return Classroom.objects.none()
    return Classroom.objects.filter(teacher=user)


class EnrollmentInline(TenantScoped, admin.TabularInline):
    model = Enrollment
    extra = 0
    raw_id_fields = ("student",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(
            classroom__in=_classrooms_visible_to(request.user).values("pk"),
            student__in=students_visible_to(request.user).values("pk"),
        )


@admin.register(Classroom)
class ClassroomAdmin(TenantScopedAdmin):
    """Classrooms. A scoped teacher sees and names only their own as the teacher, and enrols
    only students they already teach."""

    list_display = ("name", "teacher")
    list_select_related = ("teacher",)
    raw_id_fields = ("teacher",)
    inlines = [EnrollmentInline]

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=_classrooms_visible_to(request.user).values("pk"))

    def tenant_choices(self, request: HttpRequest, db_field: RelatedField[Any, Any]) -> QuerySet[Any] | None:
        if db_field.name != "teacher":
            return None
        if not isinstance(request.user, User):
            return User.objects.none()
        return User.objects.filter(pk=request.user.pk, role=User.Role.TEACHER)


# DRF's token admin lists every user's API token: it is registered again, scoped. A token is a
# credential: no scoped user sees one (TenantScoped's default), their own included.
admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class ScopedTokenAdmin(TenantScoped, TokenAdmin):
    """API tokens, for those who see all only."""
