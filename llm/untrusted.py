"""Untrusted text shown to a model as data, inside delimiters it cannot forge.

Memories, transcripts, files, task texts and quiz answers are written by students, by teachers or
by earlier model output. Each untrusted entry is shown as one element (`untrusted_element`) whose
tag and attributes (who wrote it, when, its role) the app sets, never the text; the text keeps
its lines, so whatever a line of it looks like, it stays inside its entry.

Anything in the text that a model could read as a tag of the app's prompts (`PROMPT_TAGS`) is
rewritten first (`neutralise`). The search runs on a skeleton of the text, what it looks like:
Unicode's compatibility forms folded (NFKD, as NFKC: full-width letters, ligatures), invisible
characters dropped (every format character, category Cf: zero-width spaces and joiners, the soft
hyphen, bidi controls; combining marks; other default-ignorable code points), HTML character
references decoded (`&lt;`, `&#60;`, `&#x3c;`, escaped twice too), case ignored, and letters of
other scripts folded to the ASCII letters they look like, from Unicode's confusables table
(UTS #39, shipped by the confusable-homoglyphs package: the Cyrillic dze for "s", the Greek
omicron for "o", the Canadian syllabics PA for "<"...). A match is replaced in the original
text by the skeleton of the tag in parentheses: readable, and no delimiter.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

# Every tag the app's prompts delimit untrusted data with. One list for every prompt: a text
# shown in one prompt may be shown in another, and a tag neutralised where it means nothing
# costs only its angle brackets.
PROMPT_TAGS = (
    # The chat prompt: conversations.prompts, memory.block, learning.prompts, memory.card_prompts.
    "student_card",
    "student_memories",
    "memory",
    "learning_record",
    "file",
    "conversation_summary",
    # Transcripts, for the summary and compression models: memory.prompts, conversations.prompts.
    "transcript",
    "message",
    "notes",
    # The memory lifecycle: memory.lifecycle_prompts.
    "memories",
    "new_memory",
    "known",
    # Grading short answers: learning.prompts.
    "grading",
    "question",
    "expected_answer",
    "student_answer",
)

# Characters a model may read as "<" or ">" that neither NFKD nor the confusables table maps to them.
_OPENERS = "<\u2039\u2329\u27e8\uff1c\ufe64\u276e\u29fc\u3008\u300a\u00ab"
_CLOSERS = ">\u203a\u232a\u27e9\uff1e\ufe65\u276f\u29fd\u3009\u300b\u00bb"
# Characters whose compatibility decomposition holds one of _OPENERS ("≮", the vertical
# presentation forms of the angle brackets): with the openers, the confusables of "<" and "&",
# every character that can open a tag in the skeleton (a test checks all of Unicode).
_DECOMPOSED_OPENERS = "\u226e\ufe3d\ufe3f"
# Default-ignorable code points (shown as nothing, or as a blank) outside the dropped categories.
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Categories dropped from the skeleton: format characters, combining marks, controls, private
# use, surrogates and unassigned code points; none of them draws a letter of a tag.
_DROPPED = frozenset({"Cf", "Mn", "Me", "Cc", "Co", "Cs", "Cn"})
# HTML character references, as html.unescape reads them (the semicolon may be missing).
_ENTITY = re.compile(r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{0,31});?")
# Text escaped more than this many times is not read as a tag by anyone.
_UNESCAPE_ROUNDS = 3
# ASCII letters and digits that look alike, as the confusables table says (it maps other scripts
# to ASCII, not ASCII to ASCII): "I" and "1" for "l", "0" for "o".
_ASCII_LOOK_ALIKES = {"l": "[l1i|]", "i": "[i1l|]", "o": "[o0]"}


@lru_cache(maxsize=1)
def _may_open() -> re.Pattern[str]:
    """A quick check: text with none of these characters holds no tag, whatever it looks like."""
    found = confusables.is_confusable("<", preferred_aliases=[])
    look_alikes = {glyph["c"] for glyph in found[0]["homoglyphs"] if len(glyph["c"]) == 1} if found else set()
    chars = {"<", "&", *_OPENERS, *_DECOMPOSED_OPENERS, *look_alikes}
    return re.compile("[" + "".join(re.escape(char) for char in sorted(chars)) + "]")


@lru_cache(maxsize=8192)
def _ascii_look_alike(char: str) -> str:
    """The printable ASCII character that `char` looks like (Unicode's confusables), or ""."""
    found = confusables.is_confusable(char, preferred_aliases=[])
    for glyph in found[0]["homoglyphs"] if found else ():
        look_alike = glyph["c"]
        if len(look_alike) == 1 and look_alike.isascii() and look_alike.isprintable() and not look_alike.isspace():
            return look_alike.lower()
    return ""


@lru_cache(maxsize=65536)
def _fold(char: str) -> str:
    """What one character of the text looks like, in lowercase ASCII where it looks like ASCII:
    "" for an invisible one, several characters for a compatibility form ("ﬁ")."""
    if char.isascii():
        return char.lower() if char.isprintable() or char.isspace() else ""
    out = []
    for part in unicodedata.normalize("NFKD", char):
        if part in _OPENERS:
            out.append("<")
        elif part in _CLOSERS:
            out.append(">")
        elif part in _BLANKS or unicodedata.category(part) in _DROPPED:
            continue
        elif part.isascii():
            out.append(part.lower())
        else:
            lower = part.lower()
            out.append(_ascii_look_alike(part) or _ascii_look_alike(lower) or lower)
    return "".join(out)


def _decoded(text: str) -> list[tuple[str, int, int]]:
    """The characters of `text` with HTML character references decoded, each with the span of
    `text` it comes from."""
    pieces = [(char, i, i + 1) for i, char in enumerate(text)]
    for _ in range(_UNESCAPE_ROUNDS):
        joined = "".join(char for char, _, _ in pieces)
        if "&" not in joined:
            break
        out, last, changed = [], 0, False
        for match in _ENTITY.finditer(joined):
            decoded = html.unescape(match.group())
            if decoded == match.group():
                continue
            start, end = pieces[match.start()][1], pieces[match.end() - 1][2]
            out += pieces[last : match.start()]
            out += [(char, start, end) for char in decoded]
            last, changed = match.end(), True
        if not changed:
            break
        pieces = out + pieces[last:]
    return pieces


def _skeleton(text: str) -> tuple[str, list[int], list[int]]:
    """What `text` looks like (see the module's docstring), and for each character of it, the
    start and end of the span of `text` it comes from."""
    skeleton: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for char, start, end in _decoded(text) if "&" in text else ((c, i, i + 1) for i, c in enumerate(text)):
        folded = _fold(char)
        skeleton.append(folded)
        starts += [start] * len(folded)
        ends += [end] * len(folded)
    return "".join(skeleton), starts, ends


def _name_pattern(tag: str) -> str:
    parts = re.split(r"[_\-\s]+", tag)
    return r"[\s_\-.]*".join("".join(_ASCII_LOOK_ALIKES.get(c, re.escape(c)) for c in part) for part in parts)


@lru_cache(maxsize=16)
def _pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(_name_pattern(tag) for tag in tags)
    return re.compile(rf"<\s*[/\\]?\s*(?:{names})\b(?:[^<>]{{0,200}}>)?")


def neutralise(text: str, tags: tuple[str, ...] = PROMPT_TAGS) -> str:
    """`text` with every look-alike of an opening or closing tag of `tags` made harmless: it is
    rewritten as the tag's skeleton in parentheses ("(/student_memories)"), so the words stay
    readable but no delimiter remains. The rest of the text is returned as it was."""
    if not _may_open().search(text):
        return text
    skeleton, starts, ends = _skeleton(text)
    out, last = [], 0
    for match in _pattern(tags).finditer(skeleton):
        start, end = max(starts[match.start()], last), ends[match.end() - 1]
        out.append(text[last:start])
        out.append("(" + match.group().strip("<>").strip() + ")")
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def untrusted_element(tag: str, text: str, **attributes: object) -> str:
    """One untrusted entry of a prompt: `<tag name="value"...>text</tag>`.

    The app sets the tag (one of PROMPT_TAGS) and the attributes (escaped; empty ones left out),
    never the text. The text keeps its lines, and is neutralised: it can neither close this
    element nor open or close any other delimiter of the app's prompts, so every line of it,
    whatever it looks like, is part of this one entry.
    """
    if tag not in PROMPT_TAGS:
        raise ValueError(f"{tag!r} is not one of the prompts' tags (PROMPT_TAGS)")
    shown = "".join(
        f' {name}="{html.escape(str(value), quote=True)}"'
        for name, value in attributes.items()
        if value not in (None, "")
    )
    return f"<{tag}{shown}>{neutralise(text)}</{tag}>"


def quoted(text: str) -> str:
    """A short untrusted text (a class's name) inside one of the app's own sentences, in double
    quotes: on one line, its quotes and markup escaped, neutralised like an element's text, so
    that it can neither end the sentence's quotes nor open a delimiter or a new instruction."""
    return '"' + html.escape(" ".join(neutralise(text).split()), quote=True) + '"'


def transcript_block(messages: list[tuple[str, str]], *, note: str = "") -> str:
    """A conversation as data: each (role, text) in a `<message role="...">` element whose role
    the app sets, inside `<transcript>`; a student cannot forge the tutor's side."""
    lines = ["<transcript>"]
    if note:
        lines.append(note)
    lines += [untrusted_element("message", text, role=role) for role, text in messages]
    lines.append("</transcript>")
    return "\n".join(lines)
