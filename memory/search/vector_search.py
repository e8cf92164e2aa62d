"""Semantic search on PostgreSQL: the student's vectors ranked by pgvector, in the database.

One statement per query, an exact scan of one student's vectors (the design article's choice:
no approximate index under a few tens of thousands of rows per student):
1. every vector's whole-text similarity to the query (`<#>`, the negative inner product: the
   vectors are L2-normalised, so it is minus the cosine), of which only the
   sentence_shortlist closest (at least `depth`) are kept, a top-N sort; only those are
   joined to their memory, which must be active (the services delete an archived memory's
   vector, so this drops nothing but what was archived behind their back);
2. those are scored by sentence too, and their score mixes both (sentence_mix), as
   memory.search.recall describes. A mixed score is never below the memory's whole-text score, so no
   memory outside the shortlist could rank above the shortlist's top `depth`: the top is exact
   without mixing the rest;
3. the optional time decay multiplies the score (applied to the shortlist: with a decay, a
   memory outside it is not brought back by its age);
4. the top `depth`, and the scores of the extra memories asked for (the lexical candidates,
   which the fusion scores on every signal: their whole-text score if outside the shortlist),
   each with its best-sentence similarity to the topic vector (from the same sentences: one
   read of each memory's sentence vectors).

Nothing is kept in the process between queries: what the database holds is what recall sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.fields import vector_text
from memory.search.postings import server_cursor

# The statement (memory.search.vector_search.search runs it; bench/recall_latency.py recognises it).
SQL = """
WITH nearest AS MATERIALIZED (
    SELECT e.memory_id, (e.vector <#> %(q)s::vector) * -1 AS sim
    FROM memory_memoryembedding e
    WHERE e.student_id = %(student)s AND e.model = %(model)s AND e.dim = %(dim)s
    ORDER BY sim DESC, e.memory_id
    LIMIT %(shortlist)s
),
short AS MATERIALIZED (
    SELECT n.memory_id, m.created_at, n.sim
    FROM nearest n JOIN memory_aimemory m ON m.id = n.memory_id
    WHERE m.student_id = %(student)s AND m.status = 'active'
),
extra AS (
    SELECT e.memory_id, m.created_at, (e.vector <#> %(q)s::vector) * -1 AS sim
    FROM memory_memoryembedding e
    JOIN memory_aimemory m ON m.id = e.memory_id
    WHERE e.memory_id = ANY(%(extra)s::bigint[]) AND e.student_id = %(student)s AND e.model = %(model)s
      AND e.dim = %(dim)s AND m.student_id = %(student)s AND m.status = 'active'
      AND e.memory_id NOT IN (SELECT memory_id FROM short)
),
scored AS (
    SELECT s.memory_id, s.created_at, true AS shortlisted,
        CASE WHEN b.best IS NULL OR %(mix)s = 0 THEN s.sim
             ELSE (1 - %(mix)s) * s.sim + %(mix)s * greatest(b.best, s.sim) END AS score,
        coalesce(b.topic, (e.vector <#> %(topic)s::vector) * -1) AS topic
    FROM short s
    JOIN memory_memoryembedding e ON e.memory_id = s.memory_id
    LEFT JOIN LATERAL (
        SELECT max((v.v <#> %(q)s::vector) * -1) AS best, max((v.v <#> %(topic)s::vector) * -1) AS topic
        FROM unnest(e.sentence_vectors) AS v(v)
    ) b ON true
    UNION ALL
    SELECT x.memory_id, x.created_at, false, x.sim, coalesce(
        (SELECT max((v.v <#> %(topic)s::vector) * -1) FROM unnest(e.sentence_vectors) AS v(v)),
        (e.vector <#> %(topic)s::vector) * -1)
    FROM extra x JOIN memory_memoryembedding e ON e.memory_id = x.memory_id
),
decayed AS (
    SELECT memory_id, created_at, shortlisted, topic, score
        * (CASE WHEN %(half_life)s > 0
                THEN %(floor)s + (1 - %(floor)s) * power(0.5,
                     greatest(extract(epoch FROM (%(now)s - created_at)) / 86400.0, 0) / %(half_life)s)
                ELSE 1 END) AS score
    FROM scored
),
top AS (
    SELECT memory_id FROM decayed WHERE shortlisted ORDER BY score DESC, memory_id LIMIT %(depth)s
)
SELECT d.memory_id, extract(epoch FROM d.created_at)::float8, d.score::float8,
    d.memory_id IN (SELECT memory_id FROM top), d.topic::float8
FROM decayed d
WHERE d.memory_id IN (SELECT memory_id FROM top) OR d.memory_id = ANY(%(extra)s::bigint[])
"""


@dataclass(frozen=True)
class Ranked:
    """What the statement returned, ids ascending: each memory's score, created_at (epoch
    seconds) and topic similarity (NaN without a topic vector); `top`: the best `depth` ids,
    best first."""

    ids: np.ndarray
    scores: np.ndarray
    created: np.ndarray
    topic: np.ndarray
    top: list[int]


def search(
    *,
    student_id: int,
    model: str,
    query: np.ndarray,
    topic: np.ndarray | None,
    depth: int,
    extra: list[int],
    shortlist: int,
    mix: float,
    half_life_days: float,
    decay_floor: float,
    now: datetime,
) -> Ranked:
    """The student's `depth` best memories for `query`, and the scores of the `extra` ones."""
    params = {
        "q": vector_text(query),
        "topic": vector_text(topic) if topic is not None else None,
        "student": student_id,
        "model": model,
        "dim": int(np.asarray(query).shape[0]),
        "shortlist": max(shortlist if mix > 0 else 0, depth),
        "mix": float(mix),
        "half_life": float(half_life_days),
        "floor": float(decay_floor),
        "now": now,
        "depth": max(depth, 0),
        "extra": [int(pk) for pk in extra],
    }
    with server_cursor() as cursor:
        cursor.execute(SQL, params)
        rows = sorted(cursor.fetchall())
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    scores = np.array([r[2] for r in rows], dtype=np.float64)
    top = sorted((r for r in rows if r[3]), key=lambda r: (-r[2], r[0]))
    return Ranked(
        ids=ids,
        scores=scores,
        created=np.array([r[1] for r in rows], dtype=np.float64),
        topic=np.array([np.nan if r[4] is None else r[4] for r in rows], dtype=np.float64),
        top=[int(r[0]) for r in top],
    )
