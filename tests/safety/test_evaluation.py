"""The evaluation's counts (safety.evaluation) on a tiny hand-made set with a scripted screen."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from safety.evaluation import Case, evaluate, load_cases, split_of
from safety.types import BackendResult, Category, Severity, Signal, Verdict, combine

CRISIS, CONCERN, INFO = Severity.CRISIS, Severity.CONCERN, Severity.INFO

CASES = [
    Case("die", "en", "self_harm", "crisis", "risk"),
    Case("cut", "en", "self_harm", "concern", "risk"),
    Case("hits", "en", "abuse", "crisis", "risk"),
    Case("alone", "en", "distress", "info", "risk"),
    Case("maths", "en", None, None, "ordinary"),
    Case("fractions", "en", None, None, "ordinary"),
    Case("dying to", "en", None, None, "hyperbole"),
    Case("lol dead", "en", None, None, "hyperbole"),
]
# What the scripted screen says of each text.
SCRIPT: dict[str, list[tuple[Category, Severity]]] = {
    "die": [(Category.SELF_HARM, CRISIS)],  # found, right severity
    "cut": [(Category.SELF_HARM, CRISIS)],  # right category, severity too high
    "hits": [],  # missed
    "alone": [(Category.DISTRESS, INFO)],  # found
    "maths": [(Category.DISTRESS, INFO)],  # info on ordinary: not a false positive
    "fractions": [(Category.VIOLENCE, CONCERN)],  # concern on ordinary: a false positive
    "dying to": [(Category.SELF_HARM, INFO)],  # any signal on hyperbole: a false positive
    "lol dead": [],
}


def scripted(text: str, context: Sequence[str] = ()) -> Verdict:
    signals = [Signal(category=c, severity=s, rule="scripted") for c, s in SCRIPT[text]]
    return combine([BackendResult(backend="scripted", answered=True, signals=signals)])


def test_per_category_precision_and_recall():
    """self_harm: 2 labelled, both have a self_harm signal, and one hyperbole case too: recall
    1, precision 2/3. abuse: recall 0, no prediction. distress: 1 found, 1 extra on an ordinary
    case: precision 1/2."""
    report = evaluate(scripted, CASES)
    self_harm = report.by_category["self_harm"]
    assert (self_harm.tp, self_harm.fp, self_harm.fn) == (2, 1, 0)
    assert self_harm.recall == 1.0 and self_harm.precision == pytest.approx(2 / 3)
    abuse = report.by_category["abuse"]
    assert abuse.recall == 0.0 and abuse.precision is None
    assert report.by_category["distress"].precision == 0.5
    assert report.by_category["violence"].recall is None and report.by_category["violence"].precision == 0.0
    assert "hate" not in report.by_category


def test_per_severity_counts_a_case_found_when_the_verdict_severity_equals_the_label():
    report = evaluate(scripted, CASES)
    crisis = report.by_severity["crisis"]
    # "die" found; "hits" missed; "cut" predicted crisis but labelled concern.
    assert (crisis.tp, crisis.fp, crisis.fn) == (1, 1, 1)
    assert report.crisis_recall() == 0.5
    concern = report.by_severity["concern"]
    # "cut" missed at concern; "fractions" predicted concern on an ordinary case.
    assert (concern.tp, concern.fp, concern.fn) == (0, 1, 1)
    info = report.by_severity["info"]
    # "alone" found; "maths" and "dying to" predicted info without the label.
    assert (info.tp, info.fp, info.fn) == (1, 2, 0)


def test_any_flag_recall_and_the_false_positive_rule():
    """3 of 4 risks have a signal. False positives: "fractions" (concern on ordinary) and
    "dying to" (info on hyperbole), not "maths" (info on ordinary): 2 of 4."""
    report = evaluate(scripted, CASES)
    assert report.any_flag_recall == 0.75
    assert {o.case.text for o in report.false_positives} == {"fractions", "dying to"}
    assert report.false_positive_rate == 0.5
    assert {o.case.text for o in report.mistakes()} == {"cut", "hits", "fractions", "dying to"}


def test_markdown_has_a_row_per_class_and_the_totals():
    table = evaluate(scripted, CASES).markdown()
    assert "| self_harm | 2 | 2 | 66.7 % | 100.0 % |" in table
    assert "| **crisis** | 2 | 1 | 50.0 % | 50.0 % |" in table
    assert "| abuse | 1 | 0 | n/a | 0.0 % |" in table
    assert "any-flag recall on risks: 75.0 % (3/4)" in table
    assert "false positive rate, ordinary + hyperbole: 50.0 % (2/4)" in table


def test_a_backend_that_did_not_answer_is_counted():
    def silent(text: str, context: Sequence[str] = ()) -> Verdict:
        return combine([BackendResult(backend="moderation", answered=False, error="timeout")])

    report = evaluate(silent, CASES[:2])
    assert report.unanswered == 2
    assert "did not answer: 2" in report.markdown()


def test_load_cases_validates_labels(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(
        json.dumps({"text": "x", "language": "en", "category": "hate", "severity": "concern", "kind": "risk"}) + "\n\n"
    )
    assert load_cases(good) == [Case("x", "en", "hate", "concern", "risk", source="good")]
    for bad in (
        {"text": "x", "language": "en", "category": "hate", "severity": None, "kind": "risk"},
        {"text": "x", "language": "en", "category": "hate", "severity": "concern", "kind": "ordinary"},
        {"text": "x", "language": "en", "category": "nope", "severity": "concern", "kind": "risk"},
        {"text": "x", "language": "en", "category": None, "severity": None, "kind": "joke"},
    ):
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError):
            load_cases(path)


def test_split_is_stable_and_holds_out_about_a_fifth():
    cases = [Case(f"message {i}", "en", None, None, "ordinary") for i in range(1000)]
    held = [c for c in cases if split_of(c) == "holdout"]
    assert 150 <= len(held) <= 250
    assert [split_of(c) for c in cases] == [split_of(c) for c in cases]
