"""The shape of a memory, checked before anything is stored: never truncated silently.

The limits of every text a user, an agent or the model writes into a memory live here, in words
and in characters (a word can be of any length), with the one rule for what text may hold:
`refuse_unstorable`. Every path reaches them: the API's serializers (their `max_length`, the
schema's maxLength), the services behind the tutor's tools, MCP and the admin, and the parsers
of the model's answers. What the app renders from its own records is cut by `clip_content`.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

TITLE_MIN_WORDS = 4
TITLE_MAX_WORDS = 10
TITLE_MAX_CHARS = 200
CONTENT_MAX_WORDS = 200
# Ten characters a word on average: room for long words, not for a pasted blob.
CONTENT_MAX_CHARS = 2000
# An archive or supersession reason (AIMemory.archived_reason).
REASON_MAX_CHARS = 300
SUMMARY_MIN_SENTENCES = 2
SUMMARY_MAX_SENTENCES = 4
CLIPPED = " [...]"

_SENTENCE_END = re.compile(r"[.!?…]+(?=\s|$)")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def word_count(text: str) -> int:
    return len(text.split())


def sentence_count(text: str) -> int:
    text = text.strip()
    if not text:
        return 0
    ends = len(_SENTENCE_END.findall(text))
    # A last sentence without final punctuation still counts.
    return ends + (0 if _SENTENCE_END.search(text[-1:] + " ") else 1)


def refuse_unstorable(text: str, field: str) -> None:
    """ValidationError on `field` if `text` holds a NUL (PostgreSQL cannot store it in text) or a
    lone surrogate (not encodable as UTF-8): the rule of the API's text fields (DRF's CharField,
    with the same messages), for the paths that do not go through a serializer."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return
    if found.group() == "\x00":
        raise ValidationError({field: [_("Null characters are not allowed.")]})
    message = _("Surrogate characters are not allowed: U+{code_point:X}.").format(code_point=ord(found.group()))
    raise ValidationError({field: [message]})


def _too_long(field: str) -> str:
    # One whole message per field, so that each translates as a sentence.
    if field == "title":
        return _("Title must be at most %(limit)s characters.")
    if field == "content":
        return _("Content must be at most %(limit)s characters.")
    return _("Reason must be at most %(limit)s characters.")


def validate_chars(text: str, field: str, limit: int) -> None:
    """ValidationError on `field` (title, content or reason) if `text` is longer than `limit`
    characters or is not storable (`refuse_unstorable`)."""
    if len(text) > limit:
        raise ValidationError({field: [_too_long(field) % {"limit": limit}]})
    refuse_unstorable(text, field)


def validate_title(title: object) -> str:
    if not isinstance(title, str) or not title.strip():
        raise ValidationError({"title": [_("Title is required and must be text.")]})
    title = " ".join(title.split())
    n = word_count(title)
    if not TITLE_MIN_WORDS <= n <= TITLE_MAX_WORDS:
        message = _("Title must have %(min)s to %(max)s words (got %(count)s).")
        raise ValidationError({"title": [message % {"min": TITLE_MIN_WORDS, "max": TITLE_MAX_WORDS, "count": n}]})
    validate_chars(title, "title", TITLE_MAX_CHARS)
    return title


def validate_content(content: object, *, is_summary: bool = False) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError({"content": [_("Content is required and must be text.")]})
    content = content.strip()
    n = word_count(content)
    if n > CONTENT_MAX_WORDS:
        message = _("Content must be at most %(limit)s words (got %(count)s).")
        raise ValidationError({"content": [message % {"limit": CONTENT_MAX_WORDS, "count": n}]})
    validate_chars(content, "content", CONTENT_MAX_CHARS)
    if is_summary:
        s = sentence_count(content)
        if not SUMMARY_MIN_SENTENCES <= s <= SUMMARY_MAX_SENTENCES:
            message = _("A summary must have %(min)s to %(max)s sentences (got %(count)s).")
            raise ValidationError(
                {"content": [message % {"min": SUMMARY_MIN_SENTENCES, "max": SUMMARY_MAX_SENTENCES, "count": s}]}
            )
    return content


# Words a title cut short should not end on (English and French).
_DANGLING = frozenset(
    """a an and as at but by for from in into of on or so than that the then to with without
    à au aux avec dans de des du en et la le les ou par pour sans sur un une""".split()  # noqa: SIM905
)
_TRAILING = ",;:-\u2013\u2014"


def title_cut(title: str) -> str:
    """`title` on one line, cut at a word to TITLE_MAX_WORDS words and TITLE_MAX_CHARS
    characters, not after a word that leaves it dangling ("and", "with", "de"...), keeping at
    least TITLE_MIN_WORDS words; returned as it came (on one line) when it fits."""
    words = title.split()
    if len(words) > TITLE_MAX_WORDS:
        words = words[:TITLE_MAX_WORDS]
        while len(words) > TITLE_MIN_WORDS and words[-1].lower().strip(_TRAILING) in _DANGLING:
            words.pop()
    while len(" ".join(words)) > TITLE_MAX_CHARS and len(words) > TITLE_MIN_WORDS:
        words.pop()
    if words == title.split():
        return " ".join(words)
    return " ".join(words).rstrip(_TRAILING)


def validate_reason(reason: object, *, required_message: str) -> str:
    """An archive or supersession reason on one line, 1 to REASON_MAX_CHARS characters."""
    clean = " ".join(reason.split()) if isinstance(reason, str) else ""
    if not clean:
        raise ValidationError({"reason": [required_message]})
    validate_chars(clean, "reason", REASON_MAX_CHARS)
    return clean


def clip(text: str, *, max_chars: int, max_words: int | None = None) -> str:
    """`text` on one line, cut to `max_words` words and `max_chars` characters (at a word when
    there is one, ending with CLIPPED when cut), without what cannot be stored: for texts the app
    renders itself (a record's memory, a fallback's quotes), where refusing would lose them."""
    text = " ".join(_UNSTORABLE.sub("", text).split())
    words = text.split(" ")
    cut = max_words is not None and len(words) > max_words
    if cut:
        text = " ".join(words[:max_words])
    if len(text) > max_chars or cut:
        room = max_chars - len(CLIPPED)
        if len(text) > room:
            head = text[:room]
            text = head.rsplit(" ", 1)[0] if " " in head[room // 2 :] else head
        text += CLIPPED
    return text


def clip_content(text: str) -> str:
    """A record's content within CONTENT_MAX_WORDS words and CONTENT_MAX_CHARS characters."""
    return clip(text, max_chars=CONTENT_MAX_CHARS, max_words=CONTENT_MAX_WORDS)
