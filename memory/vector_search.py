"""Semantic search on PostgreSQL: the student's vectors ranked by pgvector, in the database.

One statement per query, an exact scan of one student's vectors (the design article's choice:
no approximate index under a few tens of thousands of rows per student):
1. every active memory's whole-text similarity to the query (`<#>`, the negative inner product:
   the vectors are L2-normalised, so it is minus the cosine);
2. the RECALL_SENTENCE_SHORTLIST closest memories are scored by sentence too, and their score
   mixes both (RECALL_SENTENCE_MIX), as memory.recall describes;
3. the optional time decay multiplies the score;
4. the top `depth`, and the scores of the extra memories asked for (the lexical candidates,
   which the fusion scores on every signal), each with its best-sentence similarity to the topic
   vector.

Nothing is kept in the process between queries: what the database holds is what recall sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection

from memory.fields import vector_text

_SQL = """
WITH whole AS MATERIALIZED (
    SELECT e.memory_id, m.created_at, (e.vector <#> %(q)s::vector) * -1 AS sim
    FROM memory_memoryembedding e
    JOIN memory_aimemory m ON m.id = e.memory_id
    WHERE e.student_id = %(student)s AND e.model = %(model)s AND e.dim = %(dim)s
      AND m.student_id = %(student)s AND m.status = 'active'
),
short AS (
    SELECT memory_id FROM whole ORDER BY sim DESC LIMIT %(shortlist)s
),
best AS (
    SELECT e.memory_id, max((s.v <#> %(q)s::vector) * -1) AS best
    FROM short JOIN memory_memoryembedding e ON e.memory_id = short.memory_id
    CROSS JOIN LATERAL unnest(e.sentence_vectors) AS s(v)
    GROUP BY e.memory_id
),
scored AS (
    SELECT w.memory_id, w.created_at,
        (CASE WHEN b.best IS NULL THEN w.sim
              ELSE (1 - %(mix)s) * w.sim + %(mix)s * greatest(b.best, w.sim) END)
        * (CASE WHEN %(half_life)s > 0
                THEN %(floor)s + (1 - %(floor)s) * power(0.5,
                     greatest(extract(epoch FROM (%(now)s - w.created_at)) / 86400.0, 0) / %(half_life)s)
                ELSE 1 END) AS score
    FROM whole w LEFT JOIN best b ON b.memory_id = w.memory_id
),
top AS (
    SELECT memory_id FROM scored ORDER BY score DESC, memory_id LIMIT %(depth)s
)
SELECT s.memory_id, extract(epoch FROM s.created_at)::float8, s.score::float8,
    s.memory_id IN (SELECT memory_id FROM top),
    CASE WHEN %(topic)s::text IS NULL THEN NULL ELSE coalesce(
        (SELECT max((t.v <#> %(topic)s::vector) * -1) FROM unnest(e.sentence_vectors) AS t(v)),
        (e.vector <#> %(topic)s::vector) * -1) END::float8
FROM scored s JOIN memory_memoryembedding e ON e.memory_id = s.memory_id
WHERE s.memory_id IN (SELECT memory_id FROM top) OR s.memory_id = ANY(%(extra)s::bigint[])
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
        "shortlist": shortlist if mix > 0 else 0,
        "mix": float(mix),
        "half_life": float(half_life_days),
        "floor": float(decay_floor),
        "now": now,
        "depth": max(depth, 0),
        "extra": [int(pk) for pk in extra],
    }
    with connection.cursor() as cursor:
        cursor.execute(_SQL, params)
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
