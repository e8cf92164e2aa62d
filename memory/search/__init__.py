"""Search over a student's memories, apart from their lifecycle: the lexical index (`fts`), the
vectors (`embeddings`, `vector_cache` on SQLite, `vector_search` on PostgreSQL with pgvector),
the dates a query names (`query_dates`) and the fusion of all of them (`recall`)."""
