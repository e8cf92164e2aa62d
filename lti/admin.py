"""The LTI rows in the Django admin, scoped like the API (accounts.admin_tenancy): the tool's LMS
platforms, each its school's. django-lti's own registration admin is withdrawn, since it shows
every school's platforms to anyone with the permission; platforms are registered and changed
through the API (docs/lti.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from lti_tool.models import LtiRegistration

from accounts.admin_tenancy import ReadOnlyWhenScoped, TenantScopedAdmin
from lti.models import Platform
from lti.selectors import platforms_visible_to

admin.site.unregister(LtiRegistration)


@admin.register(Platform)
class PlatformAdmin(ReadOnlyWhenScoped, TenantScopedAdmin):
    """The LMS platforms. A scoped user (a school administrator with the staff flag) sees their
    schools' and changes none; staff see and remove any."""

    list_display = ("name", "issuer", "client_id", "school", "created_at")
    search_fields = ("registration__name", "registration__issuer", "registration__client_id")
    raw_id_fields = ("registration", "school", "created_by")

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=platforms_visible_to(request.user).values("pk"))

    @admin.display(description="name")
    def name(self, platform: Platform) -> str:
        return platform.registration.name

    @admin.display(description="issuer")
    def issuer(self, platform: Platform) -> str:
        return platform.registration.issuer

    @admin.display(description="client id")
    def client_id(self, platform: Platform) -> str:
        return platform.registration.client_id

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).select_related("registration", "school")
