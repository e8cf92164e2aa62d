"""A memory's shape is validated, never silently truncated."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from memory.prompts import parse_summary
from memory.validation import (
    CLIPPED,
    CONTENT_MAX_CHARS,
    CONTENT_MAX_WORDS,
    REASON_MAX_CHARS,
    TITLE_MAX_CHARS,
    clip,
    clip_content,
    sentence_count,
    validate_content,
    validate_reason,
    validate_title,
)


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
        ('{"title": "x"', "not valid JSON"),
        ('{"title": "Four words title here", "content": 3}', "Content"),
        ('{"title": "Short", "content": "A. B."}', "4 to 10 words"),
        ('{"title": "Fractions practice with unlike denominators", "content": "' + "w " * 250 + '."}', "200 words"),
    ],
)
def test_parse_summary_says_what_is_wrong(answer, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_summary(answer)


def test_content_over_the_character_limit_is_refused_whatever_its_words():
    """A single 2.4 MB word is one word, and still refused: CONTENT_MAX_CHARS counts characters."""
    for content in ("x" * 2_400_000, "word " * 150 + "y" * CONTENT_MAX_CHARS):
        with pytest.raises(ValidationError, match=f"{CONTENT_MAX_CHARS} characters"):
            validate_content(content)
    at_limit = "z" * CONTENT_MAX_CHARS
    assert validate_content(at_limit) == at_limit


def test_title_over_the_character_limit_is_refused():
    with pytest.raises(ValidationError, match=f"{TITLE_MAX_CHARS} characters"):
        validate_title("Adds fractions with " + "d" * TITLE_MAX_CHARS)


@pytest.mark.parametrize(
    ("text", "message"),
    [("Adds \x00 fractions with ease", "Null characters"), ("Adds \ud800 fractions with ease", r"U\+D800")],
)
def test_nul_and_lone_surrogates_are_refused_as_the_api_refuses_them(text, message):
    """The rule of DRF's CharField, with its messages, for the paths without a serializer."""
    with pytest.raises(ValidationError, match=message):
        validate_title(text)
    with pytest.raises(ValidationError, match=message):
        validate_content(text)
    with pytest.raises(ValidationError, match=message):
        validate_reason(text, required_message="A reason is required.")


def test_a_reason_is_one_line_and_bounded():
    assert validate_reason("  Not   true\nany more ", required_message="Needed.") == "Not true any more"
    for empty in ("  ", None, 5):
        with pytest.raises(ValidationError, match=r"Needed\."):
            validate_reason(empty, required_message="Needed.")
    with pytest.raises(ValidationError, match=f"{REASON_MAX_CHARS} characters"):
        validate_reason("r" * (REASON_MAX_CHARS + 1), required_message="Needed.")


def test_the_limits_speak_the_users_language():
    with translation.override("fr"), pytest.raises(ValidationError) as refused:
        validate_content("x" * (CONTENT_MAX_CHARS + 1))
    assert refused.value.messages == [f"Le contenu doit compter au plus {CONTENT_MAX_CHARS} caractères."]


def test_clip_cuts_at_a_word_and_marks_the_cut():
    """clip keeps a short text as it is (on one line), and cuts a long one at a word where there is
    one, else in the word, always within the limit and ending with the mark; it drops what cannot
    be stored."""
    assert clip("  Short\ntext ", max_chars=50) == "Short text"
    cut = clip("alpha beta gamma delta epsilon", max_chars=20)
    assert cut == "alpha beta" + CLIPPED and len(cut) <= 20
    hard = clip("x" * 100, max_chars=20)
    assert hard == "x" * (20 - len(CLIPPED)) + CLIPPED
    assert clip("a\x00b \ud800c", max_chars=50) == "ab c"
    words = clip_content("w " * (CONTENT_MAX_WORDS + 5))
    assert words == ("w " * CONTENT_MAX_WORDS).strip() + CLIPPED
    assert len(clip_content("y" * 10**6)) == CONTENT_MAX_CHARS
