"""The vocabulary of screening, shared by the backends, the guard and the flags.

A backend reads a text (or an image) and returns `Signal`s: each is a category, a severity and
the backend's score. `combine` keeps, per category, the most severe signal any backend gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import models


class Category(models.TextChoices):
    SELF_HARM = "self_harm", "Self-harm (intent, instructions)"
    ABUSE = "abuse", "Abuse or danger disclosed"
    VIOLENCE = "violence", "Violence or threats"
    HARASSMENT = "harassment", "Harassment and bullying"
    SEXUAL = "sexual", "Sexual content"
    SEXUAL_MINORS = "sexual_minors", "Sexual content involving minors"
    HATE = "hate", "Hate"
    JAILBREAK = "jailbreak", "Leaving the tutor's role (jailbreak, off-task abuse)"
    DISTRESS = "distress", "Distress (sadness, loneliness, hopelessness)"


class Severity(models.TextChoices):
    """Ordered: `rank` is higher for the more serious."""

    INFO = "info", "Info (logged only)"
    CONCERN = "concern", "Concern (a teacher should look)"
    CRISIS = "crisis", "Crisis (someone may be hurt: act now)"


RANK = {Severity.INFO: 1, Severity.CONCERN: 2, Severity.CRISIS: 3}


def rank(severity: str | None) -> int:
    """0 for no severity, then info < concern < crisis."""
    return RANK.get(Severity(severity), 0) if severity else 0


@dataclass(frozen=True)
class Signal:
    """One backend's finding: `score` in [0, 1] (1 for a rule that matched), `rule` what fired
    (a rule's name, a moderation category), for staff. A `quiet` concern goes to the teachers'
    queue without an alert (the learned screen's concerns: safety.learned)."""

    category: Category
    severity: Severity
    score: float = 1.0
    rule: str = ""
    quiet: bool = False

    def __post_init__(self) -> None:
        # Sexual content involving minors is always the highest severity.
        if self.category == Category.SEXUAL_MINORS and self.severity != Severity.CRISIS:
            object.__setattr__(self, "severity", Severity.CRISIS)


@dataclass
class BackendResult:
    """What one backend said about one text: its signals, or why it did not answer."""

    backend: str
    answered: bool
    signals: list[Signal] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    error: str = ""
    ms: int = 0

    def record(self) -> dict[str, Any]:
        """The flag's `scores` entry for this backend."""
        return {
            "answered": self.answered,
            "scores": self.scores,
            "signals": [
                {
                    "category": s.category.value,
                    "severity": s.severity.value,
                    "score": s.score,
                    "rule": s.rule,
                    **({"quiet": True} if s.quiet else {}),
                }
                for s in self.signals
            ],
            "error": self.error,
            "ms": self.ms,
        }


def kept_quiet(severity: str | None, concern_quiets: Sequence[bool]) -> bool:
    """Whether an item of `severity`, whose concern-level signals are quiet or not as
    `concern_quiets` says, is a quiet concern: it waits in the teachers' queue without an alert
    (`Verdict.alerts` for a verdict, `Flag.quiet` for a recorded flag)."""
    return severity == Severity.CONCERN and bool(concern_quiets) and all(concern_quiets)


@dataclass
class Verdict:
    """The combined screening of one text: the most severe signal per category, and every
    backend's record (including those that did not answer)."""

    signals: list[Signal] = field(default_factory=list)
    results: list[BackendResult] = field(default_factory=list)

    @property
    def severity(self) -> Severity | None:
        if not self.signals:
            return None
        return max((s.severity for s in self.signals), key=rank)

    @property
    def category(self) -> Category | None:
        """The category of the most severe signal (ties: the highest score)."""
        if not self.signals:
            return None
        return max(self.signals, key=lambda s: (rank(s.severity), s.score)).category

    @property
    def alerts(self) -> bool:
        """Whether it calls for an alert: a crisis, or a concern that some signal at concern
        level does not keep quiet."""
        severity = self.severity
        quiets = [s.quiet for s in self.signals if s.severity == Severity.CONCERN]
        return severity in (Severity.CONCERN, Severity.CRISIS) and not kept_quiet(severity, quiets)

    @property
    def categories(self) -> list[str]:
        return sorted({s.category.value for s in self.signals})

    def scores(self) -> dict[str, Any]:
        return {r.backend: r.record() for r in self.results}


def combine(results: list[BackendResult]) -> Verdict:
    """The most severe signal per category across the backends that answered."""
    best: dict[Category, Signal] = {}
    for result in results:
        for signal in result.signals:
            kept = best.get(signal.category)
            if kept is None or (rank(signal.severity), signal.score) > (rank(kept.severity), kept.score):
                best[signal.category] = signal
    return Verdict(signals=list(best.values()), results=results)
