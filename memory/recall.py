"""Recall: the student's memories most relevant to a text, best first.

Hybrid recall, in order:
1. lexical candidates: the database's full-text engine (memory.fts), BM25, top RECALL_LEXICAL_DEPTH;
2. semantic candidates: cosine similarity between the query's embedding and the student's
   memory vectors (memory.embeddings), top RECALL_SEMANTIC_DEPTH. On PostgreSQL the vectors are
   ranked in the database by one statement (memory.vector_search, pgvector), and nothing is kept
   in the process; on SQLite they are decoded once per process into a numpy matrix per student
   and kept until the student's embeddings change (memory.vector_cache);
3. optional time decay, applied to each signal's score *before* ranking or standardising it,
   never to the fused score (a fused score is bounded or shifted: multiplying it breaks the
   ranking);
   The semantic score of a memory mixes the similarity of its whole text with that of its best
   sentence (RECALL_SENTENCE_MIX): a question usually matches one sentence of a memory. Only
   the RECALL_SENTENCE_SHORTLIST memories closest as a whole are scored by sentence, so the
   cost stays one matrix-vector product over whole-memory vectors plus a small one;
   the topic signal: the query without the words in at least RECALL_TOPIC_COMMON_SHARE of the
   student's memories (`topic_text`; document frequencies from the full-text index) is embedded
   in the same call as the query, and each candidate's best-sentence similarity to it is a third
   signal (RECALL_TOPIC_WEIGHT). Without such words the topic vector is the query's own;
4. score fusion (RECALL_SCORE_FUSION, the default): over the union of the two candidate lists,
   each signal's scores are standardised (z-score: minus their mean, over their standard
   deviation) and the fused score is RECALL_LEXICAL_WEIGHT * max(z(lexical), -RECALL_LEXICAL_FLOOR)
   + RECALL_SEMANTIC_WEIGHT * max(z(semantic), -RECALL_SEMANTIC_FLOOR) + RECALL_TOPIC_WEIGHT *
   z(topic). The floors: a signal far below its mean for a memory mostly says that it did not
   see it (a paraphrase has no word in common with the query, a sentence embedding reads a name
   and misses the point), not that the memory is wrong, so one blind signal cannot bury a
   memory that another ranks high; what a signal sees above its mean counts in full. (Flooring
   the topic signal too was measured worse.) A candidate found by one list only still has
   every signal: its semantic and topic scores come from the vector matrix (the least similar
   candidate's if it has no current vector), its lexical score is 0 (it did not match, or
   matched less than the whole lexical list). Unlike rank fusion, this keeps how far
   apart the scores are: a clear winner in one signal is not flattened to "rank 1". The fused
   score is shifted so that the weakest candidate scores 1 (scores stay positive for the bonus
   below). With RECALL_SCORE_FUSION off: weighted reciprocal rank fusion, sum of
   weight / (RECALL_RRF_K + rank) over the two lists. Either costs O(candidates).
   A query that names a date ("on 3 June 2023", "in March 2024"; memory.query_dates) adds a
   third term, RECALL_DATE_WEIGHT * exp(-d / RECALL_DATE_SCALE_DAYS), d being how many days
   the memory's created_at lies outside the named day or month (0 inside). It is not
   standardised: a memory of the named day gains the full weight, in z-score units. The
   memories of the named spans (at most RECALL_DATE_CANDIDATES, one indexed query) join the
   candidates, so a session found only by its date is still recalled;
5. a relation bonus: memories related to the top RECALL_RELATION_SEEDS fused results (same
   conversation, supersession chain, explicit link) get RECALL_RELATION_WEIGHT times the
   seed's score added.

If the embedder is not configured, not installed, down or slow, recall is lexical only; a memory
without a current vector (not embedded yet, or embedded by another model during a migration)
is still found lexically. Recall never raises for an embedder failure.

Scoping: `recall` takes a student id and is called on behalf of that student (the chat turn) or
after the caller resolved the student through `accounts.selectors.students_visible_to`
(`memory.selectors.memory_search`). Every query here filters on that student id (the related
memories' query checks it on each row, see `related_ids`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from memory import embeddings, fts, query_dates, vector_search
from memory.models import AIMemory
from memory.vector_cache import StudentVectors, vector_cache

__all__ = ["STRATEGIES", "RecallConfig", "RecallResult", "recall", "vector_cache"]

logger = logging.getLogger(__name__)

STRATEGIES = ("latest", "lexical", "semantic", "hybrid")


@dataclass(frozen=True)
class RecallConfig:
    lexical_depth: int = 50
    semantic_depth: int = 50
    rrf_k: float = 60.0
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    relation_weight: float = 0.0
    relation_seeds: int = 3
    decay_half_life_days: float = 0.0
    decay_floor: float = 0.5
    sentence_mix: float = 0.5
    sentence_shortlist: int = 200
    score_fusion: bool = True
    date_weight: float = 3.0
    date_scale_days: float = 7.0
    date_candidates: int = 20
    topic_weight: float = 0.6
    topic_common_share: float = 0.5
    topic_min_memories: int = 5
    lexical_floor: float = 0.4
    semantic_floor: float = 0.3

    @classmethod
    def from_settings(cls) -> RecallConfig:
        """Every field from its RECALL_<FIELD> setting (tutor/settings/base.py)."""
        return cls(**{f.name: getattr(settings, f"RECALL_{f.name.upper()}") for f in fields(cls)})

    def with_(self, **changes: Any) -> RecallConfig:
        return replace(self, **changes)


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    related: bool = False


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


# --- Recall ----------------------------------------------------------------------------------


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
    config = config or RecallConfig.from_settings()
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

    chosen: embeddings.Embedder | None = None
    stats_rows: list[Any] | None = None
    frequencies: tuple[int, dict[str, int]] | None = None  # the query terms' (n_docs, dfs), for the topic
    if strategy in ("semantic", "hybrid"):
        chosen = embeddings.get_embedder() if embedder is True else (embedder or None)
        if chosen is not None and connection.vendor == "postgresql":
            # The query terms' statistics serve both the lexical search and the topic signal.
            t = time.perf_counter()
            terms = fts.query_terms(query, language)
            stats_rows = fts.pg_statistics(student_id=student_id, terms=terms)
            frequencies = fts.pg_frequencies(stats_rows, terms)
            timings["stats_ms"] = (time.perf_counter() - t) * 1000

    lexical: list[tuple[int, float]] = []
    if strategy in ("lexical", "hybrid"):
        t = time.perf_counter()
        lexical = fts.search(
            student_id=student_id,
            query=query,
            language=language,
            limit=config.lexical_depth,
            pg_stats_rows=stats_rows,
        )
        timings["lexical_ms"] = (time.perf_counter() - t) * 1000

    semantic: list[tuple[int, float]] = []
    scores: SemanticScores | None = None
    degraded = ""
    embed_ms = 0.0
    if strategy in ("semantic", "hybrid"):
        t = time.perf_counter()
        semantic, scores, degraded, embed_ms = _semantic(
            student_id=student_id,
            query=query,
            language=language,
            frequencies=frequencies,
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
            lexical = fts.search(student_id=student_id, query=query, language=language, limit=config.lexical_depth)

    if lexical and config.decay_half_life_days > 0:
        lexical = _decay_lexical(lexical, config=config, now=now)

    t = time.perf_counter()
    if config.score_fusion:
        spans = query_dates.date_spans(query, language, now) if config.date_weight > 0 else []
        hits = _fuse_scores(lexical, semantic, scores, config, student_id=student_id, spans=spans)
    else:
        hits = _fuse(lexical, semantic, config)
    if config.relation_weight > 0 and hits:
        hits = _relation_bonus(student_id=student_id, hits=hits, config=config)
    timings["fusion_ms"] = (time.perf_counter() - t) * 1000
    mode = strategy if not degraded else "lexical"
    search_ms = (time.perf_counter() - started) * 1000 - embed_ms
    return RecallResult(hits[:limit], mode, degraded, embed_ms, search_ms, timings)


def _decay(ages_days: np.ndarray, config: RecallConfig) -> np.ndarray:
    factor: np.ndarray = config.decay_floor + (1 - config.decay_floor) * np.power(
        0.5, np.maximum(ages_days, 0) / config.decay_half_life_days
    )
    return factor


_QUERY_WORD = re.compile(r"\w+(?:['\u2019]\w+)?", re.UNICODE)  # keeps "Alice's" whole


def topic_text(query: str, *, language: str, n_docs: int, dfs: dict[str, int], share: float) -> str | None:
    """`query` without the words found in at least `share` of the student's `n_docs` memories
    (`dfs`: document frequency of each index term), or None if no word is that common.

    The student's own name, or the subject every one of their notes mentions, tells none of
    their memories apart; in a short question it still weighs on the sentence embedding as much
    as the topic does. Stop words stay (the embedder reads "when did" and "what" as intent). A
    query made only of common words is returned as None too (nothing to refocus on).
    """
    kept: list[str] = []
    dropped = False
    for word in _QUERY_WORD.findall(query):
        terms = fts.analyse(word, language)
        if terms and all(dfs.get(term, 0) >= share * n_docs for term in terms):
            dropped = True
        else:
            kept.append(word)
    if not dropped or not any(fts.analyse(word, language) for word in kept):
        return None
    return " ".join(kept)


def topic_query(
    *,
    student_id: int,
    query: str,
    language: str,
    config: RecallConfig,
    frequencies: tuple[int, dict[str, int]] | None = None,
) -> str | None:
    """The topic text of `query` for this student (see `topic_text`). `frequencies`: the query
    terms' (n_docs, {term: df}) if the lexical search already read them, else one indexed query."""
    terms = fts.analyse(query, language)
    if not terms:
        return None
    n_docs, dfs = frequencies or fts.document_frequencies(student_id=student_id, terms=terms)
    if n_docs < max(config.topic_min_memories, 1):
        return None
    return topic_text(query, language=language, n_docs=n_docs, dfs=dfs, share=config.topic_common_share)


def _semantic(
    *,
    student_id: int,
    query: str,
    language: str,
    frequencies: tuple[int, dict[str, int]] | None,
    depth: int,
    config: RecallConfig,
    now: datetime,
    query_vector: np.ndarray | None,
    topic_vector: np.ndarray | None,
    embedder: embeddings.Embedder | None,
    use_cache: bool,
    timings: dict[str, float],
    lexical_ids: list[int],
) -> tuple[list[tuple[int, float]], SemanticScores | None, str, float]:
    """(candidates, the candidates' scores, why degraded or "", ms spent embedding the query).
    `embedder`: the one recall resolved; `lexical_ids`: the lexical candidates, scored too."""
    chosen = embedder
    if chosen is None:
        return [], None, "no embedder configured", 0.0
    embed_ms = 0.0
    topic = None
    if config.topic_weight > 0:
        t = time.perf_counter()
        topic = topic_query(
            student_id=student_id, query=query, language=language, config=config, frequencies=frequencies
        )
        timings["topic_ms"] = (time.perf_counter() - t) * 1000
    try:
        # The query and its topic text are embedded in one call; a recent query is not embedded
        # again (embeddings.embed_queries keeps EMBEDDINGS_QUERY_CACHE_SIZE of them).
        texts = ([query] if query_vector is None else []) + ([topic] if topic and topic_vector is None else [])
        if texts:
            t = time.perf_counter()
            embedded = embeddings.embed_queries(chosen, texts)
            embed_ms = (time.perf_counter() - t) * 1000
            if query_vector is None:
                query_vector, embedded = embedded[0], embedded[1:]
            if topic and topic_vector is None:
                topic_vector = embedded[0]
        t = time.perf_counter()
        if connection.vendor == "postgresql":
            q = np.asarray(query_vector, dtype=np.float32)
            topic_q = np.asarray(topic_vector, dtype=np.float32) if topic and topic_vector is not None else None
            if topic_q is None and config.topic_weight > 0:
                topic_q = q  # nothing to strip: the topic is the query itself
            ranked = _pg_ranked(student_id, chosen.name, q, topic_q, depth, lexical_ids, config, now)
            timings["vectors_ms"] = (time.perf_counter() - t) * 1000
            scores = SemanticScores.from_database(ranked, lambda ids: _pg_ranked(
                student_id, chosen.name, q, topic_q, 0, ids, config, now))
            by_id = dict(zip(ranked.ids.tolist(), ranked.scores.tolist(), strict=True))
            return [(pk, by_id[pk]) for pk in ranked.top], scores, "", embed_ms
        vectors = vector_cache.get(student_id, chosen.name, use_cache=use_cache)
        timings["vectors_ms"] = (time.perf_counter() - t) * 1000
    except embeddings.EmbedderUnavailable as exc:
        logger.warning("recall: embedder unavailable, lexical only: %s", exc)
        return [], None, f"embedder unavailable: {exc}", embed_ms
    except Exception as exc:
        # Recall is a bonus: a broken embedder (bad model files, out of memory) must not fail
        # the chat. Logged with its traceback; the lexical signal still runs.
        logger.exception("recall: semantic search failed, lexical only")
        return [], None, f"semantic search failed: {type(exc).__name__}", embed_ms
    if vectors.ids.size == 0:
        return [], None, "", embed_ms
    q = np.asarray(query_vector, dtype=np.float32)
    if q.shape[0] != vectors.matrix.shape[1]:
        logger.warning("recall: query vector has %d dims, stored vectors %d", q.shape[0], vectors.matrix.shape[1])
        return [], None, "dimension mismatch", embed_ms
    sims = vectors.matrix @ q
    if config.sentence_mix > 0 and vectors.sentence_matrix.shape[0]:
        sims = _sentence_mix(sims, vectors, q, config)
    if config.decay_half_life_days > 0:
        ages = (now.timestamp() - vectors.created) / 86400.0
        sims = sims * _decay(ages, config)
    n = min(depth, sims.shape[0])
    top = np.argpartition(-sims, n - 1)[:n] if n < sims.shape[0] else np.arange(sims.shape[0])
    top = top[np.argsort(-sims[top], kind="stable")]
    topic_q = None
    if topic and topic_vector is not None:
        topic_q = np.asarray(topic_vector, dtype=np.float32)
    elif config.topic_weight > 0:
        topic_q = q  # nothing to strip: the topic is the query itself
    every = SemanticScores(vectors.ids, sims, vectors.created, vectors, topic_q)
    return [(int(vectors.ids[i]), float(sims[i])) for i in top], every, "", embed_ms


def _pg_ranked(
    student_id: int, model: str, q: np.ndarray, topic: np.ndarray | None, depth: int, extra: list[int],
    config: RecallConfig, now: datetime,
) -> vector_search.Ranked:
    return vector_search.search(
        student_id=student_id, model=model, query=q, topic=topic, depth=depth, extra=extra,
        shortlist=config.sentence_shortlist, mix=config.sentence_mix,
        half_life_days=config.decay_half_life_days, decay_floor=config.decay_floor, now=now,
    )  # fmt: skip


@dataclass(frozen=True)
class SemanticScores:
    """Semantic scores by memory id (ids sorted ascending): of every memory with a current vector
    (SQLite: the cached matrix, `vectors`), or of those the database returned (PostgreSQL: the
    top and the candidates asked for, with their topic similarity in `topic_scores`; `fetch`
    scores more of them, see `including`)."""

    ids: np.ndarray
    scores: np.ndarray
    created: np.ndarray | None = None  # epoch seconds of each memory's created_at
    vectors: StudentVectors | None = None
    topic: np.ndarray | None = None  # the topic text's vector (see topic_text)
    topic_scores: np.ndarray | None = None
    fetch: Callable[[list[int]], vector_search.Ranked] | None = None

    @classmethod
    def from_database(
        cls, ranked: vector_search.Ranked, fetch: Callable[[list[int]], vector_search.Ranked]
    ) -> SemanticScores:
        return cls(ranked.ids, ranked.scores, ranked.created, topic_scores=ranked.topic, fetch=fetch)

    def including(self, memory_ids: list[int]) -> SemanticScores:
        """These scores with those of `memory_ids` the database has not returned yet (one more
        query, PostgreSQL only: the memories found by their date alone)."""
        known = set(self.ids.tolist())
        missing = [pk for pk in memory_ids if pk not in known]
        if self.fetch is None or not missing:
            return self
        more = self.fetch(missing)
        ids = np.concatenate([self.ids, more.ids])
        order = np.argsort(ids, kind="stable")
        created = self.created if self.created is not None else np.full(self.ids.shape[0], np.nan)
        topic = self.topic_scores if self.topic_scores is not None else np.full(self.ids.shape[0], np.nan)
        return replace(
            self,
            ids=ids[order],
            scores=np.concatenate([self.scores, more.scores])[order],
            created=np.concatenate([created, more.created])[order],
            topic_scores=np.concatenate([topic, more.topic])[order],
        )

    def of(self, memory_ids: list[int]) -> np.ndarray:
        """Their scores, NaN for a memory without a vector. O(len(memory_ids) * log n)."""
        return self._lookup(memory_ids, self.scores)

    def topic_of(self, memory_ids: list[int]) -> np.ndarray:
        """Each memory's best-sentence similarity to the topic vector (whole-memory similarity
        for a memory of one sentence), NaN without a vector. Computed for these memories only:
        O(their sentences)."""
        if self.topic_scores is not None:
            return self._lookup(memory_ids, self.topic_scores)
        wanted = np.asarray(memory_ids, dtype=np.int64)
        out = np.full(wanted.shape[0], np.nan)
        v = self.vectors
        if self.topic is None or v is None or self.ids.size == 0:
            return out
        pos = np.clip(np.searchsorted(self.ids, wanted), 0, self.ids.size - 1)
        found = self.ids[pos] == wanted
        rows = pos[found]
        best = v.matrix[rows] @ self.topic
        has = v.sentence_count[rows] > 0
        if has.any():
            best[has] = _best_sentence(v, rows[has], self.topic)
        out[found] = best
        return out

    def created_of(self, memory_ids: list[int]) -> np.ndarray:
        """Their created_at (epoch seconds), NaN for a memory without a vector."""
        return self._lookup(memory_ids, self.created) if self.created is not None else np.full(len(memory_ids), np.nan)

    def _lookup(self, memory_ids: list[int], values: np.ndarray) -> np.ndarray:
        wanted = np.asarray(memory_ids, dtype=np.int64)
        if self.ids.size == 0:
            return np.full(wanted.shape[0], np.nan)
        pos = np.clip(np.searchsorted(self.ids, wanted), 0, self.ids.size - 1)
        return np.where(self.ids[pos] == wanted, values[pos], np.nan)


def _best_sentence(vectors: StudentVectors, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The best sentence similarity to `q` of each of these memories (matrix rows that all have
    sentences): one product over just their sentences."""
    counts = vectors.sentence_count[rows]
    starts = np.cumsum(counts) - counts
    flat = np.repeat(vectors.sentence_start[rows], counts) + (np.arange(counts.sum()) - np.repeat(starts, counts))
    best: np.ndarray = np.maximum.reduceat(vectors.sentence_matrix[flat] @ q, starts)
    return best


def _sentence_mix(sims: np.ndarray, vectors: StudentVectors, q: np.ndarray, config: RecallConfig) -> np.ndarray:
    """Mix each shortlisted memory's whole-text similarity with its best sentence's."""
    n = sims.shape[0]
    k = min(config.sentence_shortlist, n)
    short = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
    short = short[vectors.sentence_count[short] > 0]
    if short.size == 0:
        return sims
    best = _best_sentence(vectors, short, q)
    mixed = sims.copy()
    # max(best, whole) >= whole, so a shortlisted memory never falls below one outside the
    # shortlist, which keeps its whole-text score: the order between the two groups holds.
    mixed[short] = (1 - config.sentence_mix) * sims[short] + config.sentence_mix * np.maximum(best, sims[short])
    return mixed


def _decay_lexical(lexical: list[tuple[int, float]], *, config: RecallConfig, now: datetime) -> list[tuple[int, float]]:
    created = dict(AIMemory.objects.filter(pk__in=[pk for pk, _ in lexical]).values_list("pk", "created_at"))
    ages = np.array([(now - created[pk]).total_seconds() / 86400.0 if pk in created else 0.0 for pk, _ in lexical])
    factors = _decay(ages, config)
    decayed = [(pk, score * float(f)) for (pk, score), f in zip(lexical, factors, strict=True)]
    return sorted(decayed, key=lambda x: -x[1])


def _fuse(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]], config: RecallConfig) -> list[Hit]:
    scores: dict[int, float] = {}
    lex_rank: dict[int, int] = {}
    sem_rank: dict[int, int] = {}
    for rank, (pk, _) in enumerate(lexical, start=1):
        lex_rank[pk] = rank
        scores[pk] = scores.get(pk, 0.0) + config.lexical_weight / (config.rrf_k + rank)
    for rank, (pk, _) in enumerate(semantic, start=1):
        sem_rank[pk] = rank
        scores[pk] = scores.get(pk, 0.0) + config.semantic_weight / (config.rrf_k + rank)
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(pk, score, lex_rank.get(pk), sem_rank.get(pk)) for pk, score in ordered]


def _standardise(values: np.ndarray) -> np.ndarray:
    """z-scores of `values` (all zero when they are all equal)."""
    std = float(values.std())
    if values.size < 2 or std <= 1e-12:
        return np.zeros_like(values)
    standardised: np.ndarray = (values - values.mean()) / std
    return standardised


def _fuse_scores(
    lexical: list[tuple[int, float]],
    semantic: list[tuple[int, float]],
    scores: SemanticScores | None,
    config: RecallConfig,
    *,
    student_id: int,
    spans: list[query_dates.Span],
) -> list[Hit]:
    """Weighted sum of the standardised lexical and semantic scores over the candidates' union,
    plus the date term when the query names dates."""
    lex_rank = {pk: rank for rank, (pk, _) in enumerate(lexical, start=1)}
    sem_rank = {pk: rank for rank, (pk, _) in enumerate(semantic, start=1)}
    candidates = list(dict.fromkeys([pk for pk, _ in lexical] + [pk for pk, _ in semantic]))
    created: dict[int, float] = {}
    if spans and (lexical or semantic):
        created = _dated_candidates(
            student_id=student_id, candidates=candidates, scores=scores, spans=spans, config=config
        )
        known = set(candidates)
        candidates += [pk for pk in created if pk not in known]
        if scores is not None:
            scores = scores.including(candidates)
    if not candidates:
        return []
    fused = np.zeros(len(candidates))
    if lexical:
        lex_score = dict(lexical)
        lex_z = _standardise(np.array([lex_score.get(pk, 0.0) for pk in candidates]))
        fused += config.lexical_weight * np.maximum(lex_z, -config.lexical_floor)
    if semantic and scores is not None:
        sem = scores.of(candidates)
        # A memory without a current vector (not embedded yet) counts as the least similar.
        sem = np.where(np.isnan(sem), np.nanmin(sem), sem)
        fused += config.semantic_weight * np.maximum(_standardise(sem), -config.semantic_floor)
        if config.topic_weight > 0 and (scores.topic is not None or scores.topic_scores is not None):
            topical = scores.topic_of(candidates)
            if not np.isnan(topical).all():
                topical = np.where(np.isnan(topical), np.nanmin(topical), topical)
                fused += config.topic_weight * _standardise(topical)
    if created:
        fused += config.date_weight * _date_match(candidates, created, spans, config)
    fused = fused - fused.min() + 1.0
    ordered = sorted(zip(candidates, fused.tolist(), strict=True), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(pk, score, lex_rank.get(pk), sem_rank.get(pk)) for pk, score in ordered]


def _dated_candidates(
    *,
    student_id: int,
    candidates: list[int],
    scores: SemanticScores | None,
    spans: list[query_dates.Span],
    config: RecallConfig,
) -> dict[int, float]:
    """created_at (epoch seconds) of the candidates, and of up to `date_candidates` more memories
    of the spans. The semantic scores know the candidates' dates; the database is asked for those it
    does not know and for the memories of the spans (the index on student, status, created_at)."""
    tz = timezone.get_current_timezone()
    created: dict[int, float] = {}
    if scores is not None and candidates:
        when = scores.created_of(candidates)
        created = {pk: float(w) for pk, w in zip(candidates, when.tolist(), strict=True) if not np.isnan(w)}
    active = AIMemory.objects.active().filter(student_id=student_id)
    unknown = [pk for pk in candidates if pk not in created]
    if unknown:
        created.update((pk, at.timestamp()) for pk, at in active.filter(pk__in=unknown).values_list("pk", "created_at"))
    within = Q()
    for span in spans:
        start, end = (datetime.fromtimestamp(b, tz) for b in query_dates.span_bounds(span, tz))
        within |= Q(created_at__gte=start, created_at__lt=end)
    extra = active.filter(within).exclude(pk__in=candidates).order_by("-created_at", "-id")
    limit = max(config.date_candidates, 0)
    created.update((pk, at.timestamp()) for pk, at in extra.values_list("pk", "created_at")[:limit])
    return created


def _date_match(
    candidates: list[int], created: dict[int, float], spans: list[query_dates.Span], config: RecallConfig
) -> np.ndarray:
    """exp(-days outside the nearest named span / scale) per candidate (0 if its date is unknown)."""
    tz = timezone.get_current_timezone()
    when = np.array([created.get(pk, np.nan) for pk in candidates])
    best = np.zeros(len(candidates))
    for span in spans:
        start, end = query_dates.span_bounds(span, tz)
        outside = np.maximum(np.maximum(start - when, when - end), 0.0) / 86400.0
        best = np.maximum(best, np.nan_to_num(np.exp(-outside / max(config.date_scale_days, 1e-6)), nan=0.0))
    return best


# One statement, a branch per relation, each driven by an index: the seeds' conversation
# (source_conversation), memories superseding a seed (supersedes), the memory a seed supersedes
# and explicit links (primary keys). Only the student's own seeds are followed (the CTE), and
# each related memory is checked to be the student's and active on its own row: `+student_id`
# keeps SQLite from walking the student's whole (student, status, created_at) index instead.
_RELATED_SQL = """
WITH s AS (
    SELECT id, source_conversation_id, supersedes_id FROM memory_aimemory
    WHERE id IN ({seeds}) AND student_id = %s
)
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.source_conversation_id = s.source_conversation_id
WHERE +m.student_id = %s AND m.status = %s AND m.id <> s.id
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.supersedes_id = s.id
WHERE +m.student_id = %s AND m.status = %s
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.id = s.supersedes_id
WHERE +m.student_id = %s AND m.status = %s
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory_links l ON l.from_aimemory_id = s.id
JOIN memory_aimemory m ON m.id = l.to_aimemory_id
WHERE +m.student_id = %s AND m.status = %s AND m.id <> s.id
"""


def related_ids(*, student_id: int, memory_ids: Iterable[int]) -> dict[int, set[int]]:
    """For each given memory, the student's active memories related to it (not itself): same
    conversation, supersession chain (either direction), explicit link. One query."""
    seeds = [int(pk) for pk in memory_ids]
    result: dict[int, set[int]] = {pk: set() for pk in seeds}
    if not seeds:
        return result
    marks = ", ".join(["%s"] * len(seeds))
    active = str(AIMemory.Status.ACTIVE)
    branch: list[int | str] = [student_id, active]
    params: list[int | str] = [*seeds, student_id, *branch * 4]
    with connection.cursor() as cursor:
        cursor.execute(_RELATED_SQL.format(seeds=marks), params)
        for seed, pk in cursor.fetchall():
            if seed in result and pk != seed:
                result[seed].add(pk)
    return result


def _relation_bonus(*, student_id: int, hits: list[Hit], config: RecallConfig) -> list[Hit]:
    seeds = hits[: config.relation_seeds]
    relations = related_ids(student_id=student_id, memory_ids=[h.memory_id for h in seeds])
    by_id = {h.memory_id: h for h in hits}
    bonus: dict[int, float] = {}
    for seed in seeds:
        for pk in relations.get(seed.memory_id, ()):
            bonus[pk] = max(bonus.get(pk, 0.0), config.relation_weight * seed.score)
    for pk, extra in bonus.items():
        hit = by_id.get(pk)
        by_id[pk] = replace(hit, score=hit.score + extra, related=True) if hit else Hit(pk, extra, related=True)
    return sorted(by_id.values(), key=lambda h: (-h.score, -h.memory_id))


# --- The memory block's budget --------------------------------------------------------------


def memory_item(memory: AIMemory) -> Any:
    from conversations.prompts import MemoryItem

    return MemoryItem(
        title=memory.title,
        content=memory.content,
        source=memory.source,
        created_at=memory.created_at,
        conversation_id=memory.source_conversation_id,
    )


# Tokens that format_memory adds around a memory's stored "title\ncontent" count: the date, the
# source label, the conversation id, the bullet and the indent. An upper bound, checked in the
# tests for every source, so the block never overruns its budget.
MEMORY_FORMAT_OVERHEAD_TOKENS = 24


def memory_block_cost(memory: AIMemory) -> int:
    """Tokens this memory adds to the block, from its stored count (no re-tokenising)."""
    if memory.token_count:
        return memory.token_count + MEMORY_FORMAT_OVERHEAD_TOKENS + 1  # +1: the joining newline
    from conversations.prompts import format_memory
    from llm.tokens import count_tokens

    return count_tokens(format_memory(memory_item(memory))) + 1


@lru_cache(maxsize=1)
def memory_block_frame_tokens() -> int:
    from conversations.prompts import MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN, MEMORY_PREAMBLE
    from llm.tokens import count_tokens

    return count_tokens("\n".join([MEMORY_BLOCK_OPEN, MEMORY_PREAMBLE, MEMORY_BLOCK_CLOSE]))


def memory_block_tokens(memories: list[AIMemory]) -> int:
    """An upper bound of the memory block's tokens, from the memories' stored counts."""
    if not memories:
        return 0
    return memory_block_frame_tokens() + sum(memory_block_cost(m) for m in memories)


def fit_memory_budget(
    memories: list[AIMemory], *, budget: int, skip_larger: bool = True, frame: bool = True
) -> list[AIMemory]:
    """The memories, in priority order, that fit a memory block of at most `budget` tokens.

    A memory that does not fit is skipped and smaller ones after it may still go in, unless
    `skip_larger` is False: then the first that does not fit ends the list (the newest are kept).
    Returned newest first, the order the block shows them in. Each memory is counted as it will
    be formatted (with its date and source) from its stored token count, plus the block's frame
    unless `frame` is False (memories added to a block counted already).
    """
    used = memory_block_frame_tokens() if frame else 0
    chosen = []
    for memory in memories:
        cost = memory_block_cost(memory)
        if used + cost <= budget:
            chosen.append(memory)
            used += cost
        elif not skip_larger:
            break
    return sorted(chosen, key=lambda m: (m.created_at, m.pk), reverse=True)
