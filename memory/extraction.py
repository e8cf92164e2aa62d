"""Fact extraction: the semantic and procedural tiers, drawn from each new episodic memory.

After a summary, a note, a student-visible teacher note or a quiz result is written, the
`memory_facts_extract` task asks the summary model (the background profile) for the durable
facts about the student and the approaches that worked, each with a confidence and the ids of
the memories it rests on. Each is stored as a `fact` or an `approach` (source `extraction`,
its evidence, confidence and model), unless its confidence is below MEMORY_FACT_MIN_CONFIDENCE
or the student has the same text active already. A fact that updates a known one goes through
`memory.supersession.supersession_propose`.

Extraction is a bonus: a model that answers badly leaves the episodic memory as it was.
"""

from __future__ import annotations

import enum
import logging

from django.conf import settings
from django.db import transaction

from accounts.models import User
from llm import gateway
from llm.models import LLMUsage
from memory import services, supersession
from memory.lifecycle_prompts import EXTRACTION_SCHEMA, PromptMemory, extraction_messages, parse_extraction
from memory.models import AIMemory

logger = logging.getLogger(__name__)

# What facts are drawn from: what was said and done with the student. Files are the student's
# documents, not facts about them; a teacher-only note must not reach a memory the tutor shows.
EXTRACTABLE_KINDS = services.EXTRACTABLE_KINDS
# What an extracted fact may update: the student's facts, approaches and notes, newest first.
KNOWN_KINDS = (AIMemory.Kind.FACT, AIMemory.Kind.APPROACH, AIMemory.Kind.NOTE, AIMemory.Kind.TEACHER_NOTE)
KNOWN_LIMIT = 40


class Outcome(enum.Enum):
    STORED = "stored"  # the answer was used (it may have held no fact)
    ALREADY_DONE = "already_done"
    SKIPPED = "skipped"  # not extractable, or no model configured
    INVALID = "invalid"  # the model's answer was unusable


def source_ref(memory_id: int, index: int) -> str:
    return f"extract:{memory_id}:{index}"


def is_extractable(memory: AIMemory) -> bool:
    return (
        memory.kind in EXTRACTABLE_KINDS
        and memory.status == AIMemory.Status.ACTIVE
        and memory.visibility == AIMemory.Visibility.STUDENT
        and not memory.needs_review
    )


def facts_extract(*, memory_id: int) -> tuple[Outcome, list[AIMemory]]:
    """Extract facts and approaches from one memory. Returns the outcome and what was stored.

    Idempotent: the facts of memory M are stored with source_ref "extract:M:<i>", unique per
    student, and a memory that has any is not asked about again. Raises gateway.LLMUnavailable
    (transient: the task retries); any other model failure is logged and ends it.
    """
    memory = AIMemory.objects.filter(pk=memory_id).first()
    if memory is None or not is_extractable(memory) or not settings.MEMORY_EXTRACTION_ENABLED:
        return Outcome.SKIPPED, []
    if AIMemory.objects.filter(student_id=memory.student_id, source_ref__startswith=f"extract:{memory_id}:").exists():
        return Outcome.ALREADY_DONE, []
    profile = gateway.background_profile()
    if not gateway.is_configured(profile):
        return Outcome.SKIPPED, []
    known = [
        PromptMemory(m.pk, m.kind, m.title, m.content)
        for m in AIMemory.objects.active()
        .shown_to_student()
        .filter(student_id=memory.student_id, kind__in=KNOWN_KINDS)
        .exclude(pk=memory.pk)
        .order_by("-created_at", "-id")[:KNOWN_LIMIT]
    ]
    language = User.objects.filter(pk=memory.student_id).values_list("language", flat=True).first() or "en"
    messages = extraction_messages(
        new=PromptMemory(memory.pk, memory.kind, memory.title, memory.content), known=known, language=language
    )
    try:
        answer = gateway.complete_structured(
            messages=messages,
            schema=EXTRACTION_SCHEMA,
            name="memory_facts",
            purpose=LLMUsage.Purpose.EXTRACTION,
            profile=profile,
            student_id=memory.student_id,
        )
        facts, dropped = parse_extraction(answer.content, new_id=memory.pk, known_ids={m.id for m in known})
    except (ValueError, gateway.LLMBadResponse, gateway.LLMNotConfigured) as exc:
        logger.warning("extraction: memory %s: no facts (%s)", memory_id, exc)
        return Outcome.INVALID, []
    for reason in dropped:
        logger.info("extraction: memory %s: %s dropped", memory_id, reason)
    return Outcome.STORED, _store(memory, facts, model=answer.model or profile.model)


def _store(memory: AIMemory, facts: list, *, model: str) -> list[AIMemory]:
    stored: list[AIMemory] = []
    with transaction.atomic():
        active = {
            (kind, " ".join(content.lower().split()))
            for kind, content in AIMemory.objects.active()
            .filter(student_id=memory.student_id, kind__in=(AIMemory.Kind.FACT, AIMemory.Kind.APPROACH))
            .values_list("kind", "content")
        }
        for index, fact in enumerate(facts):
            kind = AIMemory.Kind.FACT if fact.tier == AIMemory.Tier.SEMANTIC else AIMemory.Kind.APPROACH
            if fact.confidence < settings.MEMORY_FACT_MIN_CONFIDENCE:
                logger.info("extraction: memory %s: item %d below the confidence floor", memory.pk, index)
                continue
            if (kind, " ".join(fact.content.lower().split())) in active:
                continue
            created, was_new = services.memory_derived_store(
                student_id=memory.student_id,
                kind=kind,
                source=AIMemory.Source.EXTRACTION,
                source_ref=source_ref(memory.pk, index),
                title=fact.title,
                content=fact.content,
                evidence=list(fact.evidence),
                confidence=fact.confidence,
                model=model,
            )
            if not was_new:
                continue
            stored.append(created)
            if fact.updates is not None:
                supersession.supersession_propose(
                    student_id=memory.student_id,
                    older_id=fact.updates,
                    newer_id=created.pk,
                    confidence=fact.update_confidence,
                    reason=fact.update_reason or f"updated by #{created.pk}",
                    model=model,
                )
    return stored
