"""A memory's shape is validated, never silently truncated."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from memory.prompts import parse_summary
from memory.validation import sentence_count, validate_content, validate_title


@pytest.mark.parametrize(
    "title",
    ["Fractions", "Adding fractions today", "one two three four five six seven eight nine ten eleven", "", None, 5],
)
def test_bad_titles(title):
    with pytest.raises(ValidationError):
        validate_title(title)


def test_good_title_is_normalised_not_truncated():
    assert (
        validate_title("  Adding   fractions with unlike denominators ") == "Adding fractions with unlike denominators"
    )


def test_content_over_200_words_is_refused():
    with pytest.raises(ValidationError, match="200 words"):
        validate_content("word " * 201)
    assert validate_content("word " * 200) == ("word " * 200).strip()


@pytest.mark.parametrize(
    ("text", "n"),
    [("One sentence.", 1), ("One. Two!", 2), ("One. Two? Three", 3), ("Worked on 3.5 and 2.25. Good.", 2), ("", 0)],
)
def test_sentence_count(text, n):
    assert sentence_count(text) == n


def test_summary_needs_two_to_four_sentences():
    with pytest.raises(ValidationError, match="2 to 4 sentences"):
        validate_content("Only one sentence here.", is_summary=True)
    with pytest.raises(ValidationError, match="2 to 4 sentences"):
        validate_content("A. B. C. D. E.", is_summary=True)
    assert validate_content("First. Second.", is_summary=True)


def test_parse_summary_accepts_json_with_surrounding_text():
    title, content = parse_summary(
        'Sure! {"title": "Fractions practice with unlike denominators", "content": "Did fractions. Got 3 of 5."}'
    )
    assert title.startswith("Fractions") and content.endswith("5.")


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ("no json here", "no JSON"),
        ('{"title": "x"', "no JSON"),
        ('{"title": "Four words title here", "content": 3}', "Content"),
        ('{"title": "Short", "content": "A. B."}', "4 to 10 words"),
        ('{"title": "Fractions practice with unlike denominators", "content": "' + "w " * 250 + '."}', "200 words"),
    ],
)
def test_parse_summary_says_what_is_wrong(answer, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_summary(answer)
