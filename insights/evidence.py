"""What the product knows about one student, as evidence items for a question (insights.items).

`student_evidence` gathers, in the order they are kept when the budget is short:
the student card; the memories recall finds for the question (memory.search.recall, the chat's
own hybrid recall); the most confident facts and approaches; mastery per skill now (weakest
first); the latest quizzes with their results; tasks with the student's status; the latest
summaries and notes; the files' extracted text. `fit` then keeps what the token budget holds.

Scope: the caller resolved the student through the scoping primitive and passes `memories`,
the memories the asker may read (memory.selectors.memories_visible_to: without the teacher-only
notes for a student). Every other read here is the student's own rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.db.models import Prefetch, Q
from django.utils import timezone

from accounts.models import User
from conversations.models import ConversationFile
from insights.items import CARD, FILE, MEMORY, QUIZ, SKILL, TASK, Item, ref_for
from insights.prompts import item_tokens
from learning.mastery import BktParams, decayed
from learning.models import TASKS_DUE_FIRST, Answer, Question, Quiz, SkillMastery, Task, TaskStatus
from learning.selectors import is_overdue
from learning.validation import skill_key
from memory.block import KIND_LABELS, SOURCE_LABELS
from memory.models import AIMemory, AIMemoryQuerySet
from memory.search import recall

logger = logging.getLogger(__name__)

# How many of each are gathered for a question about one student (before the token budget).
RECALL_LIMIT = 8
TIER_LIMIT = 5
LATEST_LIMIT = 5
SKILL_LIMIT = 12
QUIZ_LIMIT = 6
TASK_LIMIT = 8
FILE_LIMIT = 3
# The most of one item's text shown (a long summary or file is cut).
ITEM_MAX_CHARS = 1200
QUESTION_CHARS = 120


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def memory_detail(memory: AIMemory) -> str:
    """What the app says of a memory: its tier and confidence, or who wrote it."""
    if memory.kind in KIND_LABELS:
        detail = f"{KIND_LABELS[memory.kind]}, confidence {memory.confidence:.1f}"
        if memory.kind == AIMemory.Kind.APPROACH and (memory.successes or memory.failures):
            detail += f", worked {memory.successes}, failed {memory.failures}"
        return detail
    detail = SOURCE_LABELS.get(memory.source, memory.source)
    if memory.visibility == AIMemory.Visibility.TEACHER_ONLY:
        detail += ", teachers only"
    return detail


def memory_item(memory: AIMemory, *, signals: dict[str, Any], max_chars: int = ITEM_MAX_CHARS) -> Item:
    return Item(
        ref=ref_for(MEMORY, memory.pk),
        kind=MEMORY,
        id=memory.pk,
        student_id=memory.student_id,
        title=memory.title,
        text=_cut(memory.content, max_chars),
        detail=memory_detail(memory),
        date=memory.created_at,
        signals=signals,
    )


def recalled_memories(
    *, memories: AIMemoryQuerySet, student: User, question: str, limit: int, embedder: Any
) -> list[tuple[AIMemory, dict[str, Any]]]:
    """The visible active memories recall finds for the question, best first, with their
    signals. Recall is a bonus: if it fails, the evidence goes on without it (logged)."""
    try:
        result = recall.recall(
            student_id=student.pk, query=question, limit=limit * 2, language=student.language, embedder=embedder
        )
    except Exception:
        logger.exception("recall failed for student %s; the question's evidence goes on without it", student.pk)
        return []
    found = {m.pk: m for m in memories.active().filter(student=student, pk__in=result.ids)}
    hits = [(found[h.memory_id], h) for h in result.hits if h.memory_id in found][:limit]
    return [
        (m, {"recall": True, "score": round(float(h.score), 4), "lexical": h.lexical_rank is not None}) for m, h in hits
    ]


def card_item(student: User, *, owner: str = "") -> Item | None:
    """The student card (memory.StudentCard), or None if the student has none or it is empty."""
    try:
        model = apps.get_model("memory", "StudentCard")
    except LookupError:
        return None
    card = model.objects.filter(student=student).first()
    if card is None:
        return None
    lines = []
    for label, name in (
        ("Goals", "goals"),
        ("Accommodations", "accommodations"),
        ("Interests", "interests"),
        ("Level", "level"),
        ("Register", "register"),
    ):
        value = getattr(card, name, "")
        shown = "; ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")
        if shown.strip():
            lines.append(f"{label}: {shown}")
    if not lines:
        return None
    return Item(
        ref=ref_for(CARD, card.pk, owner=owner),
        kind=CARD,
        id=card.pk,
        student_id=student.pk,
        title="Student card",
        text="\n".join(lines),
        detail="the student's card, kept by their teachers",
        date=getattr(card, "updated_at", None),
    )


def skill_items(student: User, *, owner: str = "", keys: Iterable[str] | None = None) -> list[Item]:
    """Mastery per skill now (decayed toward the prior), weakest first; only `keys` if given."""
    now, params = timezone.now(), BktParams.from_settings()
    rows = SkillMastery.objects.filter(student=student)
    if keys is not None:
        rows = rows.filter(skill_key__in=list(keys))
    items = []
    for row in rows:
        estimate = decayed(row.estimate, elapsed=now - row.estimated_at, params=params)
        text = (
            f"Mastery now {estimate:.2f} (0 to 1; 1 is mastered), trend {row.trend:+.2f}. "
            f"{row.correct} of {row.attempts} answers correct; latest quiz {row.latest_correct} of "
            f"{row.latest_total}."
        )
        item = Item(
            ref=ref_for(SKILL, row.skill_key, owner=owner),
            kind=SKILL,
            id=row.skill_key,
            student_id=student.pk,
            title=row.skill,
            text=text,
            detail="mastery estimated from quiz results",
            date=row.estimated_at,
            signals={"estimate": estimate},
        )
        items.append(item)
    items.sort(key=lambda i: (i.signals["estimate"], str(i.id)))
    return items


def quiz_text(quiz: Quiz) -> str:
    attempt = getattr(quiz, "attempt", None)
    if attempt is None:
        return "Not answered yet."
    if attempt.correct is None:
        head = f"Answered, being graded ({attempt.total} questions)."
    else:
        head = f"{attempt.correct} of {attempt.total} correct."
    answers = {a.question_id: a for a in attempt.answers.all()}
    lines = [head]
    for question in quiz.questions.all():
        answer = answers.get(question.pk)
        if answer is None:
            continue
        given = _cut(answer.given, 60) or "(no answer)"
        lines.append(f"Q{question.position} {answer.result}: {_cut(question.prompt, QUESTION_CHARS)} Answer: {given}")
    return "\n".join(lines)


def quiz_items(student: User, *, limit: int = QUIZ_LIMIT, skill_keys: Iterable[str] | None = None) -> list[Item]:
    """The latest quizzes, newest first, with each question's result and the student's answer
    (never the expected answer)."""
    quizzes = (
        Quiz.objects.filter(student=student)
        .select_related("attempt")
        .prefetch_related(
            Prefetch("questions", queryset=Question.objects.order_by("position")),
            Prefetch("attempt__answers", queryset=Answer.objects.order_by("question__position")),
        )
        .order_by("-created_at", "-id")
    )
    items = []
    for quiz in quizzes[: limit * 4 if skill_keys is not None else limit]:
        if skill_keys is not None and skill_key(quiz.skill) not in set(skill_keys):
            continue
        items.append(
            Item(
                ref=ref_for(QUIZ, quiz.pk),
                kind=QUIZ,
                id=quiz.pk,
                student_id=student.pk,
                title=f"Quiz: {quiz.topic} ({quiz.skill})",
                text=quiz_text(quiz),
                detail=f"quiz, {quiz.status}",
                date=quiz.created_at,
            )
        )
    return items[:limit]


def task_items(student: User, *, owner: str = "", limit: int = TASK_LIMIT) -> list[Item]:
    """The tasks set to the student or to one of their classes, due first, with their status."""
    now = timezone.now()
    tasks = list(
        Task.objects.filter(Q(student=student) | Q(classroom__enrollments__student=student))
        .distinct()
        .order_by(*TASKS_DUE_FIRST)[:limit]
    )
    statuses = {s.task_id: s for s in TaskStatus.objects.filter(student=student, task__in=[t.pk for t in tasks])}
    items = []
    for task in tasks:
        row = statuses.get(task.pk)
        status = row.status if row else TaskStatus.Status.TODO
        parts = [f"Status: {status.replace('_', ' ')}" + (", overdue" if is_overdue(task.due_at, status, now) else "")]
        if task.due_at:
            parts.append(f"due {task.due_at.date().isoformat()}")
        if task.subject:
            parts.append(f"subject {task.subject}")
        text = ", ".join(parts) + "."
        if row is not None and row.reason:
            text += f" Why: {_cut(row.reason, 200)}"
        if task.instructions:
            text += f"\nInstructions: {_cut(task.instructions, 300)}"
        items.append(
            Item(
                ref=ref_for(TASK, task.pk, owner=owner),
                kind=TASK,
                id=task.pk,
                student_id=student.pk,
                title=task.title,
                text=text,
                detail="homework task and the student's status",
                date=task.due_at or task.created_at,
            )
        )
    return items


def file_items(student: User, *, limit: int = FILE_LIMIT, max_chars: int = ITEM_MAX_CHARS) -> list[Item]:
    """The student's latest readable files, newest first, with the start of their text."""
    files = ConversationFile.objects.filter(
        conversation__student=student, status=ConversationFile.Status.READY
    ).order_by("-created_at", "-id")[:limit]
    return [
        Item(
            ref=ref_for(FILE, f.pk),
            kind=FILE,
            id=f.pk,
            student_id=student.pk,
            title=f.name,
            text=_cut(f.text, max_chars) if f.text.strip() else f"(an image, {f.content_type})",
            detail="file the student uploaded",
            date=f.created_at,
        )
        for f in files
    ]


def student_evidence(*, memories: AIMemoryQuerySet, student: User, question: str, embedder: Any) -> list[Item]:
    """Every candidate item for a question about `student`, in the order `fit` keeps them."""
    visible = memories.active().filter(student=student)
    items: list[Item] = []
    card = card_item(student)
    if card is not None:
        items.append(card)
    recalled = recalled_memories(
        memories=memories, student=student, question=question, limit=RECALL_LIMIT, embedder=embedder
    )
    items += [memory_item(m, signals=signals) for m, signals in recalled]
    for tier in (AIMemory.Tier.SEMANTIC, AIMemory.Tier.PROCEDURAL):
        best = visible.of_tier(tier).order_by("-confidence", "-created_at", "-id")[:TIER_LIMIT]
        items += [memory_item(m, signals={"tier": tier}) for m in best]
    items += skill_items(student)[:SKILL_LIMIT]
    items += quiz_items(student)
    items += task_items(student)
    latest_kinds = (AIMemory.Kind.SUMMARY, AIMemory.Kind.NOTE, AIMemory.Kind.TEACHER_NOTE)
    latest = visible.filter(kind__in=latest_kinds).order_by("-created_at", "-id")[: LATEST_LIMIT * 2]
    items += [memory_item(m, signals={"latest": True}) for m in latest]
    items += file_items(student)
    return dedupe(items)


def dedupe(items: Iterable[Item]) -> list[Item]:
    """The items with each ref once, the first kept."""
    seen: set[str] = set()
    out = []
    for item in items:
        if item.ref not in seen:
            seen.add(item.ref)
            out.append(item)
    return out


def fit(items: Iterable[Item], budget: int) -> tuple[list[Item], int]:
    """The items that fit `budget` tokens, in order (one too large is skipped, the next tried),
    and how many were left out."""
    kept, used, left_out = [], 0, 0
    for item in items:
        tokens = item_tokens(item)
        if used + tokens > budget:
            left_out += 1
            continue
        kept.append(item)
        used += tokens
    return kept, left_out
