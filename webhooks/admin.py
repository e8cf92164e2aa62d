"""The webhooks in the Django admin: each webhook with its delivery log, scoped as the API is
(staff see every one, a school administrator their schools', anyone else none). Subscribing is
the API's (POST /api/v1/webhooks/ shows the secret once); the admin never shows a secret, and
changes only the description and whether a webhook is on, through webhooks.services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts.admin_tenancy import TenantScoped, TenantScopedAdmin
from webhooks import services
from webhooks.models import Webhook, WebhookDelivery
from webhooks.selectors import webhooks_visible_to


class DeliveryInline(TenantScoped, admin.TabularInline):
    """A webhook's latest deliveries, read only."""

    model = WebhookDelivery
    fields = ("created_at", "event_type", "message_id", "status", "attempts", "response_code", "last_error")
    readonly_fields = fields
    extra = 0
    can_delete = False
    max_num = 0
    ordering = ("-created_at", "-pk")

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(webhook__in=webhooks_visible_to(request.user).values("pk"))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Webhook)
class WebhookAdmin(TenantScopedAdmin):
    list_display = ("url", "school", "active", "consecutive_failures", "disabled_reason", "created_at")
    list_filter = ("active",)
    list_select_related = ("school",)
    search_fields = ("url", "description")
    fields = (
        "url",
        "school",
        "events",
        "description",
        "active",
        "disabled_reason",
        "disabled_at",
        "consecutive_failures",
        "created_by",
        "created_at",
    )
    readonly_fields = tuple(f for f in fields if f != "description")
    inlines = (DeliveryInline,)
    actions = ("turn_on",)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=webhooks_visible_to(request.user).values("pk"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description=_("Turn the selected webhooks on again (their failure count is cleared)"))
    def turn_on(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        for hook in queryset:
            services.webhook_update(user=request.user, webhook_id=hook.pk, active=True)
        self.message_user(request, _("%(n)d webhooks are on.") % {"n": queryset.count()}, messages.SUCCESS)
