"""Recall: the student's active memories most relevant to a text, best first.

Hybrid: lexical candidates (BM25) and semantic ones (memory vectors, with a topic signal) from
the database's search (memory.search.backend) through memory.search.recall.candidates, fused by
standardised scores (or ranks), with a date term and a relation bonus, by
memory.search.recall.fusion; tuned by RecallConfig (memory.search.recall.config: code defaults,
the same in tests and production). docs/recall.md says how and why, with the figures.

Contract:
- Scoping: `recall` takes a student id and is called on behalf of that student (the chat turn)
  or after the caller resolved the student through `accounts.selectors.students_visible_to`
  (`memory.selectors.memory_search`). Every query filters on that student id (the related
  memories' query checks it on each row, see `fusion.related_ids`).
- Never raises because of the embedder: not configured, not installed, down, slow or broken,
  recall is lexical only (`RecallResult.mode` and `degraded` say so). A memory without a current
  vector is still found lexically.
- Reads only: writes nothing but, with the openai embedder, the query embedding's LLMUsage row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.utils import timezone

from accounts.models import User
from memory.models import AIMemory
from memory.search import embeddings, fts, query_dates
from memory.search.backend import search_backend
from memory.search.engine import QueryStatistics
from memory.search.recall.candidates import semantic_candidates, topic_query, topic_text
from memory.search.recall.config import RecallConfig
from memory.search.recall.fusion import Hit, decay_lexical, fuse_ranks, fuse_scores, related_ids, relation_bonus
from memory.search.scores import SemanticScores
from memory.search.vector_cache import vector_cache

__all__ = [
    "STRATEGIES",
    "Hit",
    "RecallConfig",
    "RecallResult",
    "recall",
    "related_ids",
    "student_language",
    "topic_query",
    "topic_text",
    "vector_cache",
]

STRATEGIES = ("latest", "lexical", "semantic", "hybrid")


@dataclass
class RecallResult:
    hits: list[Hit]
    mode: str  # what actually ran: latest, lexical, semantic, hybrid (lexical if degraded)
    degraded: str = ""  # why the semantic signal is missing, if it is
    embed_ms: float = 0.0
    search_ms: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ids(self) -> list[int]:
        return [h.memory_id for h in self.hits]


def student_language(student_id: int) -> str:
    language = User.objects.filter(pk=student_id).values_list("language", flat=True).first()
    return language or fts.DEFAULT_LANGUAGE


def recall(
    *,
    student_id: int,
    query: str,
    limit: int = 10,
    strategy: str = "hybrid",
    language: str | None = None,
    config: RecallConfig | None = None,
    now: datetime | None = None,
    query_vector: np.ndarray | None = None,
    topic_vector: np.ndarray | None = None,
    embedder: embeddings.Embedder | bool | None = True,
    use_cache: bool = True,
) -> RecallResult:
    """The student's active memories most relevant to `query`, best first (at most `limit`).

    `strategy` is one of STRATEGIES. `embedder=True` means the configured one; pass None to
    force lexical, or an embedder instance. `query_vector` skips embedding the query (the
    evaluation embeds questions in batches), `topic_vector` embedding its topic text
    (`topic_query`). Never raises because the embedder failed.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown recall strategy {strategy!r}")
    config = config or RecallConfig()
    started = time.perf_counter()
    if strategy == "latest":
        ids = list(
            AIMemory.objects.active()
            .filter(student_id=student_id)
            .order_by("-created_at", "-id")
            .values_list("pk", flat=True)[:limit]
        )
        hits = [Hit(pk, 1.0 / (i + 1)) for i, pk in enumerate(ids)]
        return RecallResult(hits, "latest", search_ms=(time.perf_counter() - started) * 1000)

    language = language or student_language(student_id)
    now = now or timezone.now()
    timings: dict[str, float] = {}

    backend = search_backend()
    chosen: embeddings.Embedder | None = None
    statistics: QueryStatistics | None = None  # the query terms' statistics, where read up front
    if strategy in ("semantic", "hybrid"):
        chosen = embeddings.get_embedder() if embedder is True else (embedder or None)
        if chosen is not None:
            # The query terms' statistics serve both the lexical search and the topic signal.
            t = time.perf_counter()
            statistics = backend.query_statistics(student_id=student_id, terms=fts.query_terms(query, language))
            if statistics is not None:
                timings["stats_ms"] = (time.perf_counter() - t) * 1000

    lexical: list[tuple[int, float]] = []
    if strategy in ("lexical", "hybrid"):
        t = time.perf_counter()
        lexical = backend.lexical(
            student_id=student_id,
            query=query,
            language=language,
            limit=config.lexical_depth,
            statistics=statistics,
        )
        timings["lexical_ms"] = (time.perf_counter() - t) * 1000

    semantic: list[tuple[int, float]] = []
    scores: SemanticScores | None = None
    degraded = ""
    embed_ms = 0.0
    if strategy in ("semantic", "hybrid"):
        t = time.perf_counter()
        semantic, scores, degraded, embed_ms = semantic_candidates(
            student_id=student_id,
            query=query,
            language=language,
            frequencies=statistics.frequencies if statistics is not None else None,
            depth=config.semantic_depth,
            config=config,
            now=now,
            query_vector=query_vector,
            topic_vector=topic_vector,
            embedder=chosen,
            use_cache=use_cache,
            lexical_ids=[pk for pk, _ in lexical],
            timings=timings,
        )
        timings["semantic_ms"] = (time.perf_counter() - t) * 1000 - embed_ms
        if degraded and strategy == "semantic":
            # Semantic asked for but impossible: lexical is the fallback, never nothing.
            lexical = backend.lexical(student_id=student_id, query=query, language=language, limit=config.lexical_depth)

    if lexical and config.decay_half_life_days > 0:
        lexical = decay_lexical(lexical, config=config, now=now)

    t = time.perf_counter()
    if config.score_fusion:
        spans = query_dates.date_spans(query, language, now) if config.date_weight > 0 else []
        hits = fuse_scores(lexical, semantic, scores, config, student_id=student_id, spans=spans)
    else:
        hits = fuse_ranks(lexical, semantic, config)
    if config.relation_weight > 0 and hits:
        hits = relation_bonus(student_id=student_id, hits=hits, config=config)
    timings["fusion_ms"] = (time.perf_counter() - t) * 1000
    mode = strategy if not degraded else "lexical"
    search_ms = (time.perf_counter() - started) * 1000 - embed_ms
    return RecallResult(hits[:limit], mode, degraded, embed_ms, search_ms, timings)
