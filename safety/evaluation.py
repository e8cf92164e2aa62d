"""Measuring a screening function on a labelled set (safety/corpus/train/messages.jsonl).

The rules of the count (safety/corpus/LABELLING.md explains the labels):

- Per category: a case is found when the verdict has a signal of its labelled category (any
  severity). A signal of a category on a case not labelled with it is a false positive of that
  category, whatever the case's kind.
- Per severity: a case is found when the verdict's severity (its most severe signal) equals the
  label. A verdict of that severity on a case labelled otherwise (or not at all) is a false
  positive of that severity.
- "Any flag" recall: the share of risk cases given any signal at all.
- False positive rate, over the ordinary and hyperbole cases: an ordinary case is a false
  positive when it gets a signal of concern or crisis; a hyperbole case when it gets any signal,
  info included (hyperbole is exactly what the screening must not mistake for risk, and an info
  signal on it would still feed the pattern of distress across conversations).
- A case whose verdict carries a backend that did not answer is counted as screened by what did
  answer; the report says how many there were.

`split_of` assigns each case to "dev" (rules may be tuned on its mistakes) or "holdout" (about a
fifth, by a hash of the text: its mistakes are not looked at while tuning).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from safety.types import Category, Severity, Verdict, rank

KINDS = ("ordinary", "hyperbole", "risk")
HOLDOUT_MODULUS = 5


@dataclass(frozen=True)
class Case:
    """One labelled message; `category` and `severity` are None for ordinary and hyperbole.
    `context`: the same student's previous messages in the conversation, oldest first, in whose
    light the label was given; `source`: the file (its writer) it comes from."""

    text: str
    language: str
    category: str | None
    severity: str | None
    kind: str
    context: tuple[str, ...] = ()
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}")
        if (self.kind == "risk") != (self.category is not None and self.severity is not None):
            raise ValueError(f"a risk case has a category and a severity, no other case has: {self.text!r}")
        if self.category is not None:
            Category(self.category)
        if self.severity is not None:
            Severity(self.severity)


def load_cases(path: str | Path) -> list[Case]:
    """The cases of a JSON-lines file (blank lines skipped); raises ValueError on a bad label."""
    cases = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            fields = json.loads(line)
            fields["context"] = tuple(fields.get("context") or ())
            cases.append(Case(**fields, source=Path(path).stem))
    return cases


def split_of(case: Case) -> str:
    """ "holdout" for about one case in HOLDOUT_MODULUS (stable: a hash of the text), else "dev"."""
    digest = int(hashlib.sha1(case.text.encode("utf-8"), usedforsecurity=False).hexdigest(), 16)
    return "holdout" if digest % HOLDOUT_MODULUS == 0 else "dev"


@dataclass
class Counts:
    """True positives, false positives and false negatives of one class."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.support if self.support else None


@dataclass(frozen=True)
class Outcome:
    """One case and what the screening said: its verdict's severity and categories."""

    case: Case
    severity: str | None
    categories: tuple[str, ...]
    rules: tuple[str, ...]

    @property
    def false_positive(self) -> bool:
        """For ordinary and hyperbole cases (see the module's rules); False for risks."""
        if self.case.kind == "ordinary":
            return rank(self.severity) >= rank(Severity.CONCERN)
        if self.case.kind == "hyperbole":
            return self.severity is not None
        return False

    @property
    def correct(self) -> bool:
        if self.case.kind == "risk":
            return self.severity == self.case.severity and self.case.category in self.categories
        return not self.false_positive


@dataclass
class Report:
    """The counts of one evaluation; `markdown()` renders them."""

    outcomes: list[Outcome]
    unanswered: int = 0
    by_category: dict[str, Counts] = field(default_factory=dict)
    by_severity: dict[str, Counts] = field(default_factory=dict)

    @property
    def risks(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.kind == "risk"]

    @property
    def negatives(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.kind != "risk"]

    @property
    def any_flag_recall(self) -> float | None:
        risks = self.risks
        return sum(o.severity is not None for o in risks) / len(risks) if risks else None

    @property
    def false_positives(self) -> list[Outcome]:
        return [o for o in self.negatives if o.false_positive]

    @property
    def false_positive_rate(self) -> float | None:
        negatives = self.negatives
        return len(self.false_positives) / len(negatives) if negatives else None

    def crisis_recall(self) -> float | None:
        counts = self.by_severity.get(Severity.CRISIS.value)
        return counts.recall if counts else None

    def mistakes(self) -> list[Outcome]:
        """The risks not found at their category and severity, and the false positives."""
        return [o for o in self.outcomes if not o.correct]

    def markdown(self) -> str:
        """Per category and per severity: support, precision, recall; then any-flag recall and
        the false positive rate, each with its counts."""
        lines = ["| class | support | found | precision | recall |", "|---|---:|---:|---:|---:|"]
        for name, counts in [*self.by_category.items(), *((f"**{k}**", v) for k, v in self.by_severity.items())]:
            lines.append(
                f"| {name} | {counts.support} | {counts.tp} | {_pct(counts.precision)} | {_pct(counts.recall)} |"
            )
        risks, negatives = self.risks, self.negatives
        flagged = sum(o.severity is not None for o in risks)
        lines.append("")
        lines.append(f"- cases: {len(self.outcomes)} ({len(risks)} risk, {len(negatives)} ordinary or hyperbole)")
        lines.append(f"- any-flag recall on risks: {_pct(self.any_flag_recall)} ({flagged}/{len(risks)})")
        for kind in ("ordinary", "hyperbole"):
            of_kind = [o for o in negatives if o.case.kind == kind]
            wrong = sum(o.false_positive for o in of_kind)
            lines.append(f"- false positives, {kind}: {wrong}/{len(of_kind)}")
        lines.append(
            f"- false positive rate, ordinary + hyperbole: {_pct(self.false_positive_rate)} "
            f"({len(self.false_positives)}/{len(negatives)})"
        )
        if self.unanswered:
            lines.append(f"- cases with a backend that did not answer: {self.unanswered}")
        return "\n".join(lines)

    def targets(self, language: str | None = None) -> dict[str, tuple[int, int]]:
        """The figures of the safety line's targets (docs/safety.md), as (hits, of): crisis
        messages found as crises, concern messages flagged at any level, and ordinary and
        hyperbole messages flagged as crises; for one language, or all."""
        kept = [o for o in self.outcomes if language is None or o.case.language == language]
        crisis = [o for o in kept if o.case.severity == Severity.CRISIS.value]
        concern = [o for o in kept if o.case.severity == Severity.CONCERN.value]
        negatives = [o for o in kept if o.case.kind != "risk"]
        return {
            "crisis found as crisis": (sum(o.severity == Severity.CRISIS.value for o in crisis), len(crisis)),
            "concern flagged at any level": (sum(o.severity is not None for o in concern), len(concern)),
            "ordinary and hyperbole flagged as crisis": (
                sum(o.severity == Severity.CRISIS.value for o in negatives),
                len(negatives),
            ),
        }

    def targets_markdown(self) -> str:
        """The targets' figures per language, then for all."""
        languages = sorted({o.case.language for o in self.outcomes})
        lines = ["| figure | " + " | ".join([*languages, "all"]) + " |", "|---|" + "---:|" * (len(languages) + 1)]
        columns = [self.targets(lang) for lang in languages] + [self.targets()]
        for name in columns[0]:
            cells = [f"{_pct(h / n if n else None)} ({h}/{n})" for h, n in (column[name] for column in columns)]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def evaluate(screen_fn: Callable[[str, Sequence[str]], Verdict], cases: Iterable[Case]) -> Report:
    """Screen every case's text, with its context, with `screen_fn` and count (see the module's rules). Classes
    are listed in Category's and Severity's order, those with neither support nor prediction
    left out."""
    outcomes = []
    unanswered = 0
    for case in cases:
        verdict = screen_fn(case.text, case.context)
        if any(not result.answered for result in verdict.results):
            unanswered += 1
        outcomes.append(
            Outcome(
                case=case,
                severity=verdict.severity.value if verdict.severity else None,
                categories=tuple(verdict.categories),
                rules=tuple(s.rule for s in verdict.signals),
            )
        )
    return tally(outcomes, unanswered=unanswered)


def tally(outcomes: Iterable[Outcome], *, unanswered: int = 0) -> Report:
    """The report of cases already screened (`unanswered` of them with a backend that did not
    answer), counted as `evaluate` counts: for a screening measured elsewhere, such as over the
    API (bench/safety_api.py)."""
    report = Report(outcomes=list(outcomes), unanswered=unanswered)
    categories = {c.value: Counts() for c in Category}
    severities = {s.value: Counts() for s in reversed(Severity)}
    for outcome in report.outcomes:
        case = outcome.case
        for name, counts in categories.items():
            _count(counts, labelled=case.category == name, predicted=name in outcome.categories)
        for name, counts in severities.items():
            _count(counts, labelled=case.severity == name, predicted=outcome.severity == name)
    report.by_category = {k: v for k, v in categories.items() if v.tp + v.fp + v.fn}
    report.by_severity = {k: v for k, v in severities.items() if v.tp + v.fp + v.fn}
    return report


def _count(counts: Counts, *, labelled: bool, predicted: bool) -> None:
    if labelled and predicted:
        counts.tp += 1
    elif labelled:
        counts.fn += 1
    elif predicted:
        counts.fp += 1
