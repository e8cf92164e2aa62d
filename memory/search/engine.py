"""The engines' shared types: what every database's search implements (`SearchBackend`, chosen
by memory.search.backend) and the statistics a query reads once (`QueryStatistics`). Apart from
the factory, so that the engines (memory.search.postgres, .sqlite) and the factory import them
one way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from memory.search.fts import IndexRow
    from memory.search.scores import SemanticScores
    from memory.search.tuning import RecallConfig


@dataclass(frozen=True)
class QueryStatistics:
    """A query's term statistics read once for both the lexical search and the topic signal:
    `frequencies` is (the student's indexed memories, {term: document frequency}); `rows` is
    what the engine read, handed back to its `lexical`."""

    frequencies: tuple[int, dict[str, int]]
    rows: Any


class SearchBackend(Protocol):
    """What recall, the memory services and the lifecycle need from the database's search."""

    vendor: str

    def revision_next(self, student_id: int) -> int:
        """Take the student's next memory revision inside the caller's transaction (the vector
        cache follows it)."""
        ...

    def index(self, rows: Iterable[IndexRow]) -> None:
        """Insert or replace the index entries of these active memories, in one transaction."""
        ...

    def unindex(self, memory_ids: Iterable[int]) -> None:
        """Remove these memories from the index (archived memories are not searched)."""
        ...

    def refresh_statistics(self, student_id: int) -> None:
        """Count the student's index statistics again (after rows were deleted behind the index's
        back); a no-op where the engine keeps its own."""
        ...

    def indexed_ids(self, student_id: int) -> set[int]:
        """The ids of the student's indexed memories."""
        ...

    def document_frequencies(self, *, student_id: int, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(the student's indexed memories, {term: how many of them contain it, 0 if none})."""
        ...

    def query_statistics(self, *, student_id: int, terms: list[str]) -> QueryStatistics | None:
        """The query terms' statistics when reading them up front saves a query (PostgreSQL),
        else None (the topic signal then asks `document_frequencies` if it needs them)."""
        ...

    def lexical(
        self,
        *,
        student_id: int,
        query: str,
        language: str,
        limit: int,
        statistics: QueryStatistics | None = None,
    ) -> list[tuple[int, float]]:
        """The student's active memories matching any term of `query`, best first, as (memory
        id, BM25 score, higher is better). A query without a searchable word finds nothing."""
        ...

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
        """(the `depth` best memories for the `query` vector as (id, score), the scores recall's
        fusion reads, including those of the `extra` memories; why the signal is missing or "").
        The score mixes whole-text and best-sentence similarity and the optional time decay
        (memory.search.recall.config); `topic` is the topic vector the fusion compares with.
        Records "vectors_ms" in `timings`."""
        ...
