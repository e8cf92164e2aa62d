"""Reads of memories. Every query is scoped through accounts.selectors.students_visible_to."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _

from accounts.selectors import (
    is_educator,
    student_get_readable,
    students_readable_by,
    students_visible_to,
)
from core.db import compiled_query
from core.errors import ApplicationError, NotFound
from memory import budget
from memory.models import AIMemory, AIMemoryQuerySet, MemoryEmbedding
from memory.search import recall

logger = logging.getLogger(__name__)

SEARCH_LIMIT = 50


def memories_visible_to(user: Any) -> AIMemoryQuerySet:
    """The scoping primitive for memories: those of the students `user` may see
    (accounts.selectors.students_visible_to); teacher-only notes for a teacher or a school
    administrator only (accounts.selectors.is_educator), never for a student."""
    qs = AIMemory.objects.filter(student__in=students_visible_to(user).values("pk"))
    if not is_educator(user):
        qs = qs.shown_to_student()
    return qs


def memories_readable_by(user: Any) -> AIMemoryQuerySet:
    """The memories `user` may read (not change): `memories_visible_to(user)`, and a guardian's
    children's (accounts.selectors.students_readable_by) but teacher-only notes."""
    qs = AIMemory.objects.filter(student__in=students_readable_by(user).values("pk"))
    if not is_educator(user):
        qs = qs.shown_to_student()
    return qs


def memory_list(
    *, user: Any, student_id: Any = None, kind: str | None = None, status: str = AIMemory.Status.ACTIVE
) -> QuerySet[AIMemory]:
    """Memories `user` may read, newest first: narrowed to one visible student if given, to a
    kind if given, and to a status (active, archived, or "all")."""
    qs = memories_readable_by(user)
    if status != "all":
        qs = qs.filter(status=status)
    if kind:
        qs = qs.filter(kind=kind)
    if student_id not in (None, ""):
        student = student_get_readable(user=user, student_id=student_id)
        qs = qs.filter(student=student)
    return with_relations(qs).order_by("-created_at", "-id")


def with_relations(qs: AIMemoryQuerySet) -> AIMemoryQuerySet:
    """What MemoryOutput shows besides the row: the ids a memory replaced, in one query."""
    return qs.select_related("source_conversation").prefetch_related(
        Prefetch("supersedes", queryset=AIMemory.objects.only("pk", "superseded_by_id"))
    )


def memory_get(*, user: Any, memory_id: Any, read_only: bool = False) -> AIMemory:
    """One memory of `memories_visible_to(user)` (with `read_only`, of `memories_readable_by`,
    for a read that changes nothing), or NotFound."""
    try:
        pk = int(memory_id)
    except (TypeError, ValueError):
        raise NotFound(_("Memory not found.")) from None
    memory = (memories_readable_by(user) if read_only else memories_visible_to(user)).filter(pk=pk).first()
    if memory is None:
        raise NotFound(_("Memory not found."))
    return memory


# Written from the app's records (quizzes, files), not from what was said.
RECORD_KINDS = (AIMemory.Kind.QUIZ_RESULT, AIMemory.Kind.FILE)


def memories_for_prompt(*, student_id: int, limit: int) -> list[AIMemory]:
    """The student's `limit` latest active memories, newest first (one indexed query), the
    memories of app records (RECORD_KINDS) left out: the learning record block shows their
    latest state, and recall finds them when the student's message is about them.

    Called by the chat turn on behalf of the student who owns the conversation, so the scope
    is the student id itself.
    """
    return compiled_query("memory.latest", limit, lambda **ids: _latest(**ids)[:limit], student_id=student_id)


def _latest(*, student_id: int) -> AIMemoryQuerySet:
    return (
        AIMemory.objects.active()
        .shown_to_student()
        .filter(student_id=student_id)
        .exclude(kind__in=(*RECORD_KINDS, *TIER_KINDS))
        .order_by("-created_at", "-id")
        .only(*_PROMPT_FIELDS)
    )


_PROMPT_FIELDS = (
    "id",
    "kind",
    "title",
    "content",
    "source",
    "source_conversation_id",
    "token_count",
    "created_at",
    "confidence",
    "evidence",
    "successes",
    "failures",
)
# The semantic and procedural tiers: shown first in the prompt, not among the latest.
TIER_KINDS = (*AIMemory.TIER_KINDS[AIMemory.Tier.SEMANTIC], *AIMemory.TIER_KINDS[AIMemory.Tier.PROCEDURAL])


def _tiers(*, student_id: int) -> AIMemoryQuerySet:
    return (
        AIMemory.objects.active()
        .shown_to_student()
        .filter(student_id=student_id, kind__in=TIER_KINDS, confirmed_at__isnull=False)
        .order_by("-confidence", "-created_at", "-id")
        .only(*_PROMPT_FIELDS)
    )


def _memories_by_id(*, student_id: int, ids: list[int]) -> list[AIMemory]:
    """The student's active memories shown to them among `ids` (in no order)."""
    if not ids:
        return []
    slots = {f"id_{i}": pk for i, pk in enumerate(ids)}

    def build(*, student_id: int, **ids: int) -> AIMemoryQuerySet:
        return (
            AIMemory.objects.active()
            .shown_to_student()
            .filter(student_id=student_id, pk__in=list(ids.values()))
            .only(*_PROMPT_FIELDS)
        )

    return compiled_query("memory.by_id", len(ids), build, student_id=student_id, **slots)


def memories_missing_embedding(*, model: str, limit: int, after_id: int = 0) -> list[int]:
    """Ids of active memories (every student) without a vector from `model`, by id.

    A maintenance read for the embedding sweep and `manage.py reembed`, not a tenant read.
    """
    current = MemoryEmbedding.objects.filter(model=model).values("memory_id")
    return list(
        AIMemory.objects.active()
        .filter(pk__gt=after_id)
        .exclude(pk__in=current)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def memory_search(*, user: Any, student_id: Any, query: str, kind: str | None = None) -> list[AIMemory]:
    """A student's active memories most relevant to `query`, best first (hybrid recall), of one
    kind if given; a student does not find the teacher-only notes.

    A student searches their own memories (`student_id` may be omitted); a teacher must name a
    student of one of their classes, a guardian one of their children. Anyone else's student is
    a 404, through the scoping primitive, before anything is searched.
    """
    if student_id in (None, ""):
        if getattr(user, "role", None) != "student":
            raise ApplicationError(_("Give the student whose memories to search (?student=<id>)."))
        student_id = user.pk
    student = student_get_readable(user=user, student_id=student_id)
    result = recall.recall(student_id=student.pk, query=query, limit=SEARCH_LIMIT, language=student.language)
    by_id = memories_readable_by(user).active().filter(student=student, pk__in=result.ids)
    if kind:
        by_id = by_id.filter(kind=kind)
    by_id = with_relations(by_id)
    found = {m.pk: m for m in by_id}
    return [found[pk] for pk in result.ids if pk in found]


@dataclass(frozen=True)
class TurnMemories:
    """The memory block of one reply, in block order, and why each memory is in it: `signals`
    by memory id (`tier`, `latest`, and for a recalled one its `score`, `lexical_rank`,
    `semantic_rank` and `related`), what the access log keeps (conversations.ReplyMemory)."""

    memories: list[AIMemory]
    signals: dict[int, dict[str, Any]] = field(default_factory=dict)


def turn_memories(
    *,
    student_id: int,
    message: str,
    language: str | None = None,
    max_tokens: int | None = None,
    embedder: Any = True,
) -> TurnMemories:
    """The memories to show the model for a student's message, and why each is there.

    First the semantic and procedural tiers: the MEMORY_TIER_COUNT most confident active facts
    and approaches that are confirmed (`confirmed_at`: a second source or a teacher). Then the
    MEMORY_LOAD_COUNT latest episodic memories, whole, newest first.
    Then the MEMORY_RELEVANT_COUNT most relevant to the message (hybrid recall over every tier)
    that are not shown already. The tiers and the recalled extras share MEMORY_TOKEN_BUDGET; the
    whole block stays within `max_tokens` (what a small window allows): the newest of the latest
    that fit are kept and the rest logged. If recall fails for any reason the chat goes on
    without the extras: it never fails because of recall. Called by the chat turn for the
    student who owns the conversation, so the scope is the student id itself. `embedder` is
    recall's (`recall.recall`): True for the configured one, None for lexical recall, or one that
    holds the query's vectors already (memory.blocks: the chat turn embeds before this step).
    """
    signals: dict[int, dict[str, Any]] = {}
    tier_count = settings.MEMORY_TIER_COUNT
    tiers = compiled_query("memory.tiers", tier_count, lambda **ids: _tiers(**ids)[:tier_count], student_id=student_id)
    latest = memories_for_prompt(student_id=student_id, limit=settings.MEMORY_LOAD_COUNT)
    relevant: list[AIMemory] = []
    if message.strip() and settings.MEMORY_RELEVANT_COUNT > 0:
        try:
            result = recall.recall(
                student_id=student_id,
                query=message,
                limit=settings.MEMORY_RELEVANT_COUNT,
                language=language,
                embedder=embedder,
            )
            loaded = {m.pk: m for m in [*tiers, *latest]}
            wanted = [pk for pk in result.ids if pk not in loaded]
            found = {**loaded, **{m.pk: m for m in _memories_by_id(student_id=student_id, ids=wanted)}}
            relevant = [found[pk] for pk in result.ids if pk in found]
            for hit in result.hits:
                signals[hit.memory_id] = {
                    "score": round(float(hit.score), 4),
                    "lexical_rank": hit.lexical_rank,
                    "semantic_rank": hit.semantic_rank,
                    "related": hit.related,
                }
        except Exception:
            # Recall is a bonus; the latest memories alone are what the chat had before it.
            logger.exception("recall failed for student %s; using the latest memories only", student_id)
    cap = max_tokens if max_tokens is not None else 10**9
    kept = budget.fit_memory_budget(latest, budget=cap, skip_larger=False)
    if len(kept) < len(latest):
        logger.warning(
            "student %s: %d of the %d latest memories left out of the prompt to fit the model's window",
            student_id,
            len(latest) - len(kept),
            len(latest),
        )
    used = budget.memory_block_tokens(kept)
    shared = min(settings.MEMORY_TOKEN_BUDGET, cap - used)
    tier_rank = {m.pk: i for i, m in enumerate(tiers)}
    shown_tiers = sorted(budget.fit_memory_budget(tiers, budget=shared, frame=not kept), key=lambda m: tier_rank[m.pk])
    taken = {m.pk for m in [*kept, *shown_tiers]}
    tier_cost = sum(budget.memory_block_cost(m) for m in shown_tiers)
    if shown_tiers and not kept:
        tier_cost += budget.memory_block_frame_tokens()
    extras = budget.fit_memory_budget(
        [m for m in relevant if m.pk not in taken], budget=shared - tier_cost, frame=not (kept or shown_tiers)
    )
    episodic = sorted([*kept, *extras], key=lambda m: (m.created_at, m.pk), reverse=True)
    latest_ids = {m.pk for m in kept}
    for memory in shown_tiers:
        signals.setdefault(memory.pk, {})["tier"] = memory.tier
    for memory in episodic:
        if memory.pk in latest_ids:
            signals.setdefault(memory.pk, {})["latest"] = True
    chosen = [*shown_tiers, *episodic]
    return TurnMemories(chosen, {m.pk: signals.get(m.pk, {}) for m in chosen})
