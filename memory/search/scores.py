"""Semantic scores by memory id: what each database's semantic search returns to recall's fusion."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from memory.search import vector_search
from memory.search.tuning import RecallConfig, decay
from memory.search.vector_cache import StudentVectors


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
            best[has] = best_sentence(v, rows[has], self.topic)
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


def best_sentence(vectors: StudentVectors, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The best sentence similarity to `q` of each of these memories (matrix rows that all have
    sentences): one product over just their sentences."""
    counts = vectors.sentence_count[rows]
    starts = np.cumsum(counts) - counts
    flat = np.repeat(vectors.sentence_start[rows], counts) + (np.arange(counts.sum()) - np.repeat(starts, counts))
    best: np.ndarray = np.maximum.reduceat(vectors.sentence_matrix[flat] @ q, starts)
    return best


def best_first(scores: np.ndarray, k: int) -> np.ndarray:
    """The positions of the `k` highest scores, best first, equal scores by position (the cached
    rows are ordered by memory id, so ties go to the lower id, as the SQL statements order them)."""
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return np.zeros(0, np.int64)
    if k < n:
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        above = np.flatnonzero(scores > kth)
        chosen = np.concatenate([above, np.flatnonzero(scores == kth)[: k - above.size]])
    else:
        chosen = np.arange(n)
    return chosen[np.argsort(-scores[chosen], kind="stable")]


def rank_held(
    vectors: StudentVectors,
    *,
    query: np.ndarray,
    topic: np.ndarray | None,
    depth: int,
    config: RecallConfig,
    now: datetime,
    decayed_within_shortlist: bool = False,
) -> tuple[list[tuple[int, float]], SemanticScores]:
    """The `depth` best of a student's vectors held in the process (memory.search.vector_cache),
    and every memory's score: the whole-text similarity, mixed with the best sentence's for the
    sentence shortlist, times the optional decay. `decayed_within_shortlist`: with a decay, the
    top is drawn from the shortlist only (the shortlist and `depth` closest as a whole), as
    memory.search.vector_search's statement draws it; else from every memory."""
    whole = vectors.matrix @ query
    sims = whole
    if config.sentence_mix > 0 and vectors.sentence_matrix.shape[0]:
        sims = _sentence_mix(whole, vectors, query, config)
    pool = None
    if config.decay_half_life_days > 0:
        ages = (now.timestamp() - vectors.created) / 86400.0
        sims = sims * decay(ages, config)
        if decayed_within_shortlist:
            pool = np.sort(best_first(whole, max(config.sentence_shortlist if config.sentence_mix > 0 else 0, depth)))
    if pool is None:
        top = best_first(sims, min(depth, sims.shape[0]))
    else:
        top = pool[best_first(sims[pool], min(depth, pool.shape[0]))]
    every = SemanticScores(vectors.ids, sims, vectors.created, vectors, topic)
    return [(int(vectors.ids[i]), float(sims[i])) for i in top], every


def _sentence_mix(sims: np.ndarray, vectors: StudentVectors, q: np.ndarray, config: RecallConfig) -> np.ndarray:
    """Mix each shortlisted memory's whole-text similarity with its best sentence's."""
    short = best_first(sims, config.sentence_shortlist)
    short = short[vectors.sentence_count[short] > 0]
    if short.size == 0:
        return sims
    best = best_sentence(vectors, short, q)
    mixed = sims.copy()
    # max(best, whole) >= whole, so a shortlisted memory never falls below one outside the
    # shortlist, which keeps its whole-text score: the order between the two groups holds.
    mixed[short] = (1 - config.sentence_mix) * sims[short] + config.sentence_mix * np.maximum(best, sims[short])
    return mixed
