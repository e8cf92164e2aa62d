"""Recall's fusion: the candidates' scores standardised and fused (or their ranks), the date
term, time decay of the lexical scores, and the relation bonus."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.db import connection
from django.utils import timezone

from memory.models import AIMemory
from memory.search import query_dates
from memory.search.recall.candidates import dated_candidates
from memory.search.recall.config import RecallConfig, decay
from memory.search.scores import SemanticScores


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    related: bool = False


def decay_lexical(lexical: list[tuple[int, float]], *, config: RecallConfig, now: datetime) -> list[tuple[int, float]]:
    created = dict(AIMemory.objects.filter(pk__in=[pk for pk, _ in lexical]).values_list("pk", "created_at"))
    ages = np.array([(now - created[pk]).total_seconds() / 86400.0 if pk in created else 0.0 for pk, _ in lexical])
    factors = decay(ages, config)
    decayed = [(pk, score * float(f)) for (pk, score), f in zip(lexical, factors, strict=True)]
    return sorted(decayed, key=lambda x: -x[1])


def fuse_ranks(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]], config: RecallConfig) -> list[Hit]:
    scores: dict[int, float] = {}
    lex_rank: dict[int, int] = {}
    sem_rank: dict[int, int] = {}
    for rank, (pk, _) in enumerate(lexical, start=1):
        lex_rank[pk] = rank
        scores[pk] = scores.get(pk, 0.0) + config.lexical_weight / (config.rrf_k + rank)
    for rank, (pk, _) in enumerate(semantic, start=1):
        sem_rank[pk] = rank
        scores[pk] = scores.get(pk, 0.0) + config.semantic_weight / (config.rrf_k + rank)
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(pk, score, lex_rank.get(pk), sem_rank.get(pk)) for pk, score in ordered]


def standardise(values: np.ndarray) -> np.ndarray:
    """z-scores of `values` (all zero when they are all equal)."""
    std = float(values.std())
    if values.size < 2 or std <= 1e-12:
        return np.zeros_like(values)
    standardised: np.ndarray = (values - values.mean()) / std
    return standardised


def fuse_scores(
    lexical: list[tuple[int, float]],
    semantic: list[tuple[int, float]],
    scores: SemanticScores | None,
    config: RecallConfig,
    *,
    student_id: int,
    spans: list[query_dates.Span],
) -> list[Hit]:
    """Weighted sum of the standardised lexical and semantic scores over the candidates' union,
    plus the date term when the query names dates."""
    lex_rank = {pk: rank for rank, (pk, _) in enumerate(lexical, start=1)}
    sem_rank = {pk: rank for rank, (pk, _) in enumerate(semantic, start=1)}
    candidates = list(dict.fromkeys([pk for pk, _ in lexical] + [pk for pk, _ in semantic]))
    created: dict[int, float] = {}
    if spans and (lexical or semantic):
        created = dated_candidates(
            student_id=student_id, candidates=candidates, scores=scores, spans=spans, config=config
        )
        known = set(candidates)
        candidates += [pk for pk in created if pk not in known]
        if scores is not None:
            scores = scores.including(candidates)
    if not candidates:
        return []
    fused = np.zeros(len(candidates))
    if lexical:
        lex_score = dict(lexical)
        lex_z = standardise(np.array([lex_score.get(pk, 0.0) for pk in candidates]))
        fused += config.lexical_weight * np.maximum(lex_z, -config.lexical_floor)
    if semantic and scores is not None:
        sem = scores.of(candidates)
        # A memory without a current vector (not embedded yet) counts as the least similar.
        sem = np.where(np.isnan(sem), np.nanmin(sem), sem)
        fused += config.semantic_weight * np.maximum(standardise(sem), -config.semantic_floor)
        if config.topic_weight > 0 and (scores.topic is not None or scores.topic_scores is not None):
            topical = scores.topic_of(candidates)
            if not np.isnan(topical).all():
                topical = np.where(np.isnan(topical), np.nanmin(topical), topical)
                fused += config.topic_weight * standardise(topical)
    if created:
        fused += config.date_weight * _date_match(candidates, created, spans, config)
    fused = fused - fused.min() + 1.0
    ordered = sorted(zip(candidates, fused.tolist(), strict=True), key=lambda kv: (-kv[1], -kv[0]))
    return [Hit(pk, score, lex_rank.get(pk), sem_rank.get(pk)) for pk, score in ordered]


def _date_match(
    candidates: list[int], created: dict[int, float], spans: list[query_dates.Span], config: RecallConfig
) -> np.ndarray:
    """exp(-days outside the nearest named span / scale) per candidate (0 if its date is unknown)."""
    tz = timezone.get_current_timezone()
    when = np.array([created.get(pk, np.nan) for pk in candidates])
    best = np.zeros(len(candidates))
    for span in spans:
        start, end = query_dates.span_bounds(span, tz)
        outside = np.maximum(np.maximum(start - when, when - end), 0.0) / 86400.0
        best = np.maximum(best, np.nan_to_num(np.exp(-outside / max(config.date_scale_days, 1e-6)), nan=0.0))
    return best


# One statement, a branch per relation, each driven by an index: the seeds' conversation
# (source_conversation), the memory that replaced a seed (superseded_by), the memories a seed
# replaced (their superseded_by; only an active one counts, so merges and supersessions add
# nothing unless one was put back) and explicit links (primary keys). Only the student's own
# seeds are followed (the CTE), and each related memory is checked to be the student's and
# active on its own row: `+student_id` keeps SQLite from walking the student's whole
# (student, status, created_at) index instead.
_RELATED_SQL = """
WITH s AS (
    SELECT id, source_conversation_id, superseded_by_id FROM memory_aimemory
    WHERE id IN ({seeds}) AND student_id = %s
)
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.source_conversation_id = s.source_conversation_id
WHERE +m.student_id = %s AND m.status = %s AND m.id <> s.id
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.id = s.superseded_by_id
WHERE +m.student_id = %s AND m.status = %s
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory m ON m.superseded_by_id = s.id
WHERE +m.student_id = %s AND m.status = %s
UNION ALL
SELECT s.id, m.id FROM s JOIN memory_aimemory_links l ON l.from_aimemory_id = s.id
JOIN memory_aimemory m ON m.id = l.to_aimemory_id
WHERE +m.student_id = %s AND m.status = %s AND m.id <> s.id
"""


def related_ids(*, student_id: int, memory_ids: Iterable[int]) -> dict[int, set[int]]:
    """For each given memory, the student's active memories related to it (not itself): same
    conversation, supersession chain (either direction), explicit link. One query."""
    seeds = [int(pk) for pk in memory_ids]
    result: dict[int, set[int]] = {pk: set() for pk in seeds}
    if not seeds:
        return result
    marks = ", ".join(["%s"] * len(seeds))
    active = str(AIMemory.Status.ACTIVE)
    branch: list[int | str] = [student_id, active]
    params: list[int | str] = [*seeds, student_id, *branch * 4]
    with connection.cursor() as cursor:
        cursor.execute(_RELATED_SQL.format(seeds=marks), params)
        for seed, pk in cursor.fetchall():
            if seed in result and pk != seed:
                result[seed].add(pk)
    return result


def relation_bonus(*, student_id: int, hits: list[Hit], config: RecallConfig) -> list[Hit]:
    seeds = hits[: config.relation_seeds]
    relations = related_ids(student_id=student_id, memory_ids=[h.memory_id for h in seeds])
    by_id = {h.memory_id: h for h in hits}
    bonus: dict[int, float] = {}
    for seed in seeds:
        for pk in relations.get(seed.memory_id, ()):
            bonus[pk] = max(bonus.get(pk, 0.0), config.relation_weight * seed.score)
    for pk, extra in bonus.items():
        hit = by_id.get(pk)
        by_id[pk] = replace(hit, score=hit.score + extra, related=True) if hit else Hit(pk, extra, related=True)
    return sorted(by_id.values(), key=lambda h: (-h.score, -h.memory_id))
