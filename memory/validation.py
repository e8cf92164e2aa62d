"""The shape of a memory, checked before anything is stored: never truncated silently."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

TITLE_MIN_WORDS = 4
TITLE_MAX_WORDS = 10
TITLE_MAX_CHARS = 200
CONTENT_MAX_WORDS = 200
SUMMARY_MIN_SENTENCES = 2
SUMMARY_MAX_SENTENCES = 4

_SENTENCE_END = re.compile(r"[.!?…]+(?=\s|$)")


def word_count(text: str) -> int:
    return len(text.split())


def sentence_count(text: str) -> int:
    text = text.strip()
    if not text:
        return 0
    ends = len(_SENTENCE_END.findall(text))
    # A last sentence without final punctuation still counts.
    return ends + (0 if _SENTENCE_END.search(text[-1:] + " ") else 1)


def validate_title(title: object) -> str:
    if not isinstance(title, str) or not title.strip():
        raise ValidationError({"title": ["Title is required and must be text."]})
    title = " ".join(title.split())
    n = word_count(title)
    if not TITLE_MIN_WORDS <= n <= TITLE_MAX_WORDS:
        raise ValidationError(
            {"title": [f"Title must have {TITLE_MIN_WORDS} to {TITLE_MAX_WORDS} words (got {n})."]}
        )
    if len(title) > TITLE_MAX_CHARS:
        raise ValidationError({"title": [f"Title must be at most {TITLE_MAX_CHARS} characters."]})
    return title


def validate_content(content: object, *, is_summary: bool = False) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError({"content": ["Content is required and must be text."]})
    content = content.strip()
    n = word_count(content)
    if n > CONTENT_MAX_WORDS:
        raise ValidationError({"content": [f"Content must be at most {CONTENT_MAX_WORDS} words (got {n})."]})
    if is_summary:
        s = sentence_count(content)
        if not SUMMARY_MIN_SENTENCES <= s <= SUMMARY_MAX_SENTENCES:
            raise ValidationError(
                {
                    "content": [
                        f"A summary must have {SUMMARY_MIN_SENTENCES} to {SUMMARY_MAX_SENTENCES} "
                        f"sentences (got {s})."
                    ]
                }
            )
    return content
