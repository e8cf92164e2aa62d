"""Reads of conversations and messages, always through Conversation.objects.visible_to."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.selectors import student_get_visible
from conversations.models import Conversation, ReplyMemory
from core.errors import Forbidden, NotFound


def conversation_list(*, user: Any, student_id: Any = None) -> QuerySet[Conversation]:
    qs = Conversation.objects.visible_to(user)
    if student_id not in (None, ""):
        qs = qs.filter(student=student_get_visible(user=user, student_id=student_id))
    return qs.order_by("-created_at", "-id")


def conversation_get(*, user: Any, conversation_id: Any) -> Conversation:
    try:
        pk = int(conversation_id)
    except (TypeError, ValueError):
        raise NotFound(_("Conversation not found.")) from None
    conversation = Conversation.objects.visible_to(user).filter(pk=pk).first()
    if conversation is None:
        raise NotFound(_("Conversation not found."))
    return conversation


def require_student_owner(*, user: Any, conversation: Conversation) -> None:
    """Forbidden unless `user` is the conversation's student: teachers read their students'
    conversations but never write on a student's behalf."""
    if user.pk != conversation.student_id:
        raise Forbidden(_("Only the student can write in their own conversation."))


def message_page(*, conversation: Conversation, before: int | None, limit: int) -> dict[str, Any]:
    """Up to `limit` messages of a conversation obtained through conversation_get, newest first,
    older than the message `before` (a message id; None: from the latest). `next_before` is the
    `before` of the next, older page, or None when this page reaches the first message. A
    `before` that is not a message of this conversation gives the page older than where it would
    be: ids grow with `seq` within a conversation (one turn at a time writes its messages)."""
    qs = conversation.messages.order_by("-seq")
    if before is not None:
        qs = qs.filter(pk__lt=before)
    rows = list(qs[: limit + 1])
    return {"results": rows[:limit], "next_before": rows[limit - 1].pk if len(rows) > limit else None}


def reply_memories(*, user: Any, conversation_id: Any, message_id: Any) -> QuerySet[ReplyMemory]:
    """The access log of one tutor reply: the memories its prompt held, in block order, with
    their scores and signals. The conversation is read through the scoping primitive and the
    message must be one of its own (404 otherwise). A student's reply shows no teacher-only
    note: those never reach the prompt."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    try:
        pk = int(message_id)
    except (TypeError, ValueError):
        raise NotFound(_("Message not found.")) from None
    if not conversation.messages.filter(pk=pk).exists():
        raise NotFound(_("Message not found."))
    return ReplyMemory.objects.filter(message_id=pk).select_related("memory").order_by("rank")
