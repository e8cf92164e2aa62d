"""Semantic search on PostgreSQL: the student's vectors ranked by pgvector, in the database.

One statement per query, an exact scan of one student's vectors (the design article's choice:
no approximate index under a few tens of thousands of rows per student):
1. the sentence_shortlist memories (at least `depth`) closest as a whole to the query: the
   scan reads the narrow half-precision copy of the vectors (memory.models.HalfVector, one
   index range per student), keeps its best `sentence_shortlist + SPARE` by a top-N sort, and
   scores again from the float32 vectors (MemoryEmbedding) those that may belong to the
   shortlist: every one within twice `half_error` of the shortlist's last in half precision. A
   similarity in half precision is within `half_error` of the float32 one, so when the last one
   kept is below that margin, no memory left out could be in the shortlist, and the shortlist
   is the float32 scan's, exactly. When it is not (many vectors alike: more than SPARE within
   the margin), the statement scans the float32 vectors instead (`scan_paths` counts which
   ran). The shortlist is then joined to its memories, which must be active (the services
   delete an archived memory's vector, so this drops nothing but what was archived behind
   their back);
2. the shortlist is scored by sentence too, and its score mixes both (sentence_mix), as
   memory.search.recall describes. A mixed score is never below the memory's whole-text score, so no
   memory outside the shortlist could rank above the shortlist's top `depth`: the top is exact
   without mixing the rest. Each memory's sentence vectors are read once, for both the query
   and the topic vector, from the row the shortlist's float32 scores were read from, and only
   those of the memories the result needs (the whole shortlist when it is ranked, only the
   `extra` ones when `depth` is 0);
3. the optional time decay multiplies the score (applied to the shortlist: with a decay, a
   memory outside it is not brought back by its age);
4. the top `depth`, and the scores of the extra memories asked for (the lexical candidates,
   which the fusion scores on every signal: their whole-text score if outside the shortlist),
   each with its best-sentence similarity to the topic vector (from the same sentences: one
   read of each memory's sentence vectors).

Recall runs it for a student whose vectors the process does not hold (memory.search.postgres);
the held vectors are ranked the same way in numpy (memory.search.scores.rank_held).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from core.db import server_cursor
from memory.fields import vector_text


def half_error(dim: int) -> float:
    """Twice the most a similarity computed in half precision can differ from the float32 one,
    for unit vectors (the embedders normalise them) of `dim` values: rounding each vector to half
    precision moves their inner product by at most 2^-11 per vector, and each float32 sum is off
    by at most dim * 2^-24 (about 1.0e-3 in all at 384 dimensions, 1.3e-3 at 3,072)."""
    return 2 * (2.0**-10 + dim * 2.0**-23)


# Memories scanned in half precision beyond the shortlist, for those within the margin of its
# last one; more within it means the float32 scan.
SPARE = 100

# How the shortlists were found since the counter was cleared: "half" (the narrow copy, then
# float32 for the margin) or "exact" (the float32 scan). For the bench and the tests.
scan_paths: Counter[str] = Counter()

# The statement (memory.search.vector_search.search runs it; bench/recall_latency.py recognises it).
SQL = """
WITH approx AS MATERIALIZED (
    SELECT h.memory_id, (h.vector <#> %(q_half)s::halfvec) * -1 AS approx
    FROM memory_halfvector h
    WHERE h.student_id = %(student)s AND h.model = %(model)s AND h.dim = %(dim)s
    ORDER BY approx DESC, h.memory_id
    LIMIT %(fetch)s
),
cut AS MATERIALIZED (
    SELECT c.floor, (SELECT count(*) FROM approx) < %(fetch)s OR (SELECT min(approx) FROM approx) < c.floor AS certain
    FROM (SELECT coalesce((SELECT approx FROM approx ORDER BY approx DESC, memory_id
                           OFFSET greatest(%(shortlist)s - 1, 0) LIMIT 1), '-Infinity') - %(margin)s AS floor) c
),
nearest AS MATERIALIZED (
    (SELECT e.memory_id, (e.vector <#> %(q)s::vector) * -1 AS sim, (e.vector <#> %(topic)s::vector) * -1 AS whole_topic,
            e.sentence_vectors
     FROM approx a JOIN memory_memoryembedding e ON e.memory_id = a.memory_id
     WHERE (SELECT certain FROM cut) IS TRUE AND a.approx >= (SELECT floor FROM cut)
       AND e.student_id = %(student)s AND e.model = %(model)s AND e.dim = %(dim)s
     ORDER BY sim DESC, e.memory_id LIMIT %(shortlist)s)
    UNION ALL
    SELECT f.memory_id, f.sim, (e.vector <#> %(topic)s::vector) * -1, e.sentence_vectors
    FROM (SELECT e.memory_id, (e.vector <#> %(q)s::vector) * -1 AS sim
          FROM memory_memoryembedding e
          WHERE (SELECT certain FROM cut) IS NOT TRUE
            AND e.student_id = %(student)s AND e.model = %(model)s AND e.dim = %(dim)s
          ORDER BY sim DESC, e.memory_id LIMIT %(shortlist)s) f
    JOIN memory_memoryembedding e ON e.memory_id = f.memory_id
),
short AS MATERIALIZED (
    SELECT n.memory_id, m.created_at, n.sim, n.whole_topic, n.sentence_vectors
    FROM nearest n CROSS JOIN LATERAL (
        SELECT m.created_at FROM memory_aimemory m
        WHERE m.id = n.memory_id AND m.student_id = %(student)s AND m.status = 'active' OFFSET 0
    ) m
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
        coalesce(b.topic, s.whole_topic) AS topic
    FROM short s
    LEFT JOIN LATERAL (
        SELECT max(x.best) AS best, max(x.topic) AS topic
        FROM (SELECT (u.v <#> %(q)s::vector) * -1 AS best, (u.v <#> %(topic)s::vector) * -1 AS topic
              FROM (SELECT unnest(s.sentence_vectors) AS v) u) x
    ) b ON true
    WHERE %(depth)s > 0 OR s.memory_id = ANY(%(extra)s::bigint[])
    UNION ALL
    SELECT x.memory_id, x.created_at, false, x.sim, coalesce(
        (SELECT max((u.v <#> %(topic)s::vector) * -1) FROM (SELECT unnest(e.sentence_vectors) AS v) u),
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
    d.memory_id IN (SELECT memory_id FROM top), d.topic::float8, (SELECT certain FROM cut) IS TRUE
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
    shortlist = max(shortlist if mix > 0 else 0, depth)
    q = vector_text(query)
    params = {
        "q": q,
        # The same text as a halfvec parameter of its own: a parameter has one type, and a cast
        # of one to the other would run for every row under a generic plan.
        "q_half": q,
        "topic": vector_text(topic) if topic is not None else None,
        "student": student_id,
        "model": model,
        "dim": int(np.asarray(query).shape[0]),
        "shortlist": shortlist,
        "fetch": shortlist + SPARE if shortlist else 0,
        "margin": 2 * half_error(int(np.asarray(query).shape[0])),
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
    if rows:
        scan_paths["half" if rows[0][5] else "exact"] += 1
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
