"""One piece of evidence shown to the model, and how its reference is written. Pure.

Every item has a ref, the marker the model cites in brackets: `m<id>` for a memory,
`quiz <id>`, `file <id>`, and for what belongs to one student only within a student's own
record, `skill <key>`, `task <id>` and `card`. A class's prompt shows several students'
records: there a skill, a task (one task is set to a whole class) and a card name the student
too, `skill <username>/<key>`, `task <username>/<id>`, `card <username>` (a username has no
space, slash or bracket), so that no two items share a ref.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# The kinds of evidence, as the API names them (Answer.citations[].kind).
MEMORY, QUIZ, SKILL, TASK, FILE, CARD = "memory", "quiz", "skill", "task", "file", "card"
KINDS = (MEMORY, QUIZ, SKILL, TASK, FILE, CARD)
# A citation's excerpt: the start of what the prompt showed, on one line.
EXCERPT_CHARS = 240


@dataclass(frozen=True)
class Item:
    """One piece of evidence: `text` is what the prompt shows of it (untrusted, neutralised when
    the prompt is built), `detail` what the app says about it (its kind, confidence, status),
    `signals` why it was chosen (a memory's, for the access log)."""

    ref: str
    kind: str
    id: int | str
    student_id: int
    title: str
    text: str
    detail: str = ""
    date: datetime | None = None
    signals: dict[str, Any] = field(default_factory=dict)

    @property
    def memory_id(self) -> int | None:
        return int(self.id) if self.kind == MEMORY else None

    def excerpt(self) -> str:
        flat = " ".join(self.text.split())
        return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1].rstrip() + "…"


def ref_for(kind: str, key: int | str, *, owner: str = "") -> str:
    """The ref of an item; `owner` (a username) qualifies the per-student kinds in a class's prompt."""
    if kind == MEMORY:
        return f"m{key}"
    if kind in (QUIZ, FILE):
        return f"{kind} {key}"
    if kind == CARD:
        return f"card {owner}" if owner else "card"
    return f"{kind} {owner}/{key}" if owner else f"{kind} {key}"
