"""A question answered asynchronously: the model is awaited with no thread and no connection held.

`ask_open` runs the steps before the model (insights.services: the scope and budget were checked
by the request's own step): the model's limits and the question's embedding off the database
threads (llm.offload), then the evidence and prompt in one database step. It raises
ApplicationError before anything is streamed (503 when no model is configured). It returns an
`AskFeed` whose events a client sees, in order:

    delta   {"text": "..."}, the answer as the model writes it (unchecked)
    answer  the stored answer (insights.serializers.AskAnswerOutput), its citations checked: the
            text to show, which may differ from the deltas by the refs it dropped
    error   the error envelope, with retry_safe (the model failed: nothing was stored but its metering)

The answer is driven by its own asyncio task, not by the request: a client that goes away stops
reading, and the answer is still checked and logged.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext, gettext_noop

from core.db import db_step
from core.errors import ServiceUnavailable
from core.feeds import EventFeed
from insights import prompts, services
from insights.models import AskLog
from insights.serializers import answer_data
from llm import gateway
from llm.errors import Wording, model_error
from llm.models import LLMUsage
from llm.offload import offload
from memory.blocks import EmbeddedQueries, query_embedder
from memory.search import embeddings, fts
from memory.search.recall import RecallConfig, topic_query

logger = logging.getLogger(__name__)

# Answers being driven in this process (the loop keeps only weak references to tasks).
_tasks: set[asyncio.Task[None]] = set()


class AskFailed(ServiceUnavailable):
    code = "ask_failed"
    retry_safe = True


class AskFeed(EventFeed):
    """The events of one answer, kept from the start so that a late reader sees them all."""

    def __init__(self) -> None:
        super().__init__()
        self.log: AskLog | None = None

    def finish(self, log: AskLog) -> None:
        self.log = log
        self.publish("answer", answer_data(log))
        self.close()


@dataclass(frozen=True)
class Model:
    profile: gateway.Profile
    limits: services.Limits


def model_limits() -> Model:
    """The chat model's profile and the question's room in its window. Slow the first time (the
    server may be asked its window): run it off the database threads."""
    profile = gateway.chat_profile()
    if not gateway.is_configured(profile):
        raise gateway.LLMNotConfigured(gateway.NOT_CONFIGURED_MESSAGE)
    window = gateway.context_window(profile).tokens
    reserve = gateway.reply_reserve(window)
    answer = min(services.ANSWER_MAX_TOKENS, reserve) if reserve else services.ANSWER_MAX_TOKENS
    return Model(profile, services.Limits(input_tokens=window - max(reserve, answer), answer_tokens=answer))


def _class_query_texts(target: services.Target) -> list[str]:
    """The texts recall embeds for a class's question: itself, and each student's topic text."""
    config = RecallConfig()
    texts = [target.question]
    if config.topic_weight > 0:
        for student in target.students:
            language = student.language or fts.DEFAULT_LANGUAGE
            topic = topic_query(student_id=student.pk, query=target.question, language=language, config=config)
            if topic and topic not in texts:
                texts.append(topic)
    return texts


async def question_embedder(target: services.Target) -> Any:
    """Recall's embedder for the question, its vectors embedded now (memory.blocks); None for
    lexical recall (no embedder, or it failed: logged, the question goes on)."""
    if target.student is not None:
        return await query_embedder(
            student_id=target.student.pk, message=target.question, language=target.student.language
        )
    embedder = embeddings.get_embedder()
    if embedder is None or not target.students:
        return None
    texts = await db_step(_class_query_texts, target)
    try:
        vectors = await offload(embeddings.embed_queries, embedder, texts)
    except Exception as exc:  # recall is a bonus: any embedder failure makes it lexical
        logger.warning("class %s: question not embedded, lexical recall only: %s", target.classroom, exc)
        return None
    return EmbeddedQueries(embedder.name, dict(zip(texts, vectors, strict=True)))


# What an asker is told when the model fails: nothing was stored; teachers and staff are told why
# no model is configured (they may fix it).
MODEL_WORDING = Wording(
    not_configured=None,
    bad_response=gettext_noop("The model gave an unusable answer (%(reason)s). Nothing was stored; ask again."),
    unavailable=gettext_noop("The model is unavailable (%(reason)s). Nothing was stored; ask again."),
)


async def ask_open(target: services.Target) -> AskFeed:
    """Prepare the question and start its answer (see the module docstring)."""
    try:
        model = await offload(model_limits)
    except gateway.LLMError as exc:
        raise model_error(exc, MODEL_WORDING) from exc
    embedder = await question_embedder(target)
    prepared = await db_step(services.ask_prepare, target=target, limits=model.limits, embedder=embedder)
    feed = AskFeed()
    task = asyncio.create_task(_drive(prepared, model, embedder, feed))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return feed


async def _answer(
    prepared: services.Prepared, model: Model, embedder: Any, feed: AskFeed, usage: list[LLMUsage]
) -> tuple[services.Prepared, str, str]:
    """The model's answer (the prepared prompt it answered, its text, the model's name); with no
    evidence, the server's own "the evidence does not answer" and no model call."""
    if not prepared.shown:
        content = prompts.insufficient_sentence(prepared.target.language)
        feed.publish("delta", {"text": content})
        return prepared, content, ""

    async def on_delta(text: str) -> None:
        feed.publish("delta", {"text": text})

    metered = prepared.target.student.pk if prepared.target.student is not None else None
    for attempt in range(2):
        try:
            async with asyncio.timeout(settings.TURN_DEADLINE_SECONDS):
                result = await gateway.stream(
                    messages=prepared.messages,
                    purpose=LLMUsage.Purpose.ASK,
                    profile=model.profile,
                    on_delta=on_delta,
                    usage_sink=usage,
                    student_id=metered,
                    max_tokens=model.limits.answer_tokens,
                )
            return prepared, result.content, result.model or model.profile.model_id
        except gateway.LLMContextExceeded as exc:
            if attempt:
                raise
            # Longer than the server's window after all (its tokenizer counts more): half the
            # room, or what the window it named leaves, and once more.
            room = model.limits.input_tokens // 2
            if exc.window:
                room = min(room, exc.window - model.limits.answer_tokens)
            smaller = services.Limits(input_tokens=max(room, 0), answer_tokens=model.limits.answer_tokens)
            prepared = await db_step(services.ask_prepare, target=prepared.target, limits=smaller, embedder=embedder)
            if not prepared.shown:
                return await _answer(prepared, model, embedder, feed, usage)
    raise AssertionError("unreachable")


async def _drive(prepared: services.Prepared, model: Model, embedder: Any, feed: AskFeed) -> None:
    """Answer, check and store. Never raises: a failure ends the feed with an `error` event,
    and the metering of the calls made is stored."""
    usage: list[LLMUsage] = []
    try:
        try:
            prepared, content, name = await _answer(prepared, model, embedder, feed, usage)
        except TimeoutError:
            raise gateway.LLMUnavailable(f"no answer within {settings.TURN_DEADLINE_SECONDS:.0f} s") from None
        # Shielded: an answer being stored is stored, even if the server stops meanwhile.
        log = await asyncio.shield(
            db_step(services.ask_store, prepared=prepared, content=content, model=name, usage=usage)
        )
        feed.finish(log)
    except gateway.LLMError as exc:
        await _usage_saved(prepared, usage)
        feed.fail(model_error(exc, MODEL_WORDING))
    except Exception:
        logger.exception("the answer to a question failed")
        await _usage_saved(prepared, usage)
        feed.fail(AskFailed(gettext("The answer failed unexpectedly. Nothing was stored; ask again.")))
    finally:
        feed.close()


async def _usage_saved(prepared: services.Prepared, usage: list[LLMUsage]) -> None:
    if not usage:
        return
    try:
        await db_step(services.usage_save, prepared=prepared, usage=usage)
    except Exception:
        logger.exception("the metering of a failed answer could not be stored")
