"""The history a turn sends to the model, compressed when it would cross the threshold.

The decision uses the conversation's stored running totals and the latest checkpoint's counts,
never a re-tokenised history. Compression folds all but KEEP_RECENT_MESSAGES messages into a
stored `ContextCheckpoint`; the messages themselves are never deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db.models import QuerySet

from conversations import prompts
from conversations.models import ContextCheckpoint, Conversation, Message
from core.db import compiled_query, connection_release
from llm import gateway
from llm.models import LLMUsage
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Compression:
    """A summary to write before the history can be sent: the messages to fold into a new
    checkpoint, and what the history's build needs once it is written (`context_compressed`)."""

    conversation: Conversation
    checkpoint: ContextCheckpoint | None  # the latest, whose summary is folded in
    fold: list[tuple[int, str, str, int]]  # (seq, role, content, tokens), oldest first
    max_words: int
    upto_seq: int
    fixed_tokens: int
    threshold: int


@dataclass(frozen=True)
class Context:
    history: list[prompts.HistoryItem]
    checkpoint_summary: str | None
    checkpoint_covered: int
    omitted: int
    # Set (and the rest empty) when `context_build(summarise=False)` needs a summary first.
    compression: Compression | None = None


def context_build(
    *,
    conversation: Conversation,
    upto_seq: int,
    fixed_tokens: int,
    threshold: int,
    capacity: int,
    summarise: bool = True,
    checkpointed: bool = True,
) -> Context:
    """The history to send, compressed if the prompt would cross `threshold` tokens (the smaller
    of COMPRESSION_THRESHOLD_TOKENS and `capacity`, what the model's window leaves once the
    reply is reserved).

    The decision uses the conversation's stored running totals and the latest checkpoint's
    stored counts: its cost does not grow with the conversation.

    With `summarise=False` the summary model is not called here: when a summary is needed, the
    Context returned holds only the `compression` to do; the caller writes its summary
    (`compression_summary`, a slow call, outside any database step) and then builds the history
    with `context_compressed`.

    `checkpointed=False`: the caller knows the conversation has no checkpoint (the chat turn's
    claim read it), and none is looked for.
    """
    checkpoint = conversation.checkpoints.order_by("-covers_through_seq").first() if checkpointed else None
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
        job = _compression(
            conversation=conversation,
            checkpoint=checkpoint,
            upto_seq=upto_seq,
            budget=capacity - fixed_tokens,
            fixed_tokens=fixed_tokens,
            threshold=threshold,
        )
        if job is not None:
            if not summarise:
                return Context([], None, 0, 0, compression=job)
            # The summary model may take seconds: no connection is held while it answers.
            connection_release()
            return context_compressed(job, compression_summary(job))
    return _history(conversation, checkpoint, upto_seq=upto_seq, fixed_tokens=fixed_tokens, threshold=threshold)


def _history(
    conversation: Conversation,
    checkpoint: ContextCheckpoint | None,
    *,
    upto_seq: int,
    fixed_tokens: int,
    threshold: int,
) -> Context:
    """The messages after `checkpoint` up to `upto_seq`, the oldest left out (with a marker)
    while they do not fit."""
    covered_seq = checkpoint.covers_through_seq if checkpoint else 0
    summary_tokens = checkpoint.summary_tokens if checkpoint else 0
    rows = compiled_query(
        "conversations.history", None, _history_rows, conversation_id=conversation.pk, after=covered_seq, upto=upto_seq
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


def _history_rows(*, conversation_id: int, after: int, upto: int) -> QuerySet[Message, tuple[str, str, int]]:
    return (
        Message.objects.filter(conversation_id=conversation_id, seq__gt=after, seq__lte=upto)
        .order_by("seq")
        .values_list("role", "content", "token_count")
    )


def _compression(
    *,
    conversation: Conversation,
    checkpoint: ContextCheckpoint | None,
    upto_seq: int,
    budget: int,
    fixed_tokens: int,
    threshold: int,
) -> Compression | None:
    """What to summarise into a new checkpoint: everything but the latest messages, or None if
    nothing is left to fold.

    The KEEP_RECENT_MESSAGES latest stay verbatim, or, on a small window, as many of the newest
    as fit in half of `budget` (the tokens the window leaves for the summary and the history)
    once the summary's own length is set aside. The previous checkpoint's summary is folded in.
    """
    covered_seq = checkpoint.covers_through_seq if checkpoint else 0
    rows = list(
        conversation.messages.filter(seq__gt=covered_seq, seq__lte=upto_seq)
        .order_by("seq")
        .values_list("seq", "role", "content", "token_count")
    )
    max_words = max(60, min(600, budget // 4))
    # Half of what is left, on a small window: the next turns then fit without compressing again.
    keep = _recent_that_fit(rows, limit=settings.KEEP_RECENT_MESSAGES, budget=(budget - 2 * max_words) // 2)
    fold = rows[:-keep] if keep else rows
    if not fold:
        return None
    return Compression(conversation, checkpoint, fold, max_words, upto_seq, fixed_tokens, threshold)


def compression_summary(job: Compression) -> str | None:
    """The summary of `job`'s messages (the summary model: up to its timeout per chunk), or None
    (logged) if the call fails: the history is then trimmed instead. Call it outside any
    database step (llm.offload)."""
    checkpoint = job.checkpoint
    try:
        return _summarise_for_compression(
            conversation=job.conversation,
            previous_summary=checkpoint.summary if checkpoint else None,
            transcript=[prompts.HistoryItem(role=r, content=c) for _, r, c, _ in job.fold],
            max_words=job.max_words,
        )
    except gateway.LLMError as exc:
        logger.error("conversation %s: context compression failed, trimming instead: %s", job.conversation.pk, exc)
        return None


def context_compressed(job: Compression, summary: str | None) -> Context:
    """The history once `job`'s summary is written: stored as a new checkpoint (or, without a
    summary, the history after the latest checkpoint, trimmed to fit)."""
    checkpoint = job.checkpoint
    if summary is not None:
        checkpoint = _checkpoint_store(job, summary)
    return _history(
        job.conversation, checkpoint, upto_seq=job.upto_seq, fixed_tokens=job.fixed_tokens, threshold=job.threshold
    )


def _checkpoint_store(job: Compression, summary: str) -> ContextCheckpoint:
    checkpoint, fold = job.checkpoint, job.fold
    covered_messages = (checkpoint.covered_messages if checkpoint else 0) + len(fold)
    new_checkpoint, _ = ContextCheckpoint.objects.get_or_create(
        conversation=job.conversation,
        covers_through_seq=fold[-1][0],
        defaults={
            "covered_messages": covered_messages,
            "covered_tokens": (checkpoint.covered_tokens if checkpoint else 0) + sum(t for *_, t in fold),
            "summary": summary,
            # The message the chat prompt shows, its frame included (prompts.checkpoint_message).
            "summary_tokens": count_tokens(prompts.checkpoint_message(summary, covered_messages))
            + MESSAGE_OVERHEAD_TOKENS,
        },
    )
    return new_checkpoint


def _recent_that_fit(rows: list[tuple[int, str, str, int]], *, limit: int, budget: int) -> int:
    """How many of the newest rows to keep verbatim: at most `limit`, within `budget` tokens,
    and always the newest one (the student's message, whose size was checked on arrival)."""
    used = kept = 0
    for *_, tokens in reversed(rows):
        cost = tokens + MESSAGE_OVERHEAD_TOKENS
        if kept >= limit or (kept and used + cost > budget):
            break
        used += cost
        kept += 1
    return kept


def _summarise_for_compression(
    *,
    conversation: Conversation,
    previous_summary: str | None,
    transcript: list[prompts.HistoryItem],
    max_words: int,
) -> str:
    """Fold the transcript into a summary, in chunks that fit the summary model's input (its
    window, less its reply, the prompt and the summary carried over from the previous chunk)."""
    profile = gateway.background_profile()
    limit = min(settings.SUMMARY_MAX_TRANSCRIPT_TOKENS, gateway.input_budget(profile) - 2 * max_words - 300)
    limit = max(limit, 200)
    summary = previous_summary
    chunk: list[prompts.HistoryItem] = []
    used = 0

    def flush(current: str | None, items: list[prompts.HistoryItem]) -> str:
        result = gateway.complete(
            messages=prompts.compression_messages(previous_summary=current, transcript=items, max_words=max_words),
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
        if cost > limit:  # one message longer than the summary model's input: its beginning
            item = prompts.HistoryItem(role=item.role, content=item.content[: limit * 3] + " [...]")
            cost = limit
        if chunk and used + cost > limit:
            summary = flush(summary, chunk)
            chunk, used = [], 0
        chunk.append(item)
        used += cost
    if chunk:
        summary = flush(summary, chunk)
    assert summary is not None
    return summary
