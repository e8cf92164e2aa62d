"""Memory search on PostgreSQL (memory.search.backend's interface).

- Lexical: an inverted index in models ranked by BM25 in SQL, with MaxScore pruning
  (memory.search.postings).
- Semantic: a student's vectors held in the process (memory.search.vector_cache, as on SQLite:
  kept current by the student's memory revision, one primary-key read per query) are ranked with
  numpy. A student the process does not hold yet is ranked by pgvector in one statement
  (memory.search.vector_search), while the cache's thread loads their vectors for the next
  query; so is every query inside a transaction, whose reads the cache does not keep.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from time import perf_counter

import numpy as np
from django.db import connection

from memory.search import postings, vector_search
from memory.search.engine import QueryStatistics
from memory.search.fts import IndexRow, analyse
from memory.search.scores import SemanticScores, rank_held
from memory.search.tuning import RecallConfig
from memory.search.vector_cache import vector_cache

# The row stays locked until the caller's transaction ends, which orders one student's writes
# (memory.models.StudentMemoryRevision).
_REVISION_NEXT_SQL = (
    "INSERT INTO memory_studentmemoryrevision (student_id, revision) VALUES (%s, 1)"
    " ON CONFLICT (student_id) DO UPDATE SET revision = memory_studentmemoryrevision.revision + 1"
    " RETURNING revision"
)


class PostgresSearch:
    vendor = "postgresql"

    def revision_next(self, student_id: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(_REVISION_NEXT_SQL, [student_id])
            return int(cursor.fetchone()[0])

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
        """From the vectors the process holds, when it holds the student's (every memory's
        score); else the database returns the top and the `extra` memories' scores, the scores
        ask it for more when the fusion needs them (`SemanticScores.including`), and the cache's
        thread loads the student's vectors."""
        if use_cache and not connection.in_atomic_block:
            if vector_cache.holds(student_id, model):
                t = perf_counter()
                held = vector_cache.get(student_id, model)
                if held.ids.size and held.matrix.shape[1] == query.shape[0]:
                    best, every = rank_held(
                        held, query=query, topic=topic, depth=depth, config=config, now=now,
                        decayed_within_shortlist=True,
                    )  # fmt: skip
                    timings["vectors_ms"] = (perf_counter() - t) * 1000
                    return best, every, ""
            else:
                vector_cache.warm(student_id, model)

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
