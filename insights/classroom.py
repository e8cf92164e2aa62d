"""Evidence for a question about a class: a shortlist of students, then a few items each.

A class of 35 students cannot be shown whole in one prompt. `shortlist` scores every student of
the class for the question, comparably across students:

- recall: the chat's hybrid recall (memory.search.recall) finds up to PER_STUDENT_RECALL of the
  student's memories for the question; its score is the share of the question's index terms
  (memory.search.fts.analyse: stop words out, stemmed, accents folded) that those memories
  contain, 0 to 1 (recall's own scores are standardised per student, so not comparable);
- mastery: a skill whose label shares an index term with the question matches; the student's
  mastery part is 0.5 + 0.5 x (1 - the lowest estimate now among the matching skills), 0
  without a match: a match counts, a weak one more;
- the score is their sum. The students with a score above 0 are kept, best first, at most
  SHORTLIST_SIZE. When no student matches at all (a question naming no skill: "who is
  struggling?"), the SHORTLIST_SIZE students with the lowest mean mastery now are kept instead.

Each shortlisted student brings at most their matching skills (PER_STUDENT_SKILLS, weakest
first, or their weakest skills without a match), their recalled memories and their latest quiz
on a matching skill, each cut to CLASS_ITEM_MAX_CHARS. `fit_round_robin` fits them in the token
budget one round at a time (every student's first item, then every student's second...), so a
short budget shortens every student's evidence rather than dropping the last students.
docs/insights.md gives the token arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils import timezone

from accounts.models import Classroom, User
from accounts.selectors import enrollments_current
from insights.evidence import memory_item, quiz_items, recalled_memories, skill_items
from insights.items import Item
from insights.prompts import Block, block_tokens, item_tokens
from learning.mastery import BktParams, decayed
from learning.models import SkillMastery
from memory.models import AIMemoryQuerySet
from memory.search import fts

SHORTLIST_SIZE = 8
PER_STUDENT_RECALL = 3
PER_STUDENT_SKILLS = 2
CLASS_ITEM_MAX_CHARS = 400


@dataclass
class Candidate:
    """One student of the class, scored for the question, with the items they would bring."""

    student: User
    recall: float = 0.0
    mastery: float = 0.0
    mean_estimate: float = 1.0
    items: list[Item] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.recall + self.mastery

    @property
    def matched(self) -> bool:
        return self.score > 0


def class_students(classroom: Classroom) -> list[User]:
    """The class's current students (accounts.selectors.enrollments_current), by username: a
    student whose enrolment was dropped is not asked about."""
    enrolled = enrollments_current().filter(classroom=classroom).values("student_id")
    return list(User.objects.filter(pk__in=enrolled).order_by("username", "pk"))


def _terms(text: str, languages: Sequence[str]) -> set[str]:
    return {term for language in dict.fromkeys(languages) for term in fts.analyse(text, language)}


def _estimates(students: Sequence[User]) -> dict[int, list[tuple[SkillMastery, float]]]:
    now, params = timezone.now(), BktParams.from_settings()
    out: dict[int, list[tuple[SkillMastery, float]]] = {}
    for row in SkillMastery.objects.filter(student__in=[s.pk for s in students], attempts__gt=0):
        out.setdefault(row.student_id, []).append(
            (row, decayed(row.estimate, elapsed=now - row.estimated_at, params=params))
        )
    return out


def candidate(
    *,
    student: User,
    skills: list[tuple[SkillMastery, float]],
    memories: AIMemoryQuerySet,
    question: str,
    language: str,
    embedder: Any,
) -> Candidate:
    """One student scored for the question (see the module docstring), with their items."""
    languages = (language, student.language or language)
    asked = _terms(question, languages)
    found = Candidate(student=student)
    if skills:
        found.mean_estimate = sum(estimate for _, estimate in skills) / len(skills)
    matching = sorted(
        ((row, estimate) for row, estimate in skills if asked & _terms(row.skill, languages)), key=lambda s: s[1]
    )
    if matching:
        found.mastery = 0.5 + 0.5 * (1 - matching[0][1])
    recalled = recalled_memories(
        memories=memories, student=student, question=question, limit=PER_STUDENT_RECALL, embedder=embedder
    )
    if asked and recalled:
        held = set().union(*(_terms(f"{m.title} {m.content}", languages) for m, _ in recalled))
        found.recall = len(asked & held) / len(asked)
    owner = student.username
    keys = [row.skill_key for row, _ in matching[:PER_STUDENT_SKILLS]]
    shown_skills = skill_items(student, owner=owner, keys=keys) if keys else []
    if not keys and skills:
        weakest = [row.skill_key for row, _ in sorted(skills, key=lambda s: s[1])[:PER_STUDENT_SKILLS]]
        shown_skills = skill_items(student, owner=owner, keys=weakest)
    memories_shown = [memory_item(m, signals=s, max_chars=CLASS_ITEM_MAX_CHARS) for m, s in recalled]
    quizzes = quiz_items(student, limit=1, skill_keys=keys) if keys else []
    found.items = [*shown_skills[:1], *memories_shown[:1], *quizzes, *shown_skills[1:], *memories_shown[1:]]
    found.items = [_cut(item) for item in found.items]
    return found


def _cut(item: Item) -> Item:
    if len(item.text) <= CLASS_ITEM_MAX_CHARS:
        return item
    return replace(item, text=item.text[: CLASS_ITEM_MAX_CHARS - 1].rstrip() + "…")


def shortlist(
    *, students: Sequence[User], memories: AIMemoryQuerySet, question: str, language: str, embedder: Any
) -> list[Candidate]:
    """The students whose evidence the prompt shows, best first (see the module docstring)."""
    estimates = _estimates(students)
    scored = [
        candidate(
            student=student,
            skills=estimates.get(student.pk, []),
            memories=memories,
            question=question,
            language=language,
            embedder=embedder,
        )
        for student in students
    ]
    matched = [c for c in scored if c.matched]
    if matched:
        matched.sort(key=lambda c: (-c.score, c.student.username))
        return matched[:SHORTLIST_SIZE]
    weakest = sorted((c for c in scored if c.items), key=lambda c: (c.mean_estimate, c.student.username))
    return weakest[:SHORTLIST_SIZE]


def fit_round_robin(candidates: Sequence[Candidate], budget: int) -> tuple[list[Block], int]:
    """Each candidate's block with the items that fit `budget` tokens, taken one round at a time
    (a block's own tags are paid with its first item), and how many items were left out."""
    blocks = [Block(c.student.pk, c.student.username, []) for c in candidates]
    used, left_out = 0, 0
    rounds = max((len(c.items) for c in candidates), default=0)
    for index in range(rounds):
        for candidate_, block in zip(candidates, blocks, strict=True):
            if index >= len(candidate_.items):
                continue
            item = candidate_.items[index]
            tokens = item_tokens(item) + (0 if block.items else block_tokens(block.username))
            if used + tokens > budget:
                left_out += 1
                continue
            block.items.append(item)
            used += tokens
    return blocks, left_out
