"""One interface to search a student's memories, whatever the database: `search_backend()`.

Everything that depends on the database engine sits behind `SearchBackend`: keeping the
full-text index in step with the memories, the lexical and semantic candidates of recall, and
the revision the vector cache follows. There are two implementations, chosen from the
database vendor:

- SQLite (memory.search.sqlite): an FTS5 table ranked by its `bm25()`, and the vectors decoded
  into the process (memory.search.vector_cache) and ranked with numpy;
- PostgreSQL (memory.search.postgres): an inverted index ranked by BM25 in SQL
  (memory.search.postings), and the same vectors held in the process, or, for a student not
  held yet, ranked by pgvector in the database (memory.search.vector_search).

Both rank the same way (the same analysis, memory.search.fts; the same BM25 and scoring), so a
ranking measured on one holds on the other. Callers outside memory.search use this interface,
never an engine's module. The engines' shared types are in memory.search.engine.
"""

from __future__ import annotations

from functools import cache

from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from memory.search.engine import QueryStatistics, SearchBackend

__all__ = ["QueryStatistics", "SearchBackend", "search_backend"]


@cache
def _backend(vendor: str) -> SearchBackend:
    if vendor == "postgresql":
        from memory.search.postgres import PostgresSearch

        return PostgresSearch()
    if vendor == "sqlite":
        from memory.search.sqlite import SqliteSearch

        return SqliteSearch()
    raise ImproperlyConfigured(f"memory search supports SQLite and PostgreSQL, not {vendor}")


def search_backend() -> SearchBackend:
    """The search of the configured database (one instance per database vendor)."""
    return _backend(connection.vendor)
