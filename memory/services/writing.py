"""The steps every memory write shares: the student's revision, creating and rewriting a memory,
and what follows a write (its index entry now, its embedding and fact extraction after commit)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import is_educator, memory_consent_given
from core import background, events
from core.errors import Conflict, Forbidden
from llm.tokens import count_tokens
from memory.models import AIMemory, MemoryEmbedding
from memory.search import embeddings, fts
from memory.search.backend import search_backend
from memory.selectors import memory_get

# Kinds that facts are extracted from (memory.extraction), checked again by the task: what was
# said and done with the student. Files are the student's documents, not facts about them.
EXTRACTABLE_KINDS = (AIMemory.Kind.SUMMARY, AIMemory.Kind.NOTE, AIMemory.Kind.TEACHER_NOTE, AIMemory.Kind.QUIZ_RESULT)


class MemoryConsentOff(Conflict):
    """The student's family does not consent to the tutor remembering them: nothing but a
    teacher's note is written (docs/privacy.md#consent-to-memory)."""

    code = "memory_consent_off"


def memory_consent_required(student_id: int, *, lock: bool = False) -> None:
    """MemoryConsentOff unless the student's family consents to memory (`lock`: see
    accounts.selectors.memory_consent_given)."""
    if not memory_consent_given(student_id, lock=lock):
        raise MemoryConsentOff(_("Memory is off for this student: their family has not consented to it."))


def student_revision_next(student_id: int) -> int:
    """Take the student's next memory revision, inside the caller's transaction.

    Every write to a student's memories or vectors calls this and stamps the rows it writes with
    the value, so that each process's vector cache (memory.search.vector_cache) catches up from
    the rows stamped above what it holds.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("student_revision_next must run inside the write's transaction")
    return search_backend().revision_next(student_id)


def memory_tokens(title: str, content: str) -> int:
    return count_tokens(f"{title}\n{content}")


def memory_create(*, title: str, content: str, **fields: Any) -> AIMemory:
    """Create a validated memory, its token count and its index entry, in one transaction.

    The embedding task is enqueued by `memory_written` once that transaction commits, and the
    `memory.created` event (core.events) is emitted then.

    Raises MemoryConsentOff for any kind but a teacher's note when the student has no consent to
    memory: the one check every writer goes through, whatever it checked before. It holds the
    student's row until commit, so a withdrawal (privacy.consent, which archives what exists)
    and a write never interleave: the write waits for it and is refused.
    """
    with transaction.atomic():
        student_id = fields["student"].pk if "student" in fields else fields["student_id"]
        if fields.get("kind") != AIMemory.Kind.TEACHER_NOTE:
            memory_consent_required(student_id, lock=True)
        memory = AIMemory.objects.create(
            title=title,
            content=content,
            token_count=memory_tokens(title, content),
            created_at=timezone.now(),
            revision=student_revision_next(student_id),
            **fields,
        )
        memory_written(memory)
        events.emit(
            events.MEMORY_CREATED,
            student_id=student_id,
            data={"memory_id": memory.pk, "student_id": student_id, "kind": memory.kind, "source": memory.source},
        )
    return memory


def memory_rewrite(memory: AIMemory, *, title: str, content: str) -> None:
    """New text for a locked memory: re-indexed at once, re-embedded after commit; a rewrite by
    a model's summary or a teacher settles a fallback (no review needed, full confidence)."""
    memory.title, memory.content = title, content
    memory.token_count = memory_tokens(title, content)
    memory.needs_review, memory.confidence = False, 1.0
    memory.revision = student_revision_next(memory.student_id)
    fields = ["title", "content", "token_count", "needs_review", "confidence", "revision", "updated_at"]
    memory.save(update_fields=fields)
    MemoryEmbedding.objects.filter(memory=memory).delete()
    memory_written(memory)


def memory_written(memory: AIMemory) -> None:
    """Index a memory just written or edited, in the caller's transaction; embed it after commit.

    The memory is committed either way: if the broker is down, `embeddings_sweep` (and
    `manage.py reembed`) embed it later, and recall finds it lexically meanwhile. Facts are a
    bonus drawn from a memory that is committed either way.
    """
    language = User.objects.filter(pk=memory.student_id).values_list("language", flat=True).first() or "en"
    search_backend().index(
        [fts.IndexRow(memory.pk, memory.student_id, fts.memory_text(memory.title, memory.content), language)]
    )
    if embeddings.backend_name() != "none":
        background.enqueue("memory.tasks.memory_embed", memory.pk)
    if settings.MEMORY_EXTRACTION_ENABLED and memory.kind in EXTRACTABLE_KINDS and not memory.needs_review:
        background.enqueue("memory.tasks.memory_facts_extract", memory.pk)


def memory_for_edit(*, user: Any, memory_id: Any) -> AIMemory:
    """The memory locked for an edit by `user`: a teacher of the student (404 outside scope)."""
    memory = memory_get(user=user, memory_id=memory_id)
    if not is_educator(user):
        raise Forbidden(_("Only a teacher of the student can edit or archive a memory."))
    return AIMemory.objects.select_for_update().get(pk=memory.pk)
