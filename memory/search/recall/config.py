"""Recall's tuning: one typed object, every field read from its RECALL_<FIELD> setting
(tutor/settings/base.py, where each default is documented; docs/recall.md gives the figures)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from django.conf import settings


@dataclass(frozen=True)
class RecallConfig:
    lexical_depth: int = 50
    semantic_depth: int = 50
    rrf_k: float = 60.0
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    relation_weight: float = 0.0
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

    @classmethod
    def from_settings(cls) -> RecallConfig:
        """Every field from its RECALL_<FIELD> setting (tutor/settings/base.py)."""
        return cls(**{f.name: getattr(settings, f"RECALL_{f.name.upper()}") for f in fields(cls)})

    def with_(self, **changes: Any) -> RecallConfig:
        return replace(self, **changes)


def decay(ages_days: np.ndarray, config: RecallConfig) -> np.ndarray:
    """Time decay factors: decay_floor + (1 - decay_floor) * 0.5 ** (age / decay_half_life_days).
    Applied to each signal's scores before ranking or standardising, never to the fused score."""
    factor: np.ndarray = config.decay_floor + (1 - config.decay_floor) * np.power(
        0.5, np.maximum(ages_days, 0) / config.decay_half_life_days
    )
    return factor
