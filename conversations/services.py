"""Writes on conversations: create, end.

The chat turn lives in conversations.turn, cut by phase (claim, window, prompt, drive, tools,
finish): short database steps around the model, awaited without holding a thread or a connection.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from conversations.models import Conversation, Message
from conversations.selectors import conversation_get, require_student_owner
from core import background, events
from core.errors import Forbidden, NotFound


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
    """End a conversation the student owns; the summary is enqueued after commit. One locking
    read finds the user's own conversation through the scoping primitive with what ending it
    needs; a conversation that is not theirs is not locked: 404 (not visible) or 403 (a
    teacher's), as `conversation_get` and `require_student_owner` say."""
    try:
        pk: int | None = int(conversation_id)
    except (TypeError, ValueError):
        pk = None
    with transaction.atomic():
        conversation = (
            _lockable(Conversation.objects.visible_to(user).filter(pk=pk, student_id=user.pk)).first()
            if pk is not None
            else None
        )
        if conversation is None:
            require_student_owner(user=user, conversation=conversation_get(user=user, conversation_id=conversation_id))
            raise NotFound(_("Conversation not found."))
        return _close(conversation)


def conversation_close(*, conversation_id: int) -> Conversation:
    """End a conversation (API or idle timeout) and enqueue its summary once committed.

    Idempotent: ending an ended conversation changes nothing, enqueues nothing and emits no
    `conversation.ended` (emitted once, after commit, when it ends). A broker
    that is down leaves the summary pending, for `summaries_sweep`.
    """
    with transaction.atomic():
        return _close(_lockable(Conversation.objects.filter(pk=conversation_id)).get())


def _lockable(conversations: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """`conversations` locked, each with whether the student wrote in it (`has_student_message`)."""
    return conversations.select_for_update(of=("self",)).annotate(
        has_student_message=Exists(Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.STUDENT))
    )


def _close(conversation: Any) -> Conversation:
    """End `conversation`, locked by the caller's transaction (`_lockable`)."""
    if conversation.is_ended:
        return conversation
    now = timezone.now()
    has_student_message = conversation.has_student_message
    conversation.status = Conversation.Status.ENDED
    conversation.ended_at = now
    conversation.summary_requested_at = now
    conversation.summary_status = (
        Conversation.SummaryStatus.PENDING if has_student_message else Conversation.SummaryStatus.SKIPPED
    )
    conversation.save(update_fields=["status", "ended_at", "summary_requested_at", "summary_status"])
    if has_student_message:
        background.enqueue("conversations.tasks.conversation_summarize", conversation.pk)
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
