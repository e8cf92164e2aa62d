"""The shape of a memory, checked before anything is stored: never truncated silently."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

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
        raise ValidationError({"title": [_("Title is required and must be text.")]})
    title = " ".join(title.split())
    n = word_count(title)
    if not TITLE_MIN_WORDS <= n <= TITLE_MAX_WORDS:
        message = _("Title must have %(min)s to %(max)s words (got %(count)s).")
        raise ValidationError({"title": [message % {"min": TITLE_MIN_WORDS, "max": TITLE_MAX_WORDS, "count": n}]})
    if len(title) > TITLE_MAX_CHARS:
        message = _("Title must be at most %(limit)s characters.")
        raise ValidationError({"title": [message % {"limit": TITLE_MAX_CHARS}]})
    return title


def validate_content(content: object, *, is_summary: bool = False) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError({"content": [_("Content is required and must be text.")]})
    content = content.strip()
    n = word_count(content)
    if n > CONTENT_MAX_WORDS:
        message = _("Content must be at most %(limit)s words (got %(count)s).")
        raise ValidationError({"content": [message % {"limit": CONTENT_MAX_WORDS, "count": n}]})
    if is_summary:
        s = sentence_count(content)
        if not SUMMARY_MIN_SENTENCES <= s <= SUMMARY_MAX_SENTENCES:
            message = _("A summary must have %(min)s to %(max)s sentences (got %(count)s).")
            raise ValidationError(
                {"content": [message % {"min": SUMMARY_MIN_SENTENCES, "max": SUMMARY_MAX_SENTENCES, "count": s}]}
            )
    return content
