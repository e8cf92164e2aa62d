"""Search over a student's memories, apart from their lifecycle.

`backend.search_backend()` is the one interface to the database's search (SQLite: `sqlite`, FTS5
and the in-process `vector_cache`; PostgreSQL: `postgres`, the inverted index of `postings`, the
same `vector_cache` and, for a student not held yet, pgvector's `vector_search`). Around it: the
text analysis (`fts`), the vectors (`embeddings`), the scores recall fuses (`scores`), the dates
a query names (`query_dates`) and the fusion of all of them (`recall`)."""
