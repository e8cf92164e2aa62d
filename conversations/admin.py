"""The admin's view of conversations: read-only. Conversations and messages are written by the
chat turn and its services (leases, running totals, summaries), never by hand. A scoped user sees
those of the students they may see (Conversation.objects.visible_to, as the API)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from accounts.admin import ReadOnlyAdmin
from audit.services import Kind
from conversations.models import Conversation, Message


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ("id", "student", "subject", "status", "summary_status", "message_count", "last_activity_at")
    list_filter = ("status", "summary_status")
    search_fields = ("subject", "student__username")
    list_select_related = ("student",)
    readonly_fields = ("created_at", "messages")
    access_kind = Kind.CONVERSATIONS

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(pk__in=Conversation.objects.visible_to(request.user).values("pk"))

    @admin.display(description="Messages")
    def messages(self, conversation: Conversation) -> SafeString:
        url = reverse("admin:conversations_message_changelist")
        return format_html(
            '<a href="{}?conversation__id__exact={}">{} messages</a>', url, conversation.pk, conversation.message_count
        )


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "conversation", "seq", "role", "excerpt", "token_count", "model", "created_at")
    list_filter = ("role",)
    list_select_related = ("conversation",)
    # The model's ordering joins the conversation; newest first needs only the primary key.
    ordering = ("-id",)
    # Counting a large table in full as well as filtered is the changelist's slowest query.
    show_full_result_count = False
    access_kind = Kind.MESSAGES

    def access_student(self, obj: Any) -> int | None:
        return int(obj.conversation.student_id)

    def tenant_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(conversation__in=Conversation.objects.visible_to(request.user).values("pk"))

    @admin.display(description="Content")
    def excerpt(self, message: Message) -> str:
        return message.content[:80]
