from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest

from accounts.models import Classroom, Enrollment, User


class ReadOnlyAdmin(admin.ModelAdmin):
    """For rows that only services write (messages, metering...): viewable with the view
    permission, added, changed and deleted by no one, superusers included."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(User)
class TutorUserAdmin(UserAdmin):
    list_display = ("username", "role", "language", "is_demo", "is_staff")
    list_filter = ("role", "is_demo", "is_staff", "groups")
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Tutor", {"fields": ("role", "language", "is_demo")}))


class EnrollmentInline(admin.TabularInline):
    model = Enrollment
    extra = 0
    raw_id_fields = ("student",)


@admin.register(Classroom)
class ClassroomAdmin(admin.ModelAdmin):
    list_display = ("name", "teacher")
    list_select_related = ("teacher",)
    raw_id_fields = ("teacher",)
    inlines = [EnrollmentInline]
