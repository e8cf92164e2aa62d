"""Writes on conversations: create, send a message (one chat turn), end.

A chat turn, in order:
1. under the conversation's turn lock (conversations.locks), the student's message is stored
   and committed first, idempotent on `client_message_id`;
2. the prompt is assembled from the student's latest memories and the history, compressed
   when it would cross COMPRESSION_THRESHOLD_TOKENS (decided from stored running totals, never
   by re-tokenising the history);
3. the model is called through llm.gateway, with the save_memory tool;
4. the reply is stored with its token counts.
If the model fails, the student's message stays stored and the error says a retry with the
same `client_message_id` is safe.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from conversations import prompts
from conversations.locks import turn_lock
from conversations.models import ContextCheckpoint, Conversation, Message
from conversations.selectors import conversation_get
from llm import gateway
from llm.models import LLMUsage
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens
from memory.recall import memory_block_tokens, memory_item
from memory.selectors import memories_for_turn
from memory.services import memory_note_save
from tutor.errors import ApplicationError, Conflict, Forbidden, NotFound

logger = logging.getLogger(__name__)


class ModelUnavailable(ApplicationError):
    status_code = 503
    code = "model_unavailable"
    retry_safe = True


class ModelNotConfigured(ApplicationError):
    status_code = 503
    code = "model_not_configured"
    retry_safe = True


class ModelBadResponse(ApplicationError):
    status_code = 502
    code = "model_bad_response"
    retry_safe = True


@dataclass(frozen=True)
class TurnResult:
    student_message: Message
    reply: Message
    created: bool


def _require_student_owner(*, user: Any, conversation: Conversation) -> None:
    # Teachers can read their students' conversations but never write on a student's behalf.
    if user.pk != conversation.student_id:
        raise Forbidden("Only the student can write in their own conversation.")


def conversation_create(*, user: Any, subject: str = "") -> Conversation:
    if getattr(user, "role", None) != User.Role.STUDENT:
        raise Forbidden("Only students can start a conversation.")
    return Conversation.objects.create(student=user, subject=subject, last_activity_at=timezone.now())


# --- Sending a message ------------------------------------------------------------------------


def message_send(*, user: Any, conversation_id: Any, content: str, client_message_id: str) -> TurnResult:
    """One chat turn. Serialised per conversation; idempotent on client_message_id."""
    try:
        pk = int(conversation_id)
    except (TypeError, ValueError):
        raise NotFound("Conversation not found.") from None
    # The lock is taken on the id before the scoped read: holding it for a conversation the user
    # may not see reveals nothing and lasts one failed lookup.
    with turn_lock(pk):
        conversation, student_message, created = _student_message_store(
            user=user, conversation_id=pk, content=content, client_message_id=client_message_id
        )
        # Only a retry can find its reply already stored.
        existing_reply = None if created else Message.objects.filter(reply_to=student_message).first()
        if existing_reply is not None:
            return TurnResult(student_message, existing_reply, created)
        if conversation.is_ended:
            raise Conflict(
                "This conversation has ended; start a new one.",
                details={"student_message_id": student_message.pk},
            )
        reply = _turn_run(conversation=conversation, student_message=student_message)
    return TurnResult(student_message, reply, created)


def _student_message_store(
    *, user: Any, conversation_id: int, content: str, client_message_id: str
) -> tuple[Conversation, Message, bool]:
    with transaction.atomic():
        # The scoped read and the row lock in one query (the student comes along for the turn).
        conversation = (
            Conversation.objects.visible_to(user)
            .select_related("student")
            .select_for_update(of=("self",))
            .filter(pk=conversation_id)
            .first()
        )
        if conversation is None:
            raise NotFound("Conversation not found.")
        _require_student_owner(user=user, conversation=conversation)
        existing = conversation.messages.filter(client_message_id=client_message_id).first()
        if existing is not None:
            if existing.content != content:
                raise Conflict(
                    "client_message_id was already used for a different message in this conversation.",
                    details={"client_message_id": client_message_id},
                )
            return conversation, existing, False
        if conversation.is_ended:
            raise Conflict("This conversation has ended; start a new one.")
        message = _message_append(
            conversation=conversation, role=Message.Role.STUDENT, content=content, client_message_id=client_message_id
        )
    return conversation, message, True


def _message_append(*, conversation: Conversation, role: str, content: str, **fields: Any) -> Message:
    """Append a message to a conversation locked by the caller, keeping the running totals."""
    tokens = count_tokens(content)
    seq = conversation.message_count + 1
    message = Message.objects.create(
        conversation=conversation, seq=seq, role=role, content=content, token_count=tokens, **fields
    )
    conversation.message_count = seq
    conversation.history_tokens += tokens
    conversation.last_activity_at = timezone.now()
    Conversation.objects.filter(pk=conversation.pk).update(
        message_count=seq,
        history_tokens=F("history_tokens") + tokens,
        last_activity_at=conversation.last_activity_at,
    )
    return message


def _turn_run(*, conversation: Conversation, student_message: Message) -> Message:
    profile = gateway.chat_profile()
    if not gateway.is_configured(profile):
        raise ModelNotConfigured(gateway.NOT_CONFIGURED_MESSAGE, details={"student_message_id": student_message.pk})
    # The latest memories plus those recalled for this message, within MEMORY_TOKEN_BUDGET;
    # the latest alone if recall fails (memories_for_turn logs it and never raises for it).
    chosen = memories_for_turn(
        student_id=conversation.student_id,
        message=student_message.content,
        language=conversation.student.language,
    )
    memories = [memory_item(m) for m in chosen]
    fixed_tokens = _system_prompt_tokens() + memory_block_tokens(chosen)
    context = _context_build(conversation=conversation, upto_seq=student_message.seq, fixed_tokens=fixed_tokens)
    messages = prompts.build_chat_messages(
        memories=memories,
        history=context.history,
        checkpoint_summary=context.checkpoint_summary,
        checkpoint_covered=context.checkpoint_covered,
        omitted=context.omitted,
    )
    usage: list[LLMUsage] = []
    try:
        try:
            content, prompt_tokens, completion_tokens, model = _model_converse(
                conversation=conversation, messages=messages, usage=usage
            )
        except gateway.LLMError:
            # Calls that succeeded before a later one failed (a tool round) are metered now;
            # on success `usage` is saved with the reply below instead.
            LLMUsage.objects.bulk_create(usage)
            raise
    except gateway.LLMNotConfigured as exc:
        raise ModelNotConfigured(str(exc), details={"student_message_id": student_message.pk}) from exc
    except gateway.LLMUnavailable as exc:
        raise ModelUnavailable(
            f"The tutor model is unavailable ({exc}). Your message is saved; retrying with the same "
            "client_message_id is safe.",
            details={"student_message_id": student_message.pk},
        ) from exc
    except gateway.LLMBadResponse as exc:
        raise ModelBadResponse(
            f"The tutor model gave an unusable answer ({exc}). Your message is saved; retrying with the "
            "same client_message_id is safe.",
            details={"student_message_id": student_message.pk},
        ) from exc
    # No row lock needed: the turn lock is held, and only a turn appends messages. The usage
    # rows are committed with the reply they paid for.
    with transaction.atomic():
        LLMUsage.objects.bulk_create(usage)
        return _message_append(
            conversation=conversation,
            role=Message.Role.TUTOR,
            content=content,
            reply_to=student_message,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            model=model,
        )


_system_tokens_cache: dict[str, int] = {}


def _system_prompt_tokens() -> int:
    key = settings.LLM_MODEL
    if key not in _system_tokens_cache:
        tool = json.dumps(prompts.SAVE_MEMORY_TOOL)
        _system_tokens_cache[key] = count_tokens(prompts.SYSTEM_PROMPT) + count_tokens(tool) + MESSAGE_OVERHEAD_TOKENS
    return _system_tokens_cache[key]


# --- The tool loop ----------------------------------------------------------------------------


def _model_converse(
    *, conversation: Conversation, messages: list[dict[str, Any]], usage: list[LLMUsage]
) -> tuple[str, int, int, str]:
    """Call the model, running save_memory calls, until it answers with text.

    The successful calls' usage rows are appended to `usage`, for the caller to save.
    """
    profile = gateway.chat_profile()
    prompt_tokens = completion_tokens = 0
    model = profile.model
    for _ in range(settings.MAX_TOOL_ROUNDS + 1):
        result = gateway.complete(
            messages=messages,
            purpose=LLMUsage.Purpose.CHAT,
            profile=profile,
            student_id=conversation.student_id,
            conversation_id=conversation.pk,
            tools=[prompts.SAVE_MEMORY_TOOL],
            usage_sink=usage,
        )
        prompt_tokens += result.prompt_tokens
        completion_tokens += result.completion_tokens
        model = result.model or model
        if not result.tool_calls:
            return result.content, prompt_tokens, completion_tokens, model
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": result.content or None,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in result.tool_calls
                ],
            },
        ]
        for call in result.tool_calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": _tool_call_run(conversation=conversation, call=call),
                }
            )
    raise gateway.LLMBadResponse("the model kept calling tools without answering")


def _tool_call_run(*, conversation: Conversation, call: gateway.ToolCall) -> str:
    """Run one tool call; an invalid call returns an error text to the model, never raises."""
    if call.name != "save_memory":
        return f"Error: unknown tool {call.name!r}. The only tool is save_memory."
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return 'Error: arguments must be a JSON object {"title": ..., "content": ...}.'
    if not isinstance(args, dict):
        return 'Error: arguments must be a JSON object {"title": ..., "content": ...}.'
    try:
        memory, created = memory_note_save(
            student_id=conversation.student_id,
            conversation_id=conversation.pk,
            title=args.get("title"),
            content=args.get("content"),
        )
    except ValidationError as exc:
        return "Error: memory not saved. " + " ".join(exc.messages)
    return f"Saved memory {memory.pk}: {memory.title}" if created else f"Already saved as memory {memory.pk}."


# --- Context: history, compression ------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    history: list[prompts.HistoryItem]
    checkpoint_summary: str | None
    checkpoint_covered: int
    omitted: int


def _context_build(*, conversation: Conversation, upto_seq: int, fixed_tokens: int) -> Context:
    """The history to send, compressed if it would cross the threshold.

    The decision uses the conversation's stored running totals and the latest checkpoint's
    stored counts: its cost does not grow with the conversation.
    """
    threshold = settings.COMPRESSION_THRESHOLD_TOKENS
    checkpoint = conversation.checkpoints.order_by("-covers_through_seq").first()
    covered_seq = checkpoint.covers_through_seq if checkpoint else 0
    covered_tokens = checkpoint.covered_tokens if checkpoint else 0
    covered_messages = checkpoint.covered_messages if checkpoint else 0
    summary_tokens = checkpoint.summary_tokens if checkpoint else 0
    live_messages = conversation.message_count - covered_messages
    estimate = (
        fixed_tokens
        + summary_tokens
        + conversation.history_tokens
        - covered_tokens
        + live_messages * MESSAGE_OVERHEAD_TOKENS
    )
    if estimate > threshold:
        new_checkpoint = _compress(conversation=conversation, checkpoint=checkpoint, upto_seq=upto_seq)
        if new_checkpoint is not None:
            checkpoint = new_checkpoint
            covered_seq = checkpoint.covers_through_seq
            summary_tokens = checkpoint.summary_tokens

    rows = list(
        conversation.messages.filter(seq__gt=covered_seq, seq__lte=upto_seq)
        .order_by("seq")
        .values_list("role", "content", "token_count")
    )
    # Whatever happened above, the history sent must fit: drop the oldest messages, with a
    # marker, if it still does not (compression failed, or the recent messages alone are huge).
    budget = threshold - fixed_tokens - summary_tokens
    used = sum(t + MESSAGE_OVERHEAD_TOKENS for _, _, t in rows)
    start = 0
    while used > budget and start < len(rows) - 1:
        used -= rows[start][2] + MESSAGE_OVERHEAD_TOKENS
        start += 1
    if start:
        logger.warning("conversation %s: %d messages left out of the prompt to fit", conversation.pk, start)
    return Context(
        history=[prompts.HistoryItem(role=r, content=c) for r, c, _ in rows[start:]],
        checkpoint_summary=checkpoint.summary if checkpoint else None,
        checkpoint_covered=checkpoint.covered_messages if checkpoint else 0,
        omitted=start,
    )


def _compress(
    *, conversation: Conversation, checkpoint: ContextCheckpoint | None, upto_seq: int
) -> ContextCheckpoint | None:
    """Summarise everything but the KEEP_RECENT_MESSAGES latest messages into a new checkpoint.

    The previous checkpoint's summary is folded in. Returns None (and logs) if the summary
    call fails: the caller then trims the history instead.
    """
    covered_seq = checkpoint.covers_through_seq if checkpoint else 0
    keep = settings.KEEP_RECENT_MESSAGES
    rows = list(
        conversation.messages.filter(seq__gt=covered_seq, seq__lte=upto_seq)
        .order_by("seq")
        .values_list("seq", "role", "content", "token_count")
    )
    fold = rows[:-keep] if keep else rows
    if not fold:
        return None
    try:
        summary = _summarise_for_compression(
            conversation=conversation,
            previous_summary=checkpoint.summary if checkpoint else None,
            transcript=[prompts.HistoryItem(role=r, content=c) for _, r, c, _ in fold],
        )
    except gateway.LLMError as exc:
        logger.error("conversation %s: context compression failed, trimming instead: %s", conversation.pk, exc)
        return None
    new_checkpoint, _ = ContextCheckpoint.objects.get_or_create(
        conversation=conversation,
        covers_through_seq=fold[-1][0],
        defaults={
            "covered_messages": (checkpoint.covered_messages if checkpoint else 0) + len(fold),
            "covered_tokens": (checkpoint.covered_tokens if checkpoint else 0) + sum(t for *_, t in fold),
            "summary": summary,
            "summary_tokens": count_tokens(summary) + MESSAGE_OVERHEAD_TOKENS,
        },
    )
    return new_checkpoint


def _summarise_for_compression(
    *, conversation: Conversation, previous_summary: str | None, transcript: list[prompts.HistoryItem]
) -> str:
    """Fold the transcript into a summary, in chunks that fit the summary model's input."""
    limit = settings.SUMMARY_MAX_TRANSCRIPT_TOKENS
    summary = previous_summary
    chunk: list[prompts.HistoryItem] = []
    used = 0
    profile = gateway.background_profile()

    def flush(current: str | None, items: list[prompts.HistoryItem]) -> str:
        result = gateway.complete(
            messages=prompts.compression_messages(previous_summary=current, transcript=items),
            purpose=LLMUsage.Purpose.COMPRESSION,
            profile=profile,
            student_id=conversation.student_id,
            conversation_id=conversation.pk,
        )
        if not result.content.strip():
            raise gateway.LLMBadResponse("empty compression summary")
        return result.content.strip()

    for item in transcript:
        # Rough count from characters: these messages' exact counts are stored, but a chunk
        # boundary only needs to be safe, not exact.
        cost = len(item.content) // 3 + MESSAGE_OVERHEAD_TOKENS
        if chunk and used + cost > limit:
            summary = flush(summary, chunk)
            chunk, used = [], 0
        chunk.append(item)
        used += cost
    if chunk:
        summary = flush(summary, chunk)
    assert summary is not None
    return summary


# --- Ending -----------------------------------------------------------------------------------


def conversation_end(*, user: Any, conversation_id: Any) -> Conversation:
    """End a conversation the student owns; the summary is enqueued after commit."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    _require_student_owner(user=user, conversation=conversation)
    return conversation_close(conversation_id=conversation.pk)


def conversation_close(*, conversation_id: int) -> Conversation:
    """End a conversation (API or idle timeout) and enqueue its summary once committed.

    Idempotent: ending an ended conversation changes nothing and enqueues nothing.
    """
    from memory.tasks import conversation_summarize

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
            transaction.on_commit(lambda: _enqueue_summary(conversation_summarize, conversation_id))
    return conversation


def _enqueue_summary(task: Any, conversation_id: int) -> None:
    # The conversation is committed as pending: if the broker is down the sweep picks it up.
    try:
        task.delay(conversation_id)
    except Exception:
        logger.exception("could not enqueue summary of conversation %s; the sweep will retry", conversation_id)


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
