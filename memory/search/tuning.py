"""Recall's tuning: one typed object whose defaults are the values recall runs with, in
production and in tests alike. They are algorithm constants, measured with `manage.py
recall_eval` on the LoCoMo session set (docs/recall.md gives the figures), not deployment
choices: no setting or environment variable changes them. An evaluation or a test passes its own
RecallConfig(...) to `recall`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class RecallConfig:
    """Fields:
    - lexical_depth, semantic_depth: candidates each search returns.
    - score_fusion: a weighted sum of z-scored signals (True), or weighted reciprocal rank fusion
      with rrf_k (False; RRF was best at k=5 with a lexical weight of 1.2).
    - lexical_weight, semantic_weight: each signal's weight in the fusion.
    - lexical_floor, semantic_floor: score fusion floors each standardised signal at -floor, so
      a signal that misses a memory (a paraphrase lexically, a name semantically) cannot bury it;
      positive evidence counts in full. inf turns a floor off.
    - date_weight, date_scale_days, date_candidates: a query naming a date
      (memory.search.query_dates) adds date_weight * exp(-days outside / date_scale_days) to each
      candidate (score fusion only; 0 turns it off); up to date_candidates memories of those dates
      join the candidates.
    - relation_weight, relation_seeds: memories related to the top relation_seeds results get
      relation_weight times the seed's score.
    - decay_half_life_days, decay_floor: time decay of each signal before fusion (`decay`; a
      half-life of 0 turns it off).
    - sentence_mix, sentence_shortlist: semantic score = (1 - mix) * whole-memory similarity +
      mix * best-sentence similarity, for the sentence_shortlist memories closest as a whole.
    - topic_weight, topic_common_share, topic_min_memories: the query without the words found in
      at least topic_common_share of the student's memories is embedded too, and each
      candidate's best-sentence similarity to it is added with topic_weight (0 turns it off);
      only for students with at least topic_min_memories memories.
    """

    lexical_depth: int = 50
    semantic_depth: int = 50
    rrf_k: float = 5.0
    lexical_weight: float = 0.8
    semantic_weight: float = 1.0
    relation_weight: float = 0.1
    relation_seeds: int = 3
    decay_half_life_days: float = 0.0
    decay_floor: float = 0.5
    sentence_mix: float = 0.5
    sentence_shortlist: int = 200
    score_fusion: bool = True
    date_weight: float = 3.0
    date_scale_days: float = 7.0
    date_candidates: int = 20
    topic_weight: float = 0.6
    topic_common_share: float = 0.5
    topic_min_memories: int = 5
    lexical_floor: float = 0.4
    semantic_floor: float = 0.3

    def with_(self, **changes: Any) -> RecallConfig:
        return replace(self, **changes)


def decay(ages_days: np.ndarray, config: RecallConfig) -> np.ndarray:
    """Time decay factors: decay_floor + (1 - decay_floor) * 0.5 ** (age / decay_half_life_days).
    Applied to each signal's scores before ranking or standardising, never to the fused score."""
    factor: np.ndarray = config.decay_floor + (1 - config.decay_floor) * np.power(
        0.5, np.maximum(ages_days, 0) / config.decay_half_life_days
    )
    return factor
