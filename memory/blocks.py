"""The memory app's prompt block (llm.prompt_blocks): the tiers' facts and approaches, the latest
memories and those recalled for the student's message (memory.selectors.turn_memories), as the
delimited memory block (memory.block). Registered in MemoryConfig.ready(). Absent (nothing read,
nothing shown) for a student without consent to memory (`presence`).

The query's embedding is the slow part of recall: `prepare` reads the message's topic text (one
database step), then embeds the message and its topic off the database-step threads
(llm.offload); `build` recalls with those vectors, and never embeds in its database step.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from django.conf import settings

from accounts.selectors import memory_consent_present
from core import metrics
from core.db import db_step
from llm.offload import offload
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from memory.block import memory_block, memory_item
from memory.budget import memory_block_tokens
from memory.search import embeddings, fts
from memory.search.recall import RecallConfig, topic_query
from memory.selectors import TurnMemories, turn_memories

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EmbeddedQueries:
    """An embedder that only knows the texts embedded before the database step: recall in the
    step finds their vectors here, and any other text makes it lexical (EmbedderUnavailable)."""

    name: str
    vectors: dict[str, np.ndarray]

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        missing = [text for text in texts if text not in self.vectors]
        if missing:
            raise embeddings.EmbedderUnavailable("a query text was not embedded before the database step")
        return np.stack([self.vectors[text] for text in texts]).astype(np.float32)


def _query_texts(*, student_id: int, message: str, language: str) -> list[str]:
    """The texts recall will embed for `message`: itself, and its topic text if it has one."""
    config = RecallConfig()
    topic = None
    if config.topic_weight > 0:
        topic = topic_query(student_id=student_id, query=message, language=language, config=config)
    return [message, topic] if topic else [message]


def query_embedded(message: str) -> bool:
    """Whether recall embeds the query of `message` (an embedder, a message, recall on)."""
    return bool(message.strip()) and settings.MEMORY_RELEVANT_COUNT > 0 and embeddings.get_embedder() is not None


async def query_embedder(*, student_id: int, message: str, language: str) -> EmbeddedQueries | None:
    """The message's (and its topic's) vectors, embedded off the database-step threads; None when
    recall is lexical for this turn (no embedder, or it failed: logged, the turn goes on)."""
    embedder = embeddings.get_embedder()
    if embedder is None or not query_embedded(message):
        return None
    language = language or fts.DEFAULT_LANGUAGE
    texts = await db_step(_query_texts, student_id=student_id, message=message, language=language)
    try:
        vectors = await offload(embeddings.embed_queries, embedder, texts, student_id=student_id)
    except Exception as exc:  # recall is a bonus: any embedder failure makes it lexical
        logger.warning("recall for student %s: query not embedded, lexical only: %s", student_id, exc)
        return None
    return EmbeddedQueries(embedder.name, dict(zip(texts, vectors, strict=True)))


class MemoryBlock(BaseBlock):
    """At most a third of what the window leaves; the 10 latest memories whole first."""

    name = "memories"
    position = 20
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return Need(share=Fraction(1, 3))

    def presence(self, *, student_id: Any) -> list[Any]:
        """Absent for a student without consent to memory (docs/privacy.md#consent-to-memory):
        no memory is read or shown, and the tools that follow this block are not offered."""
        return [memory_consent_present(student_id)]

    def synchronous(self, turn: PromptTurn) -> bool:
        """Nothing to prepare when the student is absent or recall will be lexical (as `query_embedder`
        finds it): `build` then recalls with the configured embedder, none."""
        return self.name in turn.absent or not query_embedded(turn.message)

    async def prepare(self, turn: PromptTurn) -> None:
        if self.name in turn.absent:
            return
        turn.data[self.name] = await query_embedder(
            student_id=turn.student_id, message=turn.message, language=turn.language
        )

    def build(self, turn: PromptTurn, budget: int) -> Part:
        # Prepared: the vectors or None (lexical); not prepared (a caller outside the turn): the
        # configured embedder, inline.
        if self.name in turn.absent:
            return Part()
        embedder: Any = turn.data.get(self.name, True)
        with metrics.RECALL_SECONDS.time():
            shown: TurnMemories = turn_memories(
                student_id=turn.student_id,
                message=turn.message,
                language=turn.language,
                max_tokens=budget,
                embedder=embedder,
            )
        block = memory_block([memory_item(m) for m in shown.memories])
        messages = [{"role": "system", "content": block}] if block else []
        return Part(messages, memory_block_tokens(shown.memories), detail=shown)

    def shown(self, part: Part) -> list[tuple[int, dict[str, Any]]]:
        """The memories of the prompt, in block order, and why (the reply's access log)."""
        memories: TurnMemories | None = part.detail
        if memories is None:
            return []
        return [(m.pk, memories.signals.get(m.pk, {})) for m in memories.memories]
