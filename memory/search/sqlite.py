"""Memory search on SQLite (memory.search.backend's interface): FTS5 and the in-process vectors.

- Lexical: an FTS5 table `memory_fts` (rowid = memory id) of the analysed text
  (memory.search.fts), ranked by FTS5's `bm25()`. A `scope` column holds one token per student
  (`s42`), so the student filter is part of the full-text match itself and costs nothing per
  other student.
- Semantic: the student's vectors decoded once into the process (memory.search.vector_cache,
  which follows the student's memory revision) and ranked with numpy.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from time import perf_counter

import numpy as np
from django.db import connection, transaction

from memory.models import StudentMemoryRevision
from memory.search.engine import QueryStatistics
from memory.search.fts import IndexRow, analyse, query_terms
from memory.search.scores import SemanticScores, rank_held
from memory.search.tuning import RecallConfig
from memory.search.vector_cache import vector_cache

logger = logging.getLogger(__name__)

# No RETURNING: SQLite has it only since 3.35, Django 5.2 supports 3.31. The row stays locked
# until the caller's transaction ends, which orders one student's writes (see
# StudentMemoryRevision); the read after it sees the transaction's value.
_REVISION_NEXT_SQL = (
    "INSERT INTO memory_studentmemoryrevision (student_id, revision) VALUES (%s, 1)"
    " ON CONFLICT (student_id) DO UPDATE SET revision = memory_studentmemoryrevision.revision + 1"
)


def _scope(student_id: int) -> str:
    return f"s{int(student_id)}"


def _fts5_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class SqliteSearch:
    vendor = "sqlite"

    def revision_next(self, student_id: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(_REVISION_NEXT_SQL, [student_id])
        return StudentMemoryRevision.objects.values_list("revision", flat=True).get(pk=student_id)

    def index(self, rows: Iterable[IndexRow]) -> None:
        prepared = [(r.memory_id, r.student_id, analyse(r.text, r.language)) for r in rows]
        if not prepared:
            return
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany("DELETE FROM memory_fts WHERE rowid = %s", [(pk,) for pk, _, _ in prepared])
            cursor.executemany(
                "INSERT INTO memory_fts (rowid, scope, body) VALUES (%s, %s, %s)",
                [(pk, _scope(student), " ".join(terms)) for pk, student, terms in prepared],
            )

    def unindex(self, memory_ids: Iterable[int]) -> None:
        ids = [int(pk) for pk in memory_ids]
        if not ids:
            return
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany("DELETE FROM memory_fts WHERE rowid = %s", [(pk,) for pk in ids])

    def refresh_statistics(self, student_id: int) -> None:
        """FTS5 keeps its own statistics: nothing to do."""

    def indexed_ids(self, student_id: int) -> set[int]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH %s", [f"scope : {_scope(student_id)}"])
            return {int(r[0]) for r in cursor.fetchall()}

    def document_frequencies(self, *, student_id: int, terms: list[str]) -> tuple[int, dict[str, int]]:
        """Counted from FTS5's matches: one statement, a count per term."""
        terms = list(dict.fromkeys(terms))
        scope = f"scope : {_scope(student_id)}"
        matches = [scope] + [f"{scope} AND body : {_fts5_quote(t)}" for t in terms]
        count = "(SELECT count(*) FROM memory_fts WHERE memory_fts MATCH %s)"
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join([count] * len(matches)), matches)
            row = cursor.fetchone()
        return int(row[0]), {term: int(df) for term, df in zip(terms, row[1:], strict=True)}

    def query_statistics(self, *, student_id: int, terms: list[str]) -> QueryStatistics | None:
        """None: FTS5's search reads its own statistics."""
        return None

    def lexical(
        self,
        *,
        student_id: int,
        query: str,
        language: str,
        limit: int,
        statistics: QueryStatistics | None = None,
    ) -> list[tuple[int, float]]:
        terms = query_terms(query, language)
        if not terms or limit <= 0:
            return []
        match = f"scope : {_scope(student_id)} AND body : ({' OR '.join(_fts5_quote(t) for t in terms)})"
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT rowid, bm25(memory_fts, 0.0, 1.0) AS rank FROM memory_fts "
                "WHERE memory_fts MATCH %s ORDER BY rank LIMIT %s",
                [match, limit],
            )
            # FTS5's bm25() is negative, lower is better.
            return [(int(pk), -float(score)) for pk, score in cursor.fetchall()]

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
        """Every vector of the student is scored, so `extra` needs nothing more."""
        t = perf_counter()
        vectors = vector_cache.get(student_id, model, use_cache=use_cache)
        timings["vectors_ms"] = (perf_counter() - t) * 1000
        if vectors.ids.size == 0:
            return [], None, ""
        if query.shape[0] != vectors.matrix.shape[1]:
            logger.warning(
                "recall: query vector has %d dims, stored vectors %d", query.shape[0], vectors.matrix.shape[1]
            )
            return [], None, "dimension mismatch"
        found, every = rank_held(vectors, query=query, topic=topic, depth=depth, config=config, now=now)
        return found, every, ""
