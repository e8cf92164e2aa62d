"""The server's check of an answer's citations. Pure functions.

The model cites evidence with refs in square brackets (`[m12]`, `[quiz 4]`, `[m12, quiz 4]`).
`check_answer`:
- reads every bracket that holds refs (a bracket with no ref in it, "[sic]", is left alone);
- keeps the refs the prompt showed, written the way the prompt wrote them (`[M 12]` is `[m12]`),
  one bracket each; a ref the prompt did not show is removed from the text and listed in
  `dropped` (a bracket left empty goes, with the space before it);
- splits the text into claims (its sentences and lines), each with the refs it cites and
  `supported: false` when it cites none.
`citations` then describes each cited ref from the evidence shown; `named_students` lists the
students a class answer names; `says_insufficient` recognises an answer that says the evidence
does not answer the question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insights.items import Item

_BRACKET = re.compile(r"\[([^\[\]\n]{1,200})\]")
_SEPARATOR = re.compile(r"\s*[;,]\s*")
_NUMBERED = re.compile(r"(m|quiz|file)\s*#?\s*(\d{1,19})", re.IGNORECASE)
_NAMED = re.compile(r"(task|skill|card)\b\s*#?\s*(.*)", re.IGNORECASE)
_REMOVED = "\x00"
# A claim ends at a line break, or at . ! ? … followed by space, taking the refs right after it.
_BOUNDARY = re.compile(r"(?P<end>[.!?…]+(?:[ \t]*\[[^\[\]\n]*\])*)[ \t]+(?=\S)|\n+")


@dataclass(frozen=True)
class Checked:
    """The answer with only the refs shown, its claims, the refs it cited (in order) and those
    it wrote that the prompt never showed (in order, each once)."""

    answer: str
    claims: list[dict[str, Any]]
    cited: list[str]
    dropped: list[str]


def normal_ref(token: str) -> str | None:
    """`token` as a ref (`m12`, `quiz 4`, `skill adding fractions`...), or None if it is not one."""
    text = " ".join(token.split())
    numbered = _NUMBERED.fullmatch(text)
    if numbered:
        kind, number = numbered.group(1).lower(), int(numbered.group(2))
        return f"m{number}" if kind == "m" else f"{kind} {number}"
    named = _NAMED.fullmatch(text)
    if named:
        kind, rest = named.group(1).lower(), named.group(2).strip()
        if kind != "card" and not rest:
            return None
        return f"{kind} {rest}" if rest else kind
    return None


def _key(ref: str) -> str:
    return ref.casefold()


def check_answer(text: str, shown: Iterable[str]) -> Checked:
    """Check the refs of `text` against the refs the prompt `shown` (see the module docstring)."""
    index = {_key(ref): ref for ref in shown}
    dropped: list[str] = []

    def replace(match: re.Match[str]) -> str:
        tokens = [t for t in _SEPARATOR.split(match.group(1).strip()) if t]
        normals = [normal_ref(t) for t in tokens]
        if not any(normals):
            return match.group(0)
        kept: list[str] = []
        for ref in normals:
            if ref is None:
                continue
            known = index.get(_key(ref))
            if known is None:
                if ref not in dropped:
                    dropped.append(ref)
            elif known not in kept:
                kept.append(known)
        return " ".join(f"[{ref}]" for ref in kept) if kept else _REMOVED

    cleaned = _BRACKET.sub(replace, text)
    cleaned = re.sub(rf"[ \t]*{_REMOVED}", "", cleaned).strip()
    claims = split_claims(cleaned, index)
    cited: list[str] = []
    for claim in claims:
        cited += [ref for ref in claim["refs"] if ref not in cited]
    return Checked(answer=cleaned, claims=claims, cited=cited, dropped=dropped)


def _sentences(text: str) -> list[str]:
    pieces, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.end("end") if match.group("end") else match.start()
        pieces.append(text[start:end])
        start = match.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _refs_in(text: str, index: Mapping[str, str]) -> list[str]:
    refs: list[str] = []
    for match in _BRACKET.finditer(text):
        ref = normal_ref(match.group(1))
        known = index.get(_key(ref)) if ref else None
        if known is not None and known not in refs:
            refs.append(known)
    return refs


def split_claims(text: str, index: Mapping[str, str]) -> list[dict[str, Any]]:
    """The claims of a checked answer: each sentence (or line) with the refs it cites, its text
    without them. A piece with no words (a lone ref, a rule) gives its refs to the claim before."""
    claims: list[dict[str, Any]] = []
    for sentence in _sentences(text):
        refs = _refs_in(sentence, index)
        plain = _BRACKET.sub(lambda m: "" if normal_ref(m.group(1)) else m.group(0), sentence)
        plain = re.sub(r"\s+([.,;:!?…])", r"\1", " ".join(plain.split())).strip()
        if not re.search(r"\w", plain):
            if claims:
                claims[-1]["refs"] += [ref for ref in refs if ref not in claims[-1]["refs"]]
                claims[-1]["supported"] = bool(claims[-1]["refs"])
            continue
        claims.append({"text": plain, "refs": refs, "supported": bool(refs)})
    return claims


def citations(cited: Sequence[str], shown: Mapping[str, Item]) -> list[dict[str, Any]]:
    """Each cited ref described from the item the prompt showed, in the order cited."""
    out = []
    for ref in cited:
        item = shown[ref]
        out.append(
            {
                "ref": ref,
                "kind": item.kind,
                "id": item.id,
                "student": item.student_id,
                "title": item.title,
                "excerpt": item.excerpt(),
            }
        )
    return out


def named_students(
    answer: str, cited: Sequence[str], shown: Mapping[str, Item], students: Sequence[tuple[int, str]]
) -> list[dict[str, Any]]:
    """The students a class answer names: those it cites evidence of or calls by their username,
    in the order the answer first does either, each with the refs it cites of theirs."""
    folded = answer.casefold()
    first: dict[int, int] = {}
    refs: dict[int, list[str]] = {}
    for ref in cited:
        item = shown[ref]
        refs.setdefault(item.student_id, []).append(ref)
        position = folded.find(f"[{ref.casefold()}]")
        first[item.student_id] = min(first.get(item.student_id, position), position)
    for student_id, username in students:
        match = re.search(rf"(?<![\w@.+-]){re.escape(username.casefold())}(?![\w@+-])", folded)
        if match is not None:
            first[student_id] = min(first.get(student_id, match.start()), match.start())
    usernames = dict(students)
    order = sorted((position, student_id) for student_id, position in first.items() if student_id in usernames)
    return [{"id": sid, "username": usernames[sid], "refs": refs.get(sid, [])} for _, sid in order]


def says_insufficient(answer: str, phrases: Iterable[str]) -> bool:
    """Whether the answer says the evidence does not answer the question (one of `phrases`,
    case, accents' case and spacing aside)."""
    folded = " ".join(answer.casefold().split())
    return any(" ".join(phrase.casefold().split()).rstrip(".") in folded for phrase in phrases)
