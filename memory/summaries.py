"""Turning an ended conversation into its one AIMemory summary (run by a Celery task)."""

from __future__ import annotations

import enum
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from conversations.models import Conversation, Message
from llm import gateway
from llm.models import LLMUsage
from llm.tokens import MESSAGE_OVERHEAD_TOKENS
from llm.untrusted import transcript_block
from memory.prompts import parse_summary, repair_messages, summary_messages
from memory.services import memory_summary_store

logger = logging.getLogger(__name__)


class TurnInProgress(Exception):
    """The conversation ended while a turn was being answered: the summary waits for its reply."""


class Outcome(enum.Enum):
    STORED = "stored"
    ALREADY_DONE = "already_done"
    SKIPPED = "skipped"
    FAILED = "failed"


def _transcript(conversation: Conversation) -> str:
    """The newest messages that fit SUMMARY_MAX_TRANSCRIPT_TOKENS, oldest first, delimited as data.

    Token counts are the ones stored with each message; nothing is re-tokenised.
    """
    budget = settings.SUMMARY_MAX_TRANSCRIPT_TOKENS
    picked: list[tuple[str, str]] = []
    used = 0
    omitted = False
    rows = conversation.messages.order_by("-seq").values_list("role", "content", "token_count").iterator()
    for role, content, tokens in rows:
        cost = tokens + MESSAGE_OVERHEAD_TOKENS
        if picked and used + cost > budget:
            omitted = True
            break
        picked.append((role, content))
        used += cost
    return transcript_block(list(reversed(picked)), note="[Earlier messages omitted.]" if omitted else "")


def _mark(conversation_id: int, status: str, error: str = "") -> None:
    Conversation.objects.filter(pk=conversation_id).update(summary_status=status, summary_error=error[:300])


def summary_attempt_failed(*, conversation_id: int, error: str) -> None:
    """Record a transient failure; the summary stays pending so the sweep retries it later."""
    Conversation.objects.filter(pk=conversation_id, summary_status=Conversation.SummaryStatus.PENDING).update(
        summary_attempts=F("summary_attempts") + 1, summary_error=error[:300], summary_requested_at=timezone.now()
    )


def conversation_summary_write(*, conversation_id: int) -> Outcome:
    """Write the summary memory of an ended conversation.

    Safe to run any number of times: a conversation whose summary is done, skipped or failed is
    left alone, and `memory_summary_store` stores at most one summary per conversation.
    Raises gateway.LLMError when the model is unreachable (transient), and TurnInProgress while
    a turn still holds the conversation's lease (its reply is stored, then summarised), for the
    task to retry.
    """
    conversation = Conversation.objects.select_related("student").filter(pk=conversation_id).first()
    if conversation is None:
        logger.error("summary: conversation %s does not exist", conversation_id)
        return Outcome.FAILED
    if conversation.summary_status in (
        Conversation.SummaryStatus.DONE,
        Conversation.SummaryStatus.SKIPPED,
        Conversation.SummaryStatus.FAILED,
    ):
        return Outcome.ALREADY_DONE
    if conversation.turn_in_progress(timezone.now()):
        raise TurnInProgress(f"conversation {conversation_id} has a turn in progress")
    if not conversation.messages.filter(role=Message.Role.STUDENT).exists():
        _mark(conversation_id, Conversation.SummaryStatus.SKIPPED)
        return Outcome.SKIPPED

    messages = summary_messages(transcript=_transcript(conversation), language=conversation.student.language)
    profile = gateway.background_profile()
    call = {
        "purpose": LLMUsage.Purpose.SUMMARY,
        "profile": profile,
        "student_id": conversation.student_id,
        "conversation_id": conversation_id,
    }
    result = gateway.complete(messages=messages, **call)  # type: ignore[arg-type]
    try:
        title, content = parse_summary(result.content)
    except ValueError as first_error:
        # One repair attempt, telling the model what was wrong.
        retry = gateway.complete(
            messages=repair_messages(previous=messages, answer=result.content, error=str(first_error)),
            **call,  # type: ignore[arg-type]
        )
        try:
            title, content = parse_summary(retry.content)
        except ValueError as second_error:
            logger.error(
                "summary: conversation %s failed permanently, invalid answer twice: %s",
                conversation_id,
                second_error,
            )
            _mark(conversation_id, Conversation.SummaryStatus.FAILED, f"invalid summary: {second_error}")
            return Outcome.FAILED

    with transaction.atomic():
        _, created = memory_summary_store(
            student_id=conversation.student_id, conversation_id=conversation_id, title=title, content=content
        )
        _mark(conversation_id, Conversation.SummaryStatus.DONE)
    return Outcome.STORED if created else Outcome.ALREADY_DONE


def pending_summaries_due() -> list[int]:
    """Ended conversations whose summary is still pending and untouched for a while."""
    cutoff = timezone.now() - timedelta(minutes=settings.SUMMARY_SWEEP_AFTER_MINUTES)
    return list(
        Conversation.objects.filter(
            summary_status=Conversation.SummaryStatus.PENDING, summary_requested_at__lte=cutoff
        )
        .order_by("summary_requested_at")
        .values_list("pk", flat=True)[:500]
    )
