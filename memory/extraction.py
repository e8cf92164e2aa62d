"""Fact extraction: the semantic and procedural tiers, drawn from each new episodic memory.

After a summary, a note, a student-visible teacher note or a quiz result is written, the
`memory_facts_extract` task asks the summary model (the background profile) for the durable
facts about the student and the approaches that worked, each with a confidence and the ids of
the memories it rests on. Each is stored as a `fact` or an `approach` (source `extraction`,
its evidence, confidence and model), unless:
- its confidence is below MEMORY_FACT_MIN_CONFIDENCE;
- it repeats the prompt's own instructions (a small model answers "2 to 10 words" for a
  title), compared without case, accents, punctuation or numbers, the prompt's examples aside;
- it carries no evidence: no content word (stemmed, stop words dropped) in common with the
  memories it cites;
- the student has the same text active already: that fact is then confirmed (a second source),
  and cites this memory too.
A fact that updates a known one goes through `memory.supersession.supersession_propose`.
The answer may also propose changes to the student card, each naming the fact it follows from:
they go through `memory.card.card_propose` (an accommodation waits for a teacher), in the
facts' transaction (`card_proposals_store`).

A stored fact is confirmed (`confirmed_at`) when a known memory it cites, besides the one it was
drawn from and the one it updates, shares at least AGREEMENT_SHARE of its content words; else it
waits for a second source (drawn again from another memory) or a teacher's edit, out of the
prompt's "most confident" block.

Extraction is a bonus: a model that answers badly leaves the episodic memory as it was.
"""

from __future__ import annotations

import enum
import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.selectors import memory_consent_given
from llm import gateway, structured
from llm.models import LLMUsage
from memory import card, supersession
from memory.lifecycle_prompts import (
    EXTRACTION_PROMPT,
    EXTRACTION_SCHEMA,
    ExtractedFact,
    PromptMemory,
    extraction_messages,
    parse_card_proposals,
    parse_extraction,
)
from memory.models import AIMemory
from memory.search import fts
from memory.services.records import memory_derived_store
from memory.services.writing import EXTRACTABLE_KINDS

logger = logging.getLogger(__name__)

# What facts are drawn from: EXTRACTABLE_KINDS (memory.services.writing). A teacher-only note
# must not reach a memory the tutor shows.
# What an extracted fact may update: the student's facts, approaches and notes, newest first.
KNOWN_KINDS = (AIMemory.Kind.FACT, AIMemory.Kind.APPROACH, AIMemory.Kind.NOTE, AIMemory.Kind.TEACHER_NOTE)
KNOWN_LIMIT = 40
# A cited known memory that shares at least this share of a fact's content words agrees with it.
AGREEMENT_SHARE = 0.5


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
    (transient: the task retries); any other model failure is logged and ends it. Nothing is
    drawn for a student without consent to memory (SKIPPED).
    """
    memory = AIMemory.objects.filter(pk=memory_id).first()
    if memory is None or not is_extractable(memory) or not settings.MEMORY_EXTRACTION_ENABLED:
        return Outcome.SKIPPED, []
    if not memory_consent_given(memory.student_id):  # a teacher's note of a student without consent
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
    shown = {m.id: m for m in known}
    shown[memory.pk] = PromptMemory(memory.pk, memory.kind, memory.title, memory.content)
    try:
        answer = structured.complete_structured(
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
    vetted = []
    for index, fact in enumerate(facts):
        refused, agreeing = _vet(fact, shown=shown, new_id=memory.pk, language=language)
        if refused:
            logger.info("extraction: memory %s: item %d dropped: %s", memory_id, index, refused)
        else:
            vetted.append(Vetted(index, fact, confirmed=bool(agreeing)))
    linked: dict[int, int] = {}
    with transaction.atomic():
        stored = _store(memory, vetted, model=answer.model or profile.model_id, linked=linked)
        card_proposals_store(memory, answer.content, linked=linked)
    return Outcome.STORED, stored


@dataclass(frozen=True)
class Vetted:
    index: int  # its place in the model's answer (the source_ref's suffix)
    fact: ExtractedFact
    confirmed: bool  # a known memory it cites agrees


def _plain(text: str) -> str:
    """Text compared without case, accents, punctuation or the numbers in it."""
    words = re.findall(r"\w+", fts.fold_accents(text))
    return " ".join("#" if word.isdigit() else word for word in words)


# The extraction prompt as compared: an item found in it repeats the prompt's instructions. Its
# examples (in single quotes) aside: a real fact may say what an example says.
_PROMPT_PLAIN = " " + _plain(re.sub(r"(?<!\w)'[^']*'(?!\w)", " ", EXTRACTION_PROMPT)) + " "


def _terms(text: str, language: str) -> set[str]:
    """Content words: stemmed, stop words and numbers left out."""
    return {term for term in fts.analyse(text, language) if not term.isdigit()}


def _vet(fact: ExtractedFact, *, shown: dict[int, PromptMemory], new_id: int, language: str) -> tuple[str, list[int]]:
    """Why the item is refused ("" if it is not), and the known memories it cites that agree
    with it (a second source)."""
    for name, part in (("title", fact.title), ("content", fact.content)):
        plain = _plain(part)
        if plain and f" {plain} " in _PROMPT_PLAIN:
            # The reason is logged: it names the part, never quotes it (no memory text in logs).
            return f"repeats the prompt's instructions in its {name}", []
    words = _terms(f"{fact.title}\n{fact.content}", language)
    cited = {pk: _terms(f"{shown[pk].title}\n{shown[pk].content}", language) for pk in fact.evidence if pk in shown}
    if not any(words & terms for terms in cited.values()):
        return "no content word in common with the memories it cites", []
    agreeing = [
        pk
        for pk, terms in cited.items()
        if pk not in (new_id, fact.updates) and len(words & terms) >= AGREEMENT_SHARE * len(words)
    ]
    return "", agreeing


def _store(memory: AIMemory, vetted: list[Vetted], *, model: str, linked: dict[int, int]) -> list[AIMemory]:
    """Store the vetted items; `linked` gets, by each item's place in the answer, the fact that
    holds it (the new one, or the one it confirms)."""
    stored: list[AIMemory] = []
    with transaction.atomic():
        active = {
            (kind, " ".join(content.lower().split())): pk
            for pk, kind, content in AIMemory.objects.active()
            .filter(student_id=memory.student_id, kind__in=(AIMemory.Kind.FACT, AIMemory.Kind.APPROACH))
            .values_list("pk", "kind", "content")
        }
        for index, fact, confirmed in ((v.index, v.fact, v.confirmed) for v in vetted):
            kind = AIMemory.Kind.FACT if fact.tier == AIMemory.Tier.SEMANTIC else AIMemory.Kind.APPROACH
            if fact.confidence < settings.MEMORY_FACT_MIN_CONFIDENCE:
                logger.info("extraction: memory %s: item %d below the confidence floor", memory.pk, index)
                continue
            same = active.get((kind, " ".join(fact.content.lower().split())))
            if same is not None:
                _confirm(same, source_id=memory.pk)
                linked[fact.position] = same
                continue
            created, was_new = memory_derived_store(
                student_id=memory.student_id,
                kind=kind,
                source=AIMemory.Source.EXTRACTION,
                source_ref=source_ref(memory.pk, index),
                title=fact.title,
                content=fact.content,
                evidence=list(fact.evidence),
                confidence=fact.confidence,
                model=model,
                confirmed=confirmed,
            )
            linked[fact.position] = created.pk
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


def card_proposals_store(memory: AIMemory, answer: str, *, linked: dict[int, int]) -> None:
    """The student card's changes the answer proposes (memory.card.card_propose), each with the
    fact it follows from (else `memory`). One that names a fact refused above, or is below
    MEMORY_FACT_MIN_CONFIDENCE, or that the card cannot take, is dropped (logged)."""
    proposals, dropped = parse_card_proposals(answer)
    titles = dict(AIMemory.objects.filter(pk__in=[memory.pk, *linked.values()]).values_list("pk", "title"))
    for reason in dropped:
        logger.info("extraction: memory %s: %s dropped", memory.pk, reason)
    for index, proposal in enumerate(proposals):
        if proposal.fact is not None and proposal.fact not in linked:
            logger.info("extraction: memory %s: card item %d names a fact not kept", memory.pk, index)
            continue
        if proposal.confidence < settings.MEMORY_FACT_MIN_CONFIDENCE:
            logger.info("extraction: memory %s: card item %d below the confidence floor", memory.pk, index)
            continue
        source_id = linked.get(proposal.fact, memory.pk) if proposal.fact is not None else memory.pk
        try:
            card.card_propose(
                student_id=memory.student_id,
                field=proposal.field,
                op=proposal.op,
                value=proposal.value,
                confidence=proposal.confidence,
                memory_id=source_id,
                reason=titles.get(source_id, ""),
            )
        except ValueError as exc:
            logger.info("extraction: memory %s: card item %d dropped: %s", memory.pk, index, exc)


def _confirm(memory_id: int, *, source_id: int) -> None:
    """The same fact drawn again, from memory `source_id`: a second source, unless the fact
    already rests on that memory. It is confirmed (if it was not) and cites that memory too."""
    fact = AIMemory.objects.select_for_update().get(pk=memory_id)
    if source_id in fact.evidence:
        return
    fact.evidence = sorted({*(pk for pk in fact.evidence if isinstance(pk, int)), source_id})
    fact.confirmed_at = fact.confirmed_at or timezone.now()
    fact.save(update_fields=["evidence", "confirmed_at", "updated_at"])
    logger.info("extraction: memory %s confirms #%s", source_id, memory_id)
