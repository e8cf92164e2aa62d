"""What a web or worker process does before its first request or task: load the local embedder
and the learned safety screen (seconds of model start-up that would otherwise fall on the first
student's message) and say in
the log which chat model, summary model, embedder and context windows it uses, and which classes
have no crisis alert recipient of their own (safety.unrouted)."""

from __future__ import annotations

import logging
import threading
import time

from core.db import connection_release
from llm import gateway
from memory.search import embeddings
from safety import learned, unrouted

logger = logging.getLogger("tutor.startup")


def warm_up(*, safety_screen: bool = True, queries: bool = True) -> None:
    """Never raises: a process starts even if the model server or the embedder is not ready.
    `safety_screen`: load the learned safety screen too (a web process); a worker loads it when
    its first sweep screens a message, so that a worker that never screens does not hold it.
    `queries`: load the local embedder's query side (a web process embeds queries only); else its
    fp32 model, which embeds memories (a worker). The other side loads at its first use."""
    try:
        unrouted.recipients_report()
    finally:
        connection_release()
    for label, profile in (("chat", gateway.chat_profile()), ("summary", gateway.background_profile())):
        if not gateway.is_configured(profile):
            logger.warning(
                "%s model: not configured (the chat answers 503 until LLM_BASE_URL or LLM_API_KEY is set)", label
            )
            continue
        try:
            window = gateway.context_window(profile)
        except Exception:
            logger.exception("%s model: the context window could not be resolved", label)
            continue
        where = profile.base_url or "OpenAI"
        logger.info(
            "%s model: %s at %s, context window %d tokens (%s)",
            label,
            profile.model,
            where,
            window.tokens,
            window.source,
        )
    if safety_screen:
        _warm_up_safety()
    try:
        backend = embeddings.backend_name()
        embedder = embeddings.get_embedder()
        if embedder is None:
            logger.info("embedder: none (recall is lexical only)")
            return
        started = time.monotonic()
        if isinstance(embedder, embeddings.LocalEmbedder):
            (embedder.embed_query if queries else embedder.embed)(["warm-up"])
        logger.info(
            "embedder: %s %s, queries in %s, ready in %.1f s",
            backend,
            embedder.name,
            embeddings.query_precision(embedder),
            time.monotonic() - started,
        )
    except Exception:
        logger.exception("embedder: could not be loaded; recall falls back to lexical until it can")


def _warm_up_safety() -> None:
    """Load the learned safety screen in a thread of its own: the process serves at once, and a
    message screened before it is loaded waits for it (safety.guard.LINE_WAIT_SECONDS in a
    turn, then the rules alone decide the turn's notice)."""
    if not learned.enabled():
        logger.info("safety: the rules alone (SAFETY_LEARNED is off)")
        return

    def load() -> None:
        started = time.monotonic()
        try:
            learned.warm_up()
        except Exception:
            logger.exception("safety: the learned screen could not be loaded; the rules screen alone until it can")
            return
        logger.info("safety: the rules and the learned screen, ready in %.1f s", time.monotonic() - started)

    threading.Thread(target=load, name="safety-warm-up", daemon=True).start()
