"""Mastery per skill: Bayesian knowledge tracing with decay toward the prior. Pure functions.

Each graded answer is one observation of a skill. BKT (Corbett & Anderson, 1995) keeps the
probability that the student has mastered the skill, updates it by Bayes' rule from the answer
(allowing for a lucky guess and a careless slip), then lets the student learn from the attempt:

    correct:   P(L | obs) = P(L)(1 - S) / (P(L)(1 - S) + (1 - P(L)) G)
    incorrect: P(L | obs) = P(L) S / (P(L) S + (1 - P(L))(1 - G))
    then:      P(L') = P(L | obs) + (1 - P(L | obs)) T

Between results the estimate decays toward the prior P(L0) with a half-life: evidence grows
stale in either direction. The trend is the estimate's change over the last `trend_window`
results. Why BKT rather than Elo, and the parameters: docs/learning.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class BktParams:
    p_init: float = 0.3  # P(L0): mastered before any evidence
    p_learn: float = 0.1  # T: learns the skill at an opportunity
    p_slip: float = 0.1  # S: a wrong answer though mastered
    p_guess: float = 0.2  # G: a right answer though not mastered
    half_life_days: float = 60.0  # 0: no decay
    trend_window: int = 5

    def __post_init__(self) -> None:
        for name in ("p_init", "p_learn", "p_slip", "p_guess"):
            value = getattr(self, name)
            if not 0 < value < 1:
                raise ImproperlyConfigured(f"LEARNING_MASTERY[{name!r}] must be between 0 and 1, got {value}")
        # Past this a correct answer would lower the estimate: the model is no longer identifiable.
        if self.p_slip + self.p_guess >= 1:
            raise ImproperlyConfigured("LEARNING_MASTERY: p_slip + p_guess must be below 1")
        if self.half_life_days < 0 or self.trend_window < 1:
            raise ImproperlyConfigured("LEARNING_MASTERY: half_life_days must be >= 0 and trend_window >= 1")

    @classmethod
    def from_settings(cls) -> BktParams:
        overrides: dict[str, Any] = dict(settings.LEARNING_MASTERY)
        unknown = set(overrides) - set(cls.__dataclass_fields__)
        if unknown:
            raise ImproperlyConfigured(f"LEARNING_MASTERY has unknown keys: {sorted(unknown)}")
        return cls(**overrides)


def decayed(estimate: float, *, elapsed: timedelta, params: BktParams) -> float:
    """`estimate`, `elapsed` after it was made: halfway back to the prior every half-life."""
    if params.half_life_days <= 0 or elapsed <= timedelta(0):
        return estimate
    weight = 0.5 ** (elapsed.total_seconds() / 86400 / params.half_life_days)
    return params.p_init + (estimate - params.p_init) * weight


# Estimates are kept strictly inside (0, 1): at exactly 1 (which floating point reaches after a
# few dozen right answers) no wrong answer could lower the estimate again.
ESTIMATE_MIN, ESTIMATE_MAX = 0.001, 0.999


def observe(estimate: float, correct: bool, params: BktParams) -> float:
    """One BKT step: the posterior after an answer, then the chance of learning from it, kept
    within [ESTIMATE_MIN, ESTIMATE_MAX]."""
    s, g = params.p_slip, params.p_guess
    if correct:
        known = estimate * (1 - s)
        posterior = known / (known + (1 - estimate) * g)
    else:
        known = estimate * s
        posterior = known / (known + (1 - estimate) * (1 - g))
    return min(ESTIMATE_MAX, max(ESTIMATE_MIN, posterior + (1 - posterior) * params.p_learn))


@dataclass(frozen=True)
class Mastery:
    estimate: float
    history: list[float]  # the estimate before the window, then after each result in it
    trend: float


def record(
    *, estimate: float | None, history: Sequence[float], elapsed: timedelta, results: Sequence[bool], params: BktParams
) -> Mastery:
    """The mastery after `results` (in order), `elapsed` after the previous estimate (None: a
    skill never seen, starting from the prior). The trend is the change over the last
    `trend_window` results (fewer while there are fewer)."""
    current = params.p_init if estimate is None else decayed(estimate, elapsed=elapsed, params=params)
    # The stored history is of stored estimates; the decay before these results is part of the trend.
    window = [*history[:-1], current] if history else [current]
    for correct in results:
        current = observe(current, correct, params)
        window.append(current)
    window = window[-(params.trend_window + 1) :]
    return Mastery(estimate=current, history=window, trend=window[-1] - window[0])
