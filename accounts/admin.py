from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import Classroom, Enrollment, User


@admin.register(User)
class TutorUserAdmin(UserAdmin):
    list_display = ("username", "role", "language", "is_demo", "is_staff")
    list_filter = ("role", "is_demo", "is_staff")
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Tutor", {"fields": ("role", "language", "is_demo")}))


class EnrollmentInline(admin.TabularInline):
    model = Enrollment
    extra = 0


@admin.register(Classroom)
class ClassroomAdmin(admin.ModelAdmin):
    list_display = ("name", "teacher")
    inlines = [EnrollmentInline]
