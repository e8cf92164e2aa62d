"""The turn, driven: the phases in order, the model awaited with no thread and no connection held.

`turn_open` starts a turn (or finds the stored reply, or joins the turn already answering the
same message) and returns its `TurnFeed` (conversations.turn.feed: the events a client sees).
A turn enters each phase once, in order: the claim (conversations.turn.claim, with the window's
limits: turn.window), the prompt (turn.prompt), the model's rounds with their tool calls
(turn.tools) streamed through screening (conversations.screening), then the finish
(turn.finish).

The turn runs in its own asyncio task (`_drive`), not in the request: a client that goes away
stops reading the feed, and the turn still completes and stores its reply. A retry with the
same `client_message_id` then replays the stored reply, or follows the feed still being
written (in this process), or waits for it (another process): never a second model call.

A stopping server (tutor.server.Drain) lets its turns finish until shortly before its graceful
timeout, then `turns_interrupt` ends the others: each releases its conversation and ends its
feed with an `error` event `server_shutting_down` (retry_safe), so that its streams end cleanly
and its student, retrying with the same `client_message_id` on a server still up, gets the turn
answered there (the model is asked again: its interrupted answer was never stored).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from conversations import screening
from conversations.models import Message
from conversations.turn import prompt
from conversations.turn.claim import (
    NOT_CONFIGURED_FOR_STUDENTS,
    Busy,
    Claimed,
    ConversationBusy,
    Replay,
    release_quietly,
    turn_begin,
    turn_renew,
)
from conversations.turn.feed import ServerShuttingDown, TurnFeed
from conversations.turn.finish import turn_abandon, turn_finish
from conversations.turn.tools import tool_schemas, tools_tokens, turn_tools_run
from core import metrics
from core.db import db_step
from core.drain import DRAIN_RETRY_AFTER_SECONDS
from core.errors import DATABASE_ERRORS, ApplicationError, DatabaseUnavailable, ServiceUnavailable
from llm import gateway
from llm.errors import Wording, model_error
from llm.models import LLMUsage
from llm.tokens import message_tokens

logger = logging.getLogger(__name__)

R = TypeVar("R")


class TurnFailed(ServiceUnavailable):
    code = "turn_failed"
    retry_safe = True


# Turns in progress in this process, by (event loop, student message id), and their tasks (the
# loop keeps only weak references to tasks); the drivers by the same key.
_feeds: dict[tuple[int, int], TurnFeed] = {}
_tasks: set[asyncio.Future[Any]] = set()
_drivers: dict[tuple[int, int], asyncio.Task[None]] = {}
# Set by `turns_interrupt`: the server is stopping, no turn starts or waits any more.
_interrupting = False


async def turn_open(*, user: Any, conversation_id: Any, content: str, client_message_id: str) -> TurnFeed:
    """Start, replay or join the turn of this message. Raises ApplicationError before anything
    is streamed: 404, 403, 409, 503 (no model, database down, conversation busy too long).

    Shielded: a request cancelled while this runs (the client left) does not interrupt it, so a
    turn whose message got stored is always driven to its reply.
    """
    message = {"content": content, "client_message_id": client_message_id}
    opened = await turn_open_checked(lambda: (user, message), conversation_id=conversation_id)
    assert isinstance(opened, TurnFeed)
    return opened


async def turn_open_checked(check: Callable[[], Checked | R], *, conversation_id: Any) -> TurnFeed | R:
    """As `turn_open`, the request's own checks first, in the same database step as the turn's
    first claim (one thread hand-off and one connection for both): `check` (run in that step)
    returns the user and the message's fields (content, client_message_id), or what the request
    answers instead (returned as is, and no turn is opened). The language that step chose (the
    user's) is the caller's afterwards, also when this raises."""
    chosen: list[str] = []
    opening = asyncio.ensure_future(_open(check, conversation_id=conversation_id, chosen=chosen))
    _tasks.add(opening)
    opening.add_done_callback(_tasks.discard)
    try:
        return await asyncio.shield(opening)
    finally:
        if chosen:
            translation.activate(chosen[0])


# What a request's check gives when the turn may go on: the user, and the message's fields.
Checked = tuple[Any, dict[str, Any]]


def _checked_begin(check: Callable[[], Any], conversation_id: Any) -> tuple[Any, Any, prompt.Drafted | None]:
    checked = check()
    if not isinstance(checked, tuple):
        return checked, None, None
    user, message = checked
    return checked, *_begin(user=user, conversation_id=conversation_id, **message)


def _begin(*, user: Any, conversation_id: Any, **message: Any) -> tuple[Replay | Busy | Claimed, prompt.Drafted | None]:
    """The claim, and the prompt's database step with it when no block prepares first
    (prompt.draft_with_claim): the two in one thread hand-off."""
    outcome = turn_begin(user=user, conversation_id=conversation_id, **message)
    return outcome, prompt.draft_with_claim(outcome) if isinstance(outcome, Claimed) else None


async def _open(check: Callable[[], Checked | R], *, conversation_id: Any, chosen: list[str]) -> TurnFeed | R:
    loop = id(asyncio.get_running_loop())
    deadline = time.monotonic() + settings.TURN_WAIT_SECONDS
    pause = 0.02
    followed = False  # this message's turn was in progress in another process when we came
    try:
        checked, outcome, drafted = await _step_before_storing(_checked_begin, check, conversation_id)
    finally:
        # This task's context is a copy of the request's: the language goes back by hand.
        language = translation.get_language()
        if language:
            chosen.append(language)
    if not isinstance(checked, tuple):
        return checked
    user, message = checked
    while True:
        if outcome is None:
            outcome, drafted = await _step_before_storing(_begin, user=user, conversation_id=conversation_id, **message)
        if isinstance(outcome, Replay):
            return TurnFeed.replay(outcome, replayed=not followed)
        if isinstance(outcome, Claimed):
            screen = screening.begin(_screen_turn(outcome))
            try:
                if outcome.over_budget is None:
                    outcome = await prompt.turn_prompt(outcome, drafted)
                notice = await screen.before_model()
                if outcome.over_budget is not None and (notice is None or not notice.fallback_reply):
                    # Past the budget, only a crisis is answered (with the notice's own reply).
                    await asyncio.shield(
                        db_step(release_quietly, conversation_id=outcome.conversation_id, token=outcome.token)
                    )
                    raise outcome.over_budget
            except BaseException:
                screen.cancel()
                raise
            feed = TurnFeed()
            feed.start(outcome.student_message)
            if notice is not None:
                for event in notice.events:
                    feed.add_tool_event(event)
            key = (loop, outcome.student_message.pk)
            _feeds[key] = feed
            task = asyncio.create_task(_drive(outcome, feed, key, screen, notice))
            _tasks.add(task)
            task.add_done_callback(_tasks.discard)
            _drivers[key] = task
            return feed
        if outcome.student_message is not None:
            following = _feeds.get((loop, outcome.student_message.pk))
            if following is not None:
                return following
            followed = True
        if _interrupting:
            raise _shutting_down(outcome.student_message)
        if time.monotonic() > deadline:
            if outcome.student_message is not None:
                raise ConversationBusy(
                    gettext("Your message is saved and still being answered; retry with the same client_message_id."),
                    details={"student_message_id": outcome.student_message.pk},
                )
            raise ConversationBusy(
                gettext(
                    "The previous message in this conversation is still being answered; your message was not "
                    "stored. Send it again in a moment."
                )
            )
        await asyncio.sleep(pause)
        pause = min(pause * 1.5, 0.25)
        outcome = None


async def _step_before_storing(fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """A database step of the claim, whose connection may not be had (the pool's timeout, the
    database down): DatabaseUnavailable, which says the message was not stored."""
    try:
        return await db_step(fn, *args, **kwargs)
    except DATABASE_ERRORS as exc:
        logger.error("turn: database unavailable before storing: %s", exc)
        raise DatabaseUnavailable(
            gettext("The database is unavailable; your message was not stored. Send it again in a moment.")
        ) from exc


def _screen_turn(claim: Claimed) -> screening.ScreenTurn:
    language = claim.conversation.student.language if claim.conversation is not None else ""
    return screening.ScreenTurn(
        student_id=claim.student_id,
        conversation_id=claim.conversation_id,
        message=claim.student_message,
        language=language or translation.get_language() or "en",
    )


def _with_notice(messages: list[dict[str, Any]], notice: screening.Notice | None) -> list[dict[str, Any]]:
    """The prompt with the notice's instructions at the end of its system prompt (a system
    message of their own first when the prompt has none): some chat templates refuse a system
    message anywhere but first."""
    if notice is None or not notice.instructions:
        return messages
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "system" and isinstance(first.get("content"), str):
        return [{**first, "content": f"{first['content']}\n\n{notice.instructions}"}, *messages[1:]]
    return [{"role": "system", "content": notice.instructions}, *messages]


async def _screened_reply(
    screen: screening.TurnScreen, notice: screening.Notice | None, feed: TurnFeed, content: str
) -> tuple[str, str | None]:
    """The reply to store, and the withheld original if screening replaced it: a replaced reply
    is sent whole in a `reply_replaced` event; a notice's suffix follows as a last delta."""
    suffix = notice.reply_suffix if notice is not None else ""
    replacement = await screen.check_reply(content)
    if replacement is None:
        rest = screen.held_back() + suffix
        if rest:
            feed.publish("delta", {"content": rest})
        return content + suffix, None
    feed.publish(screening.REPLY_REPLACED, {"content": replacement + suffix})
    return replacement + suffix, content


async def _drive(
    claim: Claimed,
    feed: TurnFeed,
    key: tuple[int, int],
    screen: screening.TurnScreen,
    notice: screening.Notice | None = None,
) -> None:
    """Run the model rounds of a claimed turn, screen and store the reply. Never raises: every
    failure ends the feed with an `error` event, and the student's message stays stored; in a
    turn screening found a crisis in, a model that cannot answer gives the notice's reply, and so
    does a turn past the spend budget (only a crisis is driven then) without asking the model."""
    usage: list[LLMUsage] = []
    renewal = asyncio.create_task(_renew(claim))
    metrics.TURNS_RUNNING.inc()
    finishing: asyncio.Future[Message] | None = None
    original: str | None = None
    try:
        try:
            if claim.over_budget is not None and notice is not None:
                content, prompt_tokens, completion_tokens, model = _fallback(claim, feed, notice)
            else:
                async with asyncio.timeout(settings.TURN_DEADLINE_SECONDS):
                    content, prompt_tokens, completion_tokens, model = await _converse(
                        claim, feed, usage, screen, notice
                    )
                content, original = await _screened_reply(screen, notice, feed, content)
        except TimeoutError:
            if notice is None or not notice.fallback_reply:
                raise gateway.LLMUnavailable(
                    f"the turn took more than {settings.TURN_DEADLINE_SECONDS:.0f} s"
                ) from None
            content, prompt_tokens, completion_tokens, model = _fallback(claim, feed, notice)
        except gateway.LLMError as exc:
            if notice is None or not notice.fallback_reply:
                raise
            logger.error(
                "conversation %s: the model failed in a crisis turn (%s); the notice's reply is stored",
                claim.conversation_id,
                exc,
            )
            content, prompt_tokens, completion_tokens, model = _fallback(claim, feed, notice)
        finishing = asyncio.ensure_future(
            db_step(
                turn_finish,
                claim=claim,
                content=content,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                model=model,
                usage=usage,
                events=feed.stored_events,
            )
        )
        # Shielded: a reply being stored is stored and shown, even if the server stops meanwhile.
        reply = await asyncio.shield(finishing)
        # Before `done`: a replaced reply's flag is recorded by then (only a replaced one waits).
        await asyncio.shield(screen.reply_stored(reply, original))
        feed.finish(reply)
    except gateway.LLMError as exc:
        await _abandon(claim, usage)
        feed.fail(_turn_error(exc, claim))
    except ApplicationError as exc:  # the message cannot fit the window learned meanwhile
        await _abandon(claim, usage)
        feed.fail(exc)
    except DATABASE_ERRORS as exc:
        logger.error("conversation %s: database unavailable during the turn: %s", claim.conversation_id, exc)
        feed.fail(
            DatabaseUnavailable(
                gettext(
                    "The database became unavailable. Your message is saved; retrying with the same "
                    "client_message_id is safe."
                ),
                details={"student_message_id": claim.student_message.pk},
            )
        )
    except Exception:
        logger.exception("conversation %s: the turn failed", claim.conversation_id)
        await _abandon(claim, usage)
        feed.fail(
            TurnFailed(
                gettext(
                    "The turn failed unexpectedly. Your message is saved; retrying with the same "
                    "client_message_id is safe."
                ),
                details={"student_message_id": claim.student_message.pk},
            )
        )
    except asyncio.CancelledError:
        if _interrupting:
            await _interrupted(claim, usage, feed, finishing)
        raise
    finally:
        metrics.TURNS_RUNNING.dec()
        outcome = "ok" if feed.reply is not None else feed.error.code if feed.error is not None else "interrupted"
        metrics.turn_observed(outcome=outcome, seconds=time.monotonic() - feed.opened_at)
        renewal.cancel()
        if feed.reply is None:
            screen.cancel()
        feed.close()
        _feeds.pop(key, None)
        _drivers.pop(key, None)


def _fallback(claim: Claimed, feed: TurnFeed, notice: screening.Notice) -> tuple[str, int, int, str]:
    """The notice's own reply, streamed as one delta, when the model cannot answer."""
    content = notice.fallback_reply + notice.reply_suffix
    feed.publish("delta", {"content": content})
    return content, 0, 0, ""


async def _interrupted(
    claim: Claimed, usage: list[LLMUsage], feed: TurnFeed, finishing: asyncio.Future[Message] | None
) -> None:
    """A turn cancelled by `turns_interrupt`: a reply already being stored ends it as usual;
    otherwise its conversation is released for the retry and its feed ends with the error."""
    logger.warning("conversation %s: turn interrupted, the server is stopping", claim.conversation_id)
    try:
        if finishing is not None:
            feed.finish(await finishing)
            return
        await _abandon(claim, usage)
    except Exception:
        logger.exception("conversation %s: the interrupted turn could not be settled", claim.conversation_id)
    feed.fail(_shutting_down(claim.student_message))


def _shutting_down(student_message: Message | None) -> ServerShuttingDown:
    details: dict[str, Any] = {"retry_after_seconds": DRAIN_RETRY_AFTER_SECONDS}
    if student_message is None:
        return ServerShuttingDown(
            gettext("The server is restarting; your message was not stored. Send it again in a moment."),
            details=details,
        )
    return ServerShuttingDown(
        gettext("The server is restarting. Your message is saved; retrying with the same client_message_id is safe."),
        details={"student_message_id": student_message.pk, **details},
    )


def turns_running() -> bool:
    """Whether this process is driving or opening a turn (the drain waits for them)."""
    return bool(_tasks)


async def turns_interrupt() -> int:
    """End the turns this process is still driving, the server being about to stop: each
    releases its conversation (its usage so far recorded) and ends its feed with an `error`
    event `server_shutting_down` (retry_safe, with its student message's id), which ends its
    streams and the requests waiting for it; a request still waiting to open a turn gets the
    same error. Returns how many turns were interrupted."""
    global _interrupting
    _interrupting = True
    loop = id(asyncio.get_running_loop())
    drivers = [task for (task_loop, _), task in list(_drivers.items()) if task_loop == loop]
    for task in drivers:
        task.cancel()
    await asyncio.gather(*drivers, return_exceptions=True)
    return len(drivers)


async def _converse(
    claim: Claimed,
    feed: TurnFeed,
    usage: list[LLMUsage],
    screen: screening.TurnScreen,
    notice: screening.Notice | None,
) -> tuple[str, int, int, str]:
    """Stream the model, running its tool calls between rounds, until it answers with text.
    The deltas reach the client as screening clears them, and stop once it withholds the reply."""
    profile = gateway.chat_profile()
    messages = _with_notice(claim.messages, notice)
    prompt_tokens = completion_tokens = 0
    model = profile.model_id

    async def on_delta(text: str) -> None:
        if not feed.first_token_seen:
            feed.first_token_seen = True
            metrics.turn_first_token(time.monotonic() - feed.opened_at)
        shown = screen.shown(text)
        if shown:
            feed.publish("delta", {"content": shown})

    shortened = False
    for _ in range(settings.MAX_TOOL_ROUNDS + 1):
        try:
            result = await gateway.stream(
                messages=messages,
                purpose=LLMUsage.Purpose.CHAT,
                profile=profile,
                on_delta=on_delta,
                usage_sink=usage,
                student_id=claim.student_id,
                conversation_id=claim.conversation_id,
                tools=tool_schemas(claim.tools),
                max_tokens=claim.max_tokens,
            )
        except gateway.LLMContextExceeded as exc:
            if shortened:
                raise
            # Longer than the model's window after all: rebuild the prompt for the window the
            # server named (or a smaller guess), compressing harder, and try once more.
            shortened = True
            sent = sum(message_tokens(m) for m in messages) + tools_tokens(claim.tools)
            claim = await prompt.turn_reprompt(
                claim=claim, sent_tokens=sent, window=exc.window, requested=exc.requested
            )
            messages = _with_notice(claim.messages, notice)
            continue
        prompt_tokens += result.prompt_tokens
        completion_tokens += result.completion_tokens
        model = result.model or model
        if not result.tool_calls:
            return result.content, prompt_tokens, completion_tokens, model
        outcomes = await db_step(
            turn_tools_run,
            conversation_id=claim.conversation_id,
            student_id=claim.student_id,
            calls=result.tool_calls,
            message_id=claim.student_message.pk,
            tools=claim.tools,
        )
        for outcome in outcomes:
            for event in outcome.result.events:
                feed.add_tool_event(event)
        messages = [
            *messages,
            {
                # "" and not null: llama-cpp-python's server refuses a null content.
                "role": "assistant",
                "content": result.content or "",
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in result.tool_calls
                ],
            },
            *({"role": "tool", "tool_call_id": o.call.id, "content": o.result.text} for o in outcomes),
        ]
    raise gateway.LLMBadResponse("the model kept calling tools without answering")


async def _renew(claim: Claimed) -> None:
    interval = settings.TURN_LEASE_SECONDS / 3
    while True:
        await asyncio.sleep(interval)
        try:
            if not await db_step(turn_renew, conversation_id=claim.conversation_id, token=claim.token):
                logger.warning("conversation %s: the turn's lease was taken over", claim.conversation_id)
                return
        except DATABASE_ERRORS as exc:
            logger.warning("conversation %s: lease not renewed: %s", claim.conversation_id, exc)


async def _abandon(claim: Claimed, usage: list[LLMUsage]) -> None:
    try:
        await db_step(turn_abandon, claim=claim, usage=usage)
    except DATABASE_ERRORS as exc:
        logger.error("conversation %s: failed turn not recorded (database down): %s", claim.conversation_id, exc)


# What a student is told when the model fails: the message is kept, a retry is safe.
MODEL_WORDING = Wording(
    not_configured=NOT_CONFIGURED_FOR_STUDENTS,
    bad_response=gettext_noop(
        "The tutor model gave an unusable answer (%(reason)s). Your message is saved; retrying with "
        "the same client_message_id is safe."
    ),
    unavailable=gettext_noop(
        "The tutor model is unavailable (%(reason)s). Your message is saved; retrying with the same "
        "client_message_id is safe."
    ),
)


def _turn_error(exc: gateway.LLMError, claim: Claimed) -> ApplicationError:
    if isinstance(exc, gateway.LLMNotConfigured):
        logger.warning("conversation %s: the chat model is not configured: %s", claim.conversation_id, exc)
    return model_error(exc, MODEL_WORDING, details={"student_message_id": claim.student_message.pk})
