"""Memory search on PostgreSQL (memory.search.backend's interface): everything in the database.

- Lexical: an inverted index in models ranked by BM25 in SQL, with MaxScore pruning
  (memory.search.postings).
- Semantic: the student's vectors ranked by pgvector in one statement
  (memory.search.vector_search). Nothing is kept in the process between queries, so no memory
  revision is counted for a cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from time import perf_counter

import numpy as np

from memory.search import postings, vector_search
from memory.search.engine import QueryStatistics
from memory.search.fts import IndexRow, analyse
from memory.search.scores import SemanticScores
from memory.search.tuning import RecallConfig


class PostgresSearch:
    vendor = "postgresql"

    def revision_next(self, student_id: int) -> int:
        """0: no vector cache to keep fresh, nothing to lock, nothing to count."""
        return 0

    def index(self, rows: Iterable[IndexRow]) -> None:
        postings.memory_index([(r.memory_id, r.student_id, analyse(r.text, r.language)) for r in rows])

    def unindex(self, memory_ids: Iterable[int]) -> None:
        postings.memory_unindex([int(pk) for pk in memory_ids])

    def refresh_statistics(self, student_id: int) -> None:
        postings.statistics_rebuild(student_id)

    def indexed_ids(self, student_id: int) -> set[int]:
        return postings.indexed_ids(student_id)

    def document_frequencies(self, *, student_id: int, terms: list[str]) -> tuple[int, dict[str, int]]:
        """Read from the stored statistics (one indexed query)."""
        terms = list(dict.fromkeys(terms))
        return postings.pg_frequencies(postings.pg_statistics(student_id=student_id, terms=terms), terms)

    def query_statistics(self, *, student_id: int, terms: list[str]) -> QueryStatistics | None:
        rows = postings.pg_statistics(student_id=student_id, terms=terms)
        return QueryStatistics(frequencies=postings.pg_frequencies(rows, terms), rows=rows)

    def lexical(
        self,
        *,
        student_id: int,
        query: str,
        language: str,
        limit: int,
        statistics: QueryStatistics | None = None,
    ) -> list[tuple[int, float]]:
        return postings.search(
            student_id=student_id,
            query=query,
            language=language,
            limit=limit,
            stats_rows=statistics.rows if statistics is not None else None,
        )

    def semantic(
        self,
        *,
        student_id: int,
        model: str,
        query: np.ndarray,
        topic: np.ndarray | None,
        depth: int,
        extra: list[int],
        config: RecallConfig,
        now: datetime,
        use_cache: bool,
        timings: dict[str, float],
    ) -> tuple[list[tuple[int, float]], SemanticScores | None, str]:
        """The database returns the top and the `extra` memories' scores; the scores ask it for
        more when the fusion needs them (`SemanticScores.including`)."""

        def ranked(depth: int, extra: list[int]) -> vector_search.Ranked:
            return vector_search.search(
                student_id=student_id, model=model, query=query, topic=topic, depth=depth, extra=extra,
                shortlist=config.sentence_shortlist, mix=config.sentence_mix,
                half_life_days=config.decay_half_life_days, decay_floor=config.decay_floor, now=now,
            )  # fmt: skip

        t = perf_counter()
        found = ranked(depth, extra)
        timings["vectors_ms"] = (perf_counter() - t) * 1000
        scores = SemanticScores.from_database(found, lambda ids: ranked(0, ids))
        by_id = dict(zip(found.ids.tolist(), found.scores.tolist(), strict=True))
        return [(pk, by_id[pk]) for pk in found.top], scores, ""
