"""PostgreSQL's full-text index of memories: an inverted index in models, ranked by BM25 in SQL.

The tables (memory.models: Posting, IndexedMemory, TermStatistic, StudentStatistic; their rows
cascade from the memory and the student) hold, per student, what a per-student index would:

- `memory_posting (student_id, term, memory_id, tf, doc_len)`, primary key
  (student_id, term, memory_id): a query term's postings are one range of the key;
- `memory_term_stats (student_id, term, df)` and `memory_student_stats (student_id, n_docs,
  total_len)`, kept up to date with atomic upserts (`df = df + n`) in the write's transaction;
- `memory_doc (memory_id, student_id, doc_len)`: the memories indexed; an edit or an archive
  removes exactly their postings (by memory_id) and subtracts them from the statistics.

Memories are ranked by Okapi BM25 with the student's own statistics (document count, average
length, document frequency of each term). The query scores only the postings of the rarer query
terms (MaxScore pruning, exact): see `search`. The terms are those of memory.search.fts.analyse;
memory.search.postgres serves all of this behind memory.search.backend's interface.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from django.db import connection, transaction

from core.db import server_cursor
from memory.models import IndexedMemory, StudentStatistic, TermStatistic
from memory.search.fts import query_terms

# PostgreSQL lexical search keeps a query's most selective terms (by document frequency).
MAX_QUERY_TERMS = 12


# --- Writing the index --------------------------------------------------------------------------


def memory_index(prepared: list[tuple[int, int, list[str]]]) -> None:
    """Insert or replace the index entries of these (active) memories: (memory id, student id,
    analysed terms)."""
    if not prepared:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        _unindex(cursor, [pk for pk, _, _ in prepared])
        _index(cursor, prepared)


def memory_unindex(ids: list[int]) -> None:
    """Remove these memories from the index (archived memories are not searched)."""
    if not ids:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        _unindex(cursor, ids)


def _index(cursor: Any, prepared: list[tuple[int, int, list[str]]]) -> None:
    """Add postings, documents and statistics (the memories are not indexed: see memory_index).

    Lock order, to never deadlock with another writer: the student statistics rows first (in
    student order), then the term statistics (in (student, term) order). Two memories of one
    student written at once therefore queue on the student's row, and each upsert adds to
    what the other committed.
    """
    docs: dict[str, list[Any]] = {"id": [], "student": [], "len": []}
    post: dict[str, list[Any]] = {"id": [], "student": [], "term": [], "tf": [], "len": []}
    for pk, student, terms in prepared:
        docs["id"].append(pk)
        docs["student"].append(student)
        docs["len"].append(len(terms))
        for term, tf in Counter(terms).items():
            post["id"].append(pk)
            post["student"].append(student)
            post["term"].append(term)
            post["tf"].append(tf)
            post["len"].append(len(terms))
    cursor.execute(
        "INSERT INTO memory_student_stats AS s (student_id, n_docs, total_len) "
        "SELECT student_id, count(*), sum(doc_len) "
        "FROM unnest(%s::bigint[], %s::integer[]) AS d(student_id, doc_len) "
        "GROUP BY student_id ORDER BY student_id "
        "ON CONFLICT (student_id) DO UPDATE SET n_docs = s.n_docs + EXCLUDED.n_docs, "
        "total_len = s.total_len + EXCLUDED.total_len",
        [docs["student"], docs["len"]],
    )
    IndexedMemory.objects.bulk_create(
        IndexedMemory(memory_id=pk, student_id=student, doc_len=length)
        for pk, student, length in zip(docs["id"], docs["student"], docs["len"], strict=True)
    )
    if not post["id"]:
        return
    cursor.execute(
        "INSERT INTO memory_posting (student_id, term, memory_id, tf, doc_len) "
        "SELECT * FROM unnest(%s::bigint[], %s::text[], %s::bigint[], %s::integer[], %s::integer[])",
        [post["student"], post["term"], post["id"], post["tf"], post["len"]],
    )
    cursor.execute(
        "INSERT INTO memory_term_stats AS t (student_id, term, df) "
        "SELECT student_id, term, count(*) FROM unnest(%s::bigint[], %s::text[]) AS u(student_id, term) "
        "GROUP BY student_id, term ORDER BY student_id, term "
        "ON CONFLICT (student_id, term) DO UPDATE SET df = t.df + EXCLUDED.df",
        [post["student"], post["term"]],
    )


def _unindex(cursor: Any, ids: list[int]) -> None:
    """Remove these memories' postings and subtract them from the statistics (same lock order)."""
    cursor.execute(
        "UPDATE memory_student_stats s SET n_docs = s.n_docs - d.n, total_len = s.total_len - d.len "
        "FROM (SELECT student_id, count(*) AS n, sum(doc_len) AS len FROM memory_doc "
        "      WHERE memory_id = ANY(%s::bigint[]) GROUP BY student_id) d "
        "WHERE s.student_id = d.student_id RETURNING s.student_id, s.n_docs",
        [ids],
    )
    students = cursor.fetchall()
    if not students:
        return  # none of them is indexed (a new memory)
    cursor.execute(
        "WITH gone AS (DELETE FROM memory_posting WHERE memory_id = ANY(%s::bigint[]) RETURNING student_id, term) "
        "UPDATE memory_term_stats t SET df = t.df - g.n "
        "FROM (SELECT student_id, term, count(*) AS n FROM gone GROUP BY student_id, term) g "
        "WHERE t.student_id = g.student_id AND t.term = g.term "
        "RETURNING t.student_id, t.term, t.df",
        [ids],
    )
    emptied = [(student, term) for student, term, df in cursor.fetchall() if df <= 0]
    if emptied:
        cursor.execute(
            "DELETE FROM memory_term_stats WHERE (student_id, term) IN "
            "(SELECT * FROM unnest(%s::bigint[], %s::text[]))",
            [[student for student, _ in emptied], [term for _, term in emptied]],
        )
    IndexedMemory.objects.filter(memory_id__in=ids).delete()
    StudentStatistic.objects.filter(student_id__in=[pk for pk, n in students if n <= 0]).delete()


def statistics_rebuild(student_id: int) -> None:
    """Count a student's statistics again from their postings and documents. The index itself
    is exact, but a memory deleted outside the services (its rows cascade) leaves the statistics
    high.

    The student's statistics row is locked first, created if missing, as every writer does
    (`_index`, `_unindex`): a writer of the same student waits for the count, and the count for
    the writer, never both for each other. The row is updated in place, never deleted and
    inserted again while it holds documents: a writer waiting on it then reads the new counts,
    where a row deleted under it would make `_unindex` believe the memories were not indexed.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_student_stats AS s (student_id, n_docs, total_len) VALUES (%s, 0, 0) "
            "ON CONFLICT (student_id) DO UPDATE SET n_docs = s.n_docs",
            [student_id],
        )
        TermStatistic.objects.filter(student_id=student_id).delete()
        cursor.execute(
            "INSERT INTO memory_term_stats (student_id, term, df) SELECT student_id, term, count(*) "
            "FROM memory_posting WHERE student_id = %s GROUP BY student_id, term ORDER BY term",
            [student_id],
        )
        cursor.execute(
            "UPDATE memory_student_stats SET (n_docs, total_len) = "
            "(SELECT count(*), coalesce(sum(doc_len), 0) FROM memory_doc WHERE student_id = %s) "
            "WHERE student_id = %s RETURNING n_docs",
            [student_id, student_id],
        )
        if cursor.fetchone()[0] == 0:
            StudentStatistic.objects.filter(student_id=student_id).delete()


def indexed_ids(student_id: int) -> set[int]:
    """Ids of a student's indexed memories."""
    return set(IndexedMemory.objects.filter(student_id=student_id).values_list("memory_id", flat=True))


def pg_statistics(*, student_id: int, terms: list[str]) -> list[Any]:
    """The rows of PG_STATS_SQL for these query terms (for `search` and `pg_frequencies`)."""
    with server_cursor() as cursor:
        cursor.execute(PG_STATS_SQL, {"student": student_id, "terms": terms})
        return list(cursor.fetchall())


def pg_frequencies(rows: list[Any], terms: list[str]) -> tuple[int, dict[str, int]]:
    """(n_docs, {term: df, 0 if none}) from the rows of PG_STATS_SQL."""
    found = {str(term): int(df) for _, _, term, df in rows if term is not None}
    return (int(rows[0][0]) if rows else 0), {term: found.get(term, 0) for term in terms}


# --- Searching ----------------------------------------------------------------------------------

BM25_K1 = 1.2
BM25_B = 0.75


def search(
    *, student_id: int, query: str, language: str, limit: int, stats_rows: list[Any] | None = None
) -> list[tuple[int, float]]:
    """The student's active memories that match `query`, best first, as (memory id, BM25 score).

    Any query term may match (OR). A query with no searchable word returns nothing.
    `stats_rows`: the rows of PG_STATS_SQL for `query_terms(query)` if the caller read them
    already (recall reads them once for the lexical search and the topic signal).
    """
    terms = query_terms(query, language)
    if not terms or limit <= 0:
        return []
    with server_cursor() as cursor:
        return _search(cursor, student_id, terms, limit, stats_rows)


# A memory's score is the sum over the query terms it contains of
#   idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)),
#   idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
# with N, avgdl and df(t) the student's own. A term contributes at most idf(t) * (k1 + 1).
#
# MaxScore pruning (exact): the query terms are split into the rare "essential" ones and the
# common rest, whose contributions add up to at most REST = sum of their bounds. Only the
# essential terms' postings are scanned; a memory without any of them scores at most REST. The
# memories scored on the essential terms whose partial score plus REST can still reach the
# limit-th best partial score get their exact score (the rest's postings looked up by key).
# If the limit-th exact score is above REST, no other memory can enter the top: the result is
# the exact top. Otherwise the query runs again over all the terms' postings.

# The student's statistics and those of the query's terms (parameters: student, terms): no row if
# the student has nothing indexed, else (n_docs, total_len, term, df) per stored term, one
# (n_docs, total_len, NULL, NULL) row if none of the terms is.
PG_STATS_SQL = """
SELECT s.n_docs, s.total_len, t.term, t.df
FROM memory_student_stats s
LEFT JOIN memory_term_stats t ON t.student_id = s.student_id AND t.term = ANY(%(terms)s::text[])
WHERE s.student_id = %(student)s
"""

# Every constant is cast to float8: with client-side binding a bare 0.75 is a numeric literal, and
# `0.75 * p.doc_len` would be computed in numeric on every posting (a third of the query's time
# on a common term). The values are the same: b * doc_len is exact in float8 too.
_PG_BM25_TERM = (
    "q.idf * p.tf * %(k1p1)s::float8"
    " / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * p.doc_len / %(avgdl)s::float8))"
)

_PG_BM25_ALL = """
SELECT p.memory_id, sum({bm25}) AS score
FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)
JOIN memory_posting p ON p.student_id = %(student)s AND p.term = q.term
GROUP BY p.memory_id
ORDER BY score DESC, p.memory_id DESC
LIMIT %(limit)s
""".replace("{bm25}", _PG_BM25_TERM)

_PG_BM25_PRUNED = """
WITH partial AS MATERIALIZED (
    SELECT p.memory_id, sum({bm25}) AS score
    FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)
    JOIN memory_posting p ON p.student_id = %(student)s AND p.term = q.term
    GROUP BY p.memory_id
),
floor AS (
    SELECT coalesce((SELECT score FROM partial ORDER BY score DESC OFFSET %(limit)s - 1 LIMIT 1), 0)
           - %(rest)s AS v
)
SELECT c.memory_id, c.score + coalesce((
        SELECT sum({bm25})
        FROM memory_posting p
        JOIN unnest(%(rest_terms)s::text[], %(rest_idf)s::float8[]) AS q(term, idf) ON q.term = p.term
        WHERE p.student_id = %(student)s AND p.term = ANY(%(rest_terms)s::text[]) AND p.memory_id = c.memory_id
    ), 0) AS score
FROM partial c, floor
WHERE c.score >= floor.v
ORDER BY score DESC, c.memory_id DESC
LIMIT %(limit)s
""".replace("{bm25}", _PG_BM25_TERM)

# With one term to scan, each memory has one posting of it at most: no grouping (the sum of one
# posting's score is that score, so the scores are the same).
_PG_PARTIAL_GROUPED = """
    SELECT p.memory_id, sum({bm25}) AS score
    FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)
    JOIN memory_posting p ON p.student_id = %(student)s AND p.term = q.term
    GROUP BY p.memory_id
""".replace("{bm25}", _PG_BM25_TERM)
_PG_PARTIAL_ONE = """
    SELECT p.memory_id, {bm25} AS score
    FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)
    JOIN memory_posting p ON p.student_id = %(student)s AND p.term = q.term
""".replace("{bm25}", _PG_BM25_TERM)
_PG_BM25_PRUNED_ONE = _PG_BM25_PRUNED.replace(_PG_PARTIAL_GROUPED, _PG_PARTIAL_ONE)
_PG_BM25_ONE = """
SELECT p.memory_id, {bm25} AS score
FROM unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf)
JOIN memory_posting p ON p.student_id = %(student)s AND p.term = q.term
ORDER BY score DESC, p.memory_id DESC
LIMIT %(limit)s
""".replace("{bm25}", _PG_BM25_TERM)

# The split: the rarest terms until their postings number PRUNE_COVER x limit are always
# scanned; the top's score is then guessed as PRUNE_THRESHOLD x the idf of the last of them, and
# the commonest terms whose bounds add up to less than that guess are left out of the scan.
PRUNE_COVER = 2
PRUNE_THRESHOLD = 0.6
# How queries ended (diagnostics for the bench and the tests): "pruned" (exact top
# from the rare terms), "fallback" (pruning could not prove its top, all postings scanned),
# "full" (no term was common enough to prune).
search_paths: Counter[str] = Counter()


def _search(
    cursor: Any,
    student_id: int,
    terms: list[str],
    limit: int,
    rows: list[Any] | None = None,
) -> list[tuple[int, float]]:
    if rows is None:
        rows = pg_statistics(student_id=student_id, terms=terms)
    if not rows or not rows[0][0]:
        return []
    n_docs, total_len = float(rows[0][0]), float(rows[0][1])
    dfs = sorted(((int(df), term) for _, _, term, df in rows if term is not None and df > 0))
    if not dfs:
        return []
    # A chat message is a long query: keep its most selective terms. The common ones carry
    # little weight and cost the most postings (a 20,000-character message would otherwise
    # scan nearly every posting of the student).
    dfs = dfs[: max(1, MAX_QUERY_TERMS)]
    idf = {term: math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df, term in dfs}
    params: dict[str, Any] = {
        "student": student_id,
        "limit": limit,
        "k1": BM25_K1,
        "k1p1": BM25_K1 + 1,
        "b": BM25_B,
        "avgdl": max(total_len / n_docs, 1.0),
    }
    # Scan the rare terms' postings; look the common ones up by key.
    essential, rest = _split(dfs, idf, limit)
    if rest:
        bound = sum(idf[t] for t in rest) * (BM25_K1 + 1)
        cursor.execute(
            _PG_BM25_PRUNED_ONE if len(essential) == 1 else _PG_BM25_PRUNED,
            {
                **params,
                "terms": essential,
                "idf": [idf[t] for t in essential],
                "rest_terms": rest,
                "rest_idf": [idf[t] for t in rest],
                "rest": bound,
            },
        )
        found = [(int(pk), float(score)) for pk, score in cursor.fetchall()]
        if len(found) == limit and found[-1][1] > bound:
            search_paths["pruned"] += 1
            return found
    search_paths["fallback" if rest else "full"] += 1
    all_terms = [term for _, term in dfs]
    statement = _PG_BM25_ONE if len(all_terms) == 1 else _PG_BM25_ALL
    cursor.execute(statement, {**params, "terms": all_terms, "idf": [idf[t] for t in all_terms]})
    return [(int(pk), float(score)) for pk, score in cursor.fetchall()]


def _split(dfs: list[tuple[int, str]], idf: dict[str, float], limit: int) -> tuple[list[str], list[str]]:
    """(terms to scan, common terms left to key lookups); dfs sorted by df, rarest first."""
    covered, last = 0, len(dfs) - 1
    for i, (df, _) in enumerate(dfs):
        covered += df
        if covered >= PRUNE_COVER * limit:
            last = i
            break
    guess = PRUNE_THRESHOLD * idf[dfs[last][1]]
    bound, cut = 0.0, len(dfs)
    while cut - 1 > last and bound + idf[dfs[cut - 1][1]] * (BM25_K1 + 1) < guess:
        cut -= 1
        bound += idf[dfs[cut][1]] * (BM25_K1 + 1)
    return [term for _, term in dfs[:cut]], [term for _, term in dfs[cut:]]
