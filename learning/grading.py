"""Deterministic grading of an answer: pure functions.

Multiple choice and numeric answers are always decided here. A short-text answer is correct
when it matches the expected answer once both are normalised (case, accents, spacing,
punctuation); otherwise it is left pending for the grading model (learning.model_grading).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from fractions import Fraction

from learning.models import Answer, Question

# Typographic quotes, dashes and marks beyond ASCII's (Unicode's P* categories are checked too).
_PUNCTUATION = set(string.punctuation) | set("\u00ab\u00bb\u2018\u2019\u201c\u201d\u2026\u2013\u2014\u00bf\u00a1\u00b7")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$")
_FRACTION = re.compile(r"^([+-]?\d+)/(\d+)$")
# Thousands separators people type: spaces, thin and no-break spaces, and the apostrophe.
_GROUPING = str.maketrans("", "", " \u00a0\u202f\u2009'")


def normalise_text(text: str) -> str:
    """Folded for comparison: no accents, no punctuation, lower case, single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        kept.append(" " if ch in _PUNCTUATION or unicodedata.category(ch).startswith("P") else ch)
    return " ".join("".join(kept).casefold().split())


def parse_number(text: object) -> float | None:
    """A number as a student or a model writes it ("0.5", "0,5", "1/2", "-3", "1 000", 2.5),
    or None. Infinite and NaN values are not numbers here."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        value = float(text)
        return value if math.isfinite(value) else None
    if not isinstance(text, str):
        return None
    raw = text.strip().translate(_GROUPING).lower()
    fraction = _FRACTION.match(raw)
    if fraction:
        denominator = int(fraction.group(2))
        return float(Fraction(int(fraction.group(1)), denominator)) if denominator else None
    if raw.count(",") == 1 and "." not in raw:
        raw = raw.replace(",", ".")  # a decimal comma (French)
    if not _NUMBER.match(raw):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None


def choice_index(choices: list[str], given: str) -> int | None:
    """The index of the choice `given` names (normalised match), or None."""
    wanted = normalise_text(given)
    for index, choice in enumerate(choices):
        if normalise_text(choice) == wanted:
            return index
    return None


def grade(question: Question, given: str) -> str:
    """An Answer.Result for `given`: correct or incorrect, or pending for a short text the
    normalised match cannot decide. A blank answer (skipped) is incorrect."""
    if not given.strip():
        return Answer.Result.INCORRECT
    if question.kind == Question.Kind.MULTIPLE_CHOICE:
        right = choice_index(question.choices, given) == question.correct_choice
        return Answer.Result.CORRECT if right else Answer.Result.INCORRECT
    if question.kind == Question.Kind.NUMERIC:
        value = parse_number(given)
        assert question.expected_number is not None and question.tolerance is not None
        # Room for floating-point error, so that a tolerance of 0 accepts "0.3" for 0.1 + 0.2.
        slack = question.tolerance + 1e-9 * max(1.0, abs(question.expected_number))
        right = value is not None and abs(value - question.expected_number) <= slack
        return Answer.Result.CORRECT if right else Answer.Result.INCORRECT
    if normalise_text(given) == normalise_text(question.expected_answer):
        return Answer.Result.CORRECT
    return Answer.Result.PENDING
