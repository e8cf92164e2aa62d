"""Untrusted text shown to a model as data, inside delimiters it cannot forge.

Memories and transcripts are written by students, by earlier model output or by teachers. They
are placed between tags (`<student_memories>`, `<transcript>`, `<message ...>`), and anything in
the text that a model could read as one of those tags is rewritten first: whatever its case, its
spacing, its separators, or Unicode look-alikes of its characters (full-width letters, angle
quotation marks, mathematical brackets).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters a model may read as "<" or ">".
_OPENERS = "<\u2039\u2329\u27e8\uff1c\ufe64\u276e\u29fc\u3008\u300a\u00ab"
_CLOSERS = ">\u203a\u232a\u27e9\uff1e\ufe65\u276f\u29fd\u3009\u300b\u00bb"


def _skeleton(text: str) -> str:
    """One character per character of `text`, folded to what it looks like: the search runs on
    this and the replacements are made at the same positions in the original."""
    out = []
    for ch in text:
        if ch in _OPENERS:
            out.append("<")
        elif ch in _CLOSERS:
            out.append(">")
        elif ch.isascii():
            out.append(ch.lower())
        else:
            folded = unicodedata.normalize("NFKC", ch).lower()
            out.append(folded if len(folded) == 1 else ch)
    return "".join(out)


@lru_cache(maxsize=16)
def _pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(r"[\s_\-.]*".join(re.escape(part) for part in re.split(r"[_\-\s]+", tag)) for tag in tags)
    return re.compile(rf"<\s*/?\s*(?:{names})\b(?:[^<>]{{0,200}}>)?", re.IGNORECASE)


def neutralise(text: str, tags: tuple[str, ...]) -> str:
    """`text` with every look-alike of an opening or closing `tags` tag made harmless: its angle
    brackets become parentheses, so the words stay readable but no delimiter remains."""
    skeleton = _skeleton(text)
    spans = [m.span() for m in _pattern(tags).finditer(skeleton)]
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append("(" + _skeleton(text[start:end]).strip("<>").strip() + ")")
        last = end
    out.append(text[last:])
    return "".join(out)


TRANSCRIPT_TAGS = ("transcript", "message", "student_memories")


def transcript_block(messages: list[tuple[str, str]], *, note: str = "") -> str:
    """A conversation as data: each (role, text) in a `<message role="...">` element whose role
    the app sets, inside `<transcript>`; a student cannot forge the tutor's side."""
    lines = ["<transcript>"]
    if note:
        lines.append(note)
    for role, text in messages:
        lines.append(f'<message role="{role}">{neutralise(text, TRANSCRIPT_TAGS)}</message>')
    lines.append("</transcript>")
    return "\n".join(lines)
