"""Recall's candidates: the semantic candidates and their scores (SemanticScores), the topic
text, and the memories of the dates a query names. The lexical candidates are memory.search.fts."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.models import AIMemory
from memory.search import embeddings, fts, query_dates, vector_search
from memory.search.recall.config import RecallConfig, decay
from memory.search.vector_cache import StudentVectors, vector_cache

logger = logging.getLogger(__name__)

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


def semantic_candidates(
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
            embedded = embeddings.embed_queries(chosen, texts, student_id=student_id)
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
            scores = SemanticScores.from_database(
                ranked, lambda ids: _pg_ranked(student_id, chosen.name, q, topic_q, 0, ids, config, now)
            )
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
        sims = sims * decay(ages, config)
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
    student_id: int,
    model: str,
    q: np.ndarray,
    topic: np.ndarray | None,
    depth: int,
    extra: list[int],
    config: RecallConfig,
    now: datetime,
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


def dated_candidates(
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
