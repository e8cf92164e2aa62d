"""Turning an ended conversation into its one AIMemory summary (run by the Celery task
`conversations.tasks.conversation_summarize`). The memory itself is stored by the memory app
(`memory.services.records.memory_summary_store`), from the summary prompt of memory.prompts."""

from __future__ import annotations

import enum
import json
import logging
import os
import re
import socket
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import formats, timezone, translation

from conversations.models import Conversation, Message
from core import metrics
from llm import gateway, structured
from llm.models import LLMUsage
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, message_tokens
from llm.untrusted import transcript_block
from memory import validation
from memory.prompts import (
    SUMMARY_SCHEMA,
    fallback_summary,
    json_object,
    notes_transcript,
    parse_summary,
    part_messages,
    repair_messages,
    summary_messages,
)
from memory.services.records import memory_summary_store

logger = logging.getLogger(__name__)

# The summary prompt, the repair turn and the answer's room, set aside from the model's input.
SUMMARY_PROMPT_TOKENS = 600
# The most a summary's answer may take: its JSON (10 words, 200 at most) with room to spare.
SUMMARY_ANSWER_TOKENS = 512


class TurnInProgress(Exception):
    """The conversation ended while a turn was being answered: the summary waits for its reply."""


class Outcome(enum.Enum):
    STORED = "stored"
    ALREADY_DONE = "already_done"
    SKIPPED = "skipped"
    FAILED = "failed"
    FALLBACK = "fallback"


def _mark(conversation_id: int, status: str, error: str = "") -> None:
    Conversation.objects.filter(pk=conversation_id).update(
        summary_status=status, summary_error=error[:300], summary_owner=""
    )


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:100]


def _attempt_start(conversation_id: int) -> None:
    """Record which process makes this attempt, and when (see `pending_summaries_due`)."""
    Conversation.objects.filter(pk=conversation_id).update(summary_owner=_owner(), summary_requested_at=timezone.now())


def summary_attempt_failed(*, conversation_id: int, error: str) -> None:
    """Record a failed attempt (its error, one more attempt); the summary stays pending, for the
    task's next retry or, after the last, the sweep (transient) or `summary_settle_failed`
    (permanent)."""
    Conversation.objects.filter(pk=conversation_id, summary_status=Conversation.SummaryStatus.PENDING).update(
        summary_attempts=F("summary_attempts") + 1, summary_error=error[:300], summary_requested_at=timezone.now()
    )


def conversation_summary_write(*, conversation_id: int) -> Outcome:
    """Write the summary memory of an ended conversation.

    Safe to run any number of times: a conversation whose summary is done, skipped, failed or
    settled by a fallback is left alone, and `memory_summary_store` stores at most one summary
    per conversation.

    The model is asked for JSON with `response_format` (structured.complete_structured). A
    transcript longer than the summary model's window is summarised in parts first (map), then
    from the parts' notes (reduce). An answer that misses the summary's shape by what a cut
    repairs (`summary_repaired`: a long title, a long content) is cut; any other invalid answer
    is asked again once, with the error. A permanent failure (the endpoint refuses the request,
    or the answer is invalid even after the re-ask) stores an honest fallback memory written from
    the conversation itself (`needs_review`, low confidence), so an ended conversation always
    leaves a memory, unless the student has no consent to memory (SKIPPED, no model asked:
    docs/privacy.md#consent-to-memory). Raises gateway.LLMUnavailable when the model is
    unreachable (transient), TurnInProgress while a turn still holds the conversation's lease (its reply is stored, then
    summarised), and the database's errors (`is_permanent_database_error` tells which no retry
    fixes), for the task to retry or settle (`summary_settle_failed`).
    """
    conversation = Conversation.objects.select_related("student").filter(pk=conversation_id).first()
    if conversation is None:
        logger.error("summary: conversation %s does not exist", conversation_id)
        return Outcome.FAILED
    if conversation.summary_status in (
        Conversation.SummaryStatus.DONE,
        Conversation.SummaryStatus.SKIPPED,
        Conversation.SummaryStatus.FAILED,
        Conversation.SummaryStatus.FALLBACK,
    ):
        return Outcome.ALREADY_DONE
    # No memory of a student whose family does not consent to it: no model is asked either.
    if not conversation.student.memory_consent:
        _mark(conversation_id, Conversation.SummaryStatus.SKIPPED)
        return Outcome.SKIPPED
    if conversation.turn_in_progress(timezone.now()):
        raise TurnInProgress(f"conversation {conversation_id} has a turn in progress")
    # Nothing was said between the student and the tutor (no message, or none ever answered):
    # there is nothing to remember, and a memory drawn from an unanswered question would be noise.
    if not conversation.messages.filter(role=Message.Role.TUTOR).exists():
        _mark(conversation_id, Conversation.SummaryStatus.SKIPPED)
        return Outcome.SKIPPED

    _attempt_start(conversation_id)
    call: dict[str, Any] = {
        "profile": gateway.background_profile(),
        "student_id": conversation.student_id,
        "conversation_id": conversation_id,
    }
    try:
        title, content = _summary_asked(conversation, call)
    except (ValueError, gateway.LLMRefused) as exc:
        reason = f"invalid summary: {exc}" if isinstance(exc, ValueError) else str(exc)
        logger.error("summary: conversation %s: no summary (%s); fallback stored", conversation_id, reason)
        summary_fallback_store(conversation=conversation, error=reason, settled=True)
        return Outcome.FALLBACK

    with transaction.atomic():
        _, created = memory_summary_store(
            student_id=conversation.student_id, conversation_id=conversation_id, title=title, content=content
        )
        _mark(conversation_id, Conversation.SummaryStatus.DONE)
    if created:
        ended = conversation.ended_at
        metrics.summary_stored(ended_at=ended.timestamp() if ended else None)
    return Outcome.STORED if created else Outcome.ALREADY_DONE


def _summary_asked(conversation: Conversation, call: dict[str, Any]) -> tuple[str, str]:
    """(title, content) as the model writes them: asked once, repaired or asked again once with
    the error. A prompt the server refuses as longer than its window (its window learned, or a
    fifth less than was sent) is fitted again and sent once more. Raises ValueError (invalid
    even after the re-ask) or gateway.LLMError."""
    profile = call["profile"]
    for attempt in (1, 2):
        transcript = _transcript_within_window(conversation, call)
        messages = summary_messages(transcript=transcript, language=conversation.student.language)
        # The answer's room: a summary's JSON, well within it; a small model that writes on is
        # cut there, and its whole sentences kept (`summary_repaired`).
        room = min(SUMMARY_ANSWER_TOKENS, gateway.reply_reserve(gateway.context_window(profile).tokens))
        ask = {**call, "schema": SUMMARY_SCHEMA, "name": "memory_summary", "purpose": LLMUsage.Purpose.SUMMARY}
        try:
            answer = structured.complete_structured(messages=messages, max_tokens=room, **ask)
        except gateway.LLMContextExceeded as exc:
            if attempt == 2:
                raise
            sent = sum(message_tokens(m) for m in messages)
            if exc.window is None:
                gateway.learn_window(profile, min(gateway.context_window(profile).tokens, sent) * 4 // 5)
            elif exc.requested and exc.requested > sent:
                # Its tokenizer counts more than ours: the window in our tokens is smaller.
                gateway.learn_window(profile, exc.window, scale=sent / exc.requested * 0.95)
            continue
        try:
            return summary_parsed(answer.content, conversation_id=conversation.pk, cut=answer.finish_reason == "length")
        except ValueError as first_error:
            # Asked again once (a metered call like the first), told what was wrong.
            repair = repair_messages(previous=messages, answer=answer.content, error=str(first_error))
            retry = structured.complete_structured(messages=repair, max_tokens=room, **ask)
            return summary_parsed(retry.content, conversation_id=conversation.pk, cut=retry.finish_reason == "length")
    raise AssertionError("unreachable")


# Where a sentence ends, as memory.validation counts sentences.
_SENTENCE_END = re.compile(r"[.!?\u2026]+(?=\s|$)")


def summary_repaired(title: object, content: object, *, cut: bool = False) -> tuple[object, object]:
    """A model's near miss, cut to the summary's invariants where a cut keeps what it wrote:
    a title over TITLE_MAX_WORDS words or TITLE_MAX_CHARS characters is cut at a word
    (`validation.title_cut`); a content over SUMMARY_MAX_SENTENCES sentences,
    CONTENT_MAX_WORDS words or CONTENT_MAX_CHARS characters is cut after its last whole
    sentence within all three, if at least SUMMARY_MIN_SENTENCES remain. `cut`: the answer was
    cut off (finish_reason "length"), so its last sentence, unfinished, is dropped too. What a
    cut cannot repair (too short, not text) is returned as it came, for validation to refuse."""
    if isinstance(title, str):
        title = validation.title_cut(title)
    if isinstance(content, str):
        text = content.strip()
        if (
            cut
            or validation.sentence_count(text) > validation.SUMMARY_MAX_SENTENCES
            or validation.word_count(text) > validation.CONTENT_MAX_WORDS
            or len(text) > validation.CONTENT_MAX_CHARS
        ):
            fitting = [
                match.end()
                for n, match in enumerate(_SENTENCE_END.finditer(text), 1)
                if n <= validation.SUMMARY_MAX_SENTENCES
                and validation.word_count(text[: match.end()]) <= validation.CONTENT_MAX_WORDS
                and match.end() <= validation.CONTENT_MAX_CHARS
            ]
            if len(fitting) >= validation.SUMMARY_MIN_SENTENCES:
                content = text[: fitting[-1]]
    return title, content


def summary_parsed(answer: str, *, conversation_id: int, cut: bool = False) -> tuple[str, str]:
    """(title, content) from the model's answer, repaired where a cut repairs it
    (`summary_repaired`, logged); else ValueError saying what is wrong with the answer as it
    came and what a cut left wrong (the title's length and the content's, say), in words the
    re-ask shows the model. `cut`: the answer was cut off (finish_reason "length"): its JSON is
    closed where it stops and its unfinished sentence dropped."""
    try:
        return parse_summary(answer)
    except ValueError as exc:
        error = exc
    try:
        data = json_object(answer, cut=cut)
    except ValueError:
        raise error from None
    title, content = summary_repaired(data.get("title"), data.get("content"), cut=cut)
    try:
        parsed = parse_summary(json.dumps({"title": title, "content": content}))
    except ValueError as left:
        raise (error if str(left) == str(error) else ValueError(f"{error} {left}")) from None
    logger.info("summary: conversation %s: the model's answer repaired (%s)", conversation_id, error)
    return parsed


def summary_fallback_store(*, conversation: Conversation, error: str, settled: bool) -> None:
    """Store the fallback memory of a conversation the model could not summarise. `settled`: no
    later attempt is due (a permanent failure); otherwise the summary stays pending, the sweep
    tries again, and a model's summary then replaces the fallback. A student without consent to
    memory gets none: the summary is SKIPPED."""
    if not conversation.student.memory_consent:
        _mark(conversation.pk, Conversation.SummaryStatus.SKIPPED)
        return
    questions = list(
        conversation.messages.filter(role=Message.Role.STUDENT).order_by("seq").values_list("content", flat=True)[:3]
    )
    # In the student's language, the summary's reader.
    with translation.override(conversation.student.language):
        ended = timezone.localtime(conversation.ended_at or timezone.now())
        title, content = fallback_summary(
            subject=conversation.subject,
            date=formats.date_format(ended, "j F Y"),
            questions=questions,
            messages=conversation.message_count,
        )
    with transaction.atomic():
        memory_summary_store(
            student_id=conversation.student_id,
            conversation_id=conversation.pk,
            title=title,
            content=content,
            fallback=True,
        )
        if settled:
            _mark(conversation.pk, Conversation.SummaryStatus.FALLBACK, error)


def summary_fallback_pending(*, conversation_id: int, error: str) -> None:
    """After the last transient retry: a fallback memory now, the summary still pending."""
    conversation = Conversation.objects.select_related("student").filter(pk=conversation_id).first()
    if conversation is not None and conversation.summary_status == Conversation.SummaryStatus.PENDING:
        summary_fallback_store(conversation=conversation, error=error, settled=False)


def is_permanent_database_error(exc: BaseException) -> bool:
    """Whether the same write will fail again: any DatabaseError (data too long, a constraint, bad
    SQL) but a lost or refused connection, a lock or a serialisation failure (OperationalError,
    InterfaceError), which a retry may get past. PostgreSQL's SQLSTATE class 54 (program limit
    exceeded: a key too large for its index) is permanent too, though psycopg files it under
    OperationalError."""
    if isinstance(exc, InterfaceError) or not isinstance(exc, DatabaseError):
        return False
    if isinstance(exc, OperationalError):
        return str(getattr(exc.__cause__, "sqlstate", "") or "").startswith("54")
    return True


def summary_settle_failed(*, conversation_id: int, error: str) -> Outcome:
    """Settle a pending summary that a permanent database error keeps from being stored, once the
    task has retried it SUMMARY_MAX_RETRIES times: the fallback memory is stored if it can be
    (FALLBACK, to be reviewed, like a summary the model could not write), else the summary is
    marked FAILED. Either way it is no longer pending, so the sweep never sends it again (no
    model call is paid for it again), and `summary_error` keeps the error. Never silently lost:
    a conversation is left without a memory only if the fallback cannot be stored either, and
    that is logged with its traceback and shown as FAILED. A summary settled meanwhile is left
    alone (ALREADY_DONE). A transient error while settling propagates: the summary stays pending
    and the sweep tries again later.
    """
    conversation = Conversation.objects.select_related("student").filter(pk=conversation_id).first()
    if conversation is None or conversation.summary_status != Conversation.SummaryStatus.PENDING:
        return Outcome.ALREADY_DONE
    try:
        summary_fallback_store(conversation=conversation, error=error, settled=True)
    except DatabaseError as exc:
        if not is_permanent_database_error(exc):
            raise
        logger.exception(
            "summary: conversation %s: the fallback cannot be stored either; summary marked failed", conversation_id
        )
        Conversation.objects.filter(pk=conversation_id, summary_status=Conversation.SummaryStatus.PENDING).update(
            summary_status=Conversation.SummaryStatus.FAILED, summary_error=error[:300], summary_owner=""
        )
        return Outcome.FAILED
    return Outcome.FALLBACK


def _transcript_within_window(conversation: Conversation, call: dict[str, Any]) -> str:
    """The conversation as a delimited transcript that fits the summary model: whole if it fits,
    else the notes of its parts (each part summarised on its own, oldest first)."""
    profile = call["profile"]
    budget = min(settings.SUMMARY_MAX_TRANSCRIPT_TOKENS, gateway.input_budget(profile) - SUMMARY_PROMPT_TOKENS)
    budget = max(budget, 200)
    rows = list(conversation.messages.order_by("seq").values_list("role", "content", "token_count"))
    if sum(t + MESSAGE_OVERHEAD_TOKENS for *_, t in rows) <= budget:
        return transcript_block([(role, content) for role, content, _ in rows])
    max_words = max(40, min(300, budget // 4 // 2))
    parts: list[list[tuple[str, str]]] = [[]]
    used = 0
    for role, content, tokens in rows:
        cost = min(tokens, budget) + MESSAGE_OVERHEAD_TOKENS
        if parts[-1] and used + cost > budget:
            parts.append([])
            used = 0
        # A message longer than the model's input alone: its beginning.
        parts[-1].append((role, content if tokens <= budget else content[: budget * 3] + " [...]"))
        used += cost
    notes = []
    for part in parts:
        result = gateway.complete(
            messages=part_messages(transcript=transcript_block(part), max_words=max_words),
            purpose=LLMUsage.Purpose.SUMMARY,
            **call,
        )
        notes.append(result.content.strip())
    logger.info("summary: conversation %s summarised in %d parts", conversation.pk, len(parts))
    return notes_transcript(notes)


def pending_summaries_due() -> list[int]:
    """Pending summaries that nothing is working on any more, oldest first (a settled summary,
    done, skipped, settled by a fallback or failed, is never sent again):
    - never started SUMMARY_UNSTARTED_AFTER_SECONDS after they were requested (the broker lost
      the message, or was down when the conversation ended);
    - started by a process of this host that has died (a worker killed mid-call): recovered as
      soon as a worker on this host sweeps, which it does when it starts;
    - untouched for SUMMARY_SWEEP_AFTER_MINUTES (a worker on another host that died).
    """
    now = timezone.now()
    pending = Conversation.objects.filter(summary_status=Conversation.SummaryStatus.PENDING)
    unstarted = Q(
        summary_owner="", summary_requested_at__lte=now - timedelta(seconds=settings.SUMMARY_UNSTARTED_AFTER_SECONDS)
    )
    stale = Q(summary_requested_at__lte=now - timedelta(minutes=settings.SUMMARY_SWEEP_AFTER_MINUTES))
    due = list(pending.filter(unstarted | stale).order_by("summary_requested_at").values_list("pk", flat=True)[:500])
    host = socket.gethostname()
    for pk, owner in pending.filter(summary_owner__startswith=f"{host}:").values_list("pk", "summary_owner")[:500]:
        if pk not in due and not _alive(owner):
            due.append(pk)
    return due


def _alive(owner: str) -> bool:
    try:
        pid = int(owner.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
