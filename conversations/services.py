"""Writes on conversations: create, end.

The chat turn lives in conversations.turn, cut by phase (claim, window, prompt, drive, tools,
finish): short database steps around the model, awaited without holding a thread or a connection.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from conversations.models import Conversation, Message
from conversations.selectors import conversation_get, require_student_owner
from core import background, events
from core.errors import Forbidden


def conversation_create(*, user: Any, subject: str = "") -> Conversation:
    """Start a conversation for a student, ending their open ones first (`conversation_close`,
    each summarised as usual): a student has one conversation open at a time, and old ones do not
    pile up waiting for the idle timeout."""
    if getattr(user, "role", None) != User.Role.STUDENT:
        raise Forbidden(_("Only students can start a conversation."))
    with transaction.atomic():
        open_ids = Conversation.objects.filter(student=user, status=Conversation.Status.ACTIVE).values_list(
            "pk", flat=True
        )
        for conversation_id in list(open_ids):
            conversation_close(conversation_id=conversation_id)
        return Conversation.objects.create(student=user, subject=subject, last_activity_at=timezone.now())


# --- Ending -----------------------------------------------------------------------------------


def conversation_end(*, user: Any, conversation_id: Any) -> Conversation:
    """End a conversation the student owns; the summary is enqueued after commit."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    require_student_owner(user=user, conversation=conversation)
    return conversation_close(conversation_id=conversation.pk)


def conversation_close(*, conversation_id: int) -> Conversation:
    """End a conversation (API or idle timeout) and enqueue its summary once committed.

    Idempotent: ending an ended conversation changes nothing, enqueues nothing and emits no
    `conversation.ended` (emitted once, after commit, when it ends). A broker
    that is down leaves the summary pending, for `summaries_sweep`.
    """
    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
        if conversation.is_ended:
            return conversation
        now = timezone.now()
        has_student_message = conversation.messages.filter(role=Message.Role.STUDENT).exists()
        conversation.status = Conversation.Status.ENDED
        conversation.ended_at = now
        conversation.summary_requested_at = now
        conversation.summary_status = (
            Conversation.SummaryStatus.PENDING if has_student_message else Conversation.SummaryStatus.SKIPPED
        )
        conversation.save(update_fields=["status", "ended_at", "summary_requested_at", "summary_status"])
        if has_student_message:
            background.enqueue("conversations.tasks.conversation_summarize", conversation_id)
        events.emit(
            events.CONVERSATION_ENDED,
            student_id=conversation.student_id,
            data={
                "conversation_id": conversation.pk,
                "student_id": conversation.student_id,
                "message_count": conversation.message_count,
            },
        )
    return conversation


def conversations_end_idle() -> int:
    cutoff = timezone.now() - timedelta(minutes=settings.CONVERSATION_IDLE_MINUTES)
    ids = list(
        Conversation.objects.filter(status=Conversation.Status.ACTIVE, last_activity_at__lt=cutoff).values_list(
            "pk", flat=True
        )[:1000]
    )
    for pk in ids:
        conversation_close(conversation_id=pk)
    return len(ids)
