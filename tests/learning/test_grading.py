"""Deterministic grading (pure): normalised text, numbers as people write them, choices."""

from __future__ import annotations

import pytest

from learning.grading import grade, normalise_text, parse_number
from learning.models import Question


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("  Dénominateur. ", "denominateur"),
        ("A  common\tdenominator!", "a common denominator"),
        ("L'addition", "l addition"),
        ("«Fraction» — irréductible…", "fraction irreductible"),
        ("ÉLÈVE", "eleve"),
        ("?!.", ""),
    ],
)
def test_normalise_text(text, folded):
    assert normalise_text(text) == folded


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.5", 0.5),
        ("0,5", 0.5),
        (" 1/2 ", 0.5),
        ("-3/4", -0.75),
        ("1 000", 1000.0),
        ("1\u202f000,5", 1000.5),
        ("2e3", 2000.0),
        (".25", 0.25),
        (7, 7.0),
        (0.83, 0.83),
    ],
)
def test_numbers_as_people_write_them(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "1/0", "1,000.5,2", "inf", "nan", "1e999", None, True, [1], "1 / 2 / 3"])
def test_not_numbers(text):
    assert parse_number(text) is None


def numeric(expected: float, tolerance: float) -> Question:
    return Question(
        kind=Question.Kind.NUMERIC, expected_answer=str(expected), expected_number=expected, tolerance=tolerance
    )


def test_numeric_answers_within_the_tolerance():
    """Within the tolerance (inclusive) is right; floating-point error never makes it wrong."""
    q = numeric(0.83, 0.01)
    assert grade(q, "0.84") == grade(q, "0,82") == grade(q, "5/6") == "correct"
    assert grade(q, "0.85") == grade(q, "abc") == grade(q, "") == "incorrect"
    exact = numeric(0.1 + 0.2, 0)
    assert grade(exact, "0.3") == "correct"
    assert grade(numeric(0.5, 0), "1/2") == "correct"


def test_multiple_choice_by_the_choice_text():
    q = Question(kind=Question.Kind.MULTIPLE_CHOICE, choices=["3/4", "Two sixths", "1/6"], correct_choice=0)
    assert grade(q, "3/4") == "correct"
    assert grade(q, "two SIXTHS.") == "incorrect"
    assert grade(q, " ") == "incorrect"


def test_short_text_matches_or_waits_for_the_model():
    """A normalised match is right at once; anything else is pending for the model, never wrong
    here; blank is wrong."""
    q = Question(kind=Question.Kind.SHORT_TEXT, expected_answer="A common denominator")
    assert grade(q, "a COMMON dénominator!") == "correct"
    assert grade(q, "the same denominator") == "pending"
    assert grade(q, "") == "incorrect"
