"""Writes of memories: notes from the save_memory tool, teacher notes, conversation summaries,
edits and archiving, and the embeddings recall uses.

Every write keeps the full-text index (memory.search.fts) in sync inside its own transaction, stamps
what it writes with the student's next memory revision (`student_revision_next`, which the
SQLite vector cache of memory.search.vector_cache follows), and enqueues the memory's embedding after commit
(memory.tasks.memory_embed): embeddings are never computed in the request.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import student_get_visible
from core.errors import Conflict, Forbidden, NotFound
from llm.tokens import count_tokens
from memory.models import AIMemory, MemoryEmbedding, StudentMemoryRevision
from memory.search import embeddings, fts
from memory.selectors import memories_visible_to
from memory.validation import (
    TITLE_MAX_CHARS,
    clip,
    clip_content,
    validate_content,
    validate_reason,
    validate_title,
)

logger = logging.getLogger(__name__)

# Kinds that facts are extracted from (memory.extraction), checked again by the task.
EXTRACTABLE_KINDS = (AIMemory.Kind.SUMMARY, AIMemory.Kind.NOTE, AIMemory.Kind.TEACHER_NOTE, AIMemory.Kind.QUIZ_RESULT)


# The same upsert on both databases (no RETURNING: SQLite has it only since 3.35, Django 5.2
# supports 3.31). The row stays locked until the caller's transaction ends, which orders one
# student's writes (see StudentMemoryRevision); the read after it sees the transaction's value.
_REVISION_NEXT_SQL = (
    "INSERT INTO memory_studentmemoryrevision (student_id, revision) VALUES (%s, 1)"
    " ON CONFLICT (student_id) DO UPDATE SET revision = memory_studentmemoryrevision.revision + 1"
)


def student_revision_next(student_id: int) -> int:
    """Take the student's next memory revision, inside the caller's transaction.

    Every write to a student's memories or vectors calls this and stamps the rows it writes with
    the value, so that the SQLite vector cache (memory.search.vector_cache) catches up from the rows
    stamped above what it holds. PostgreSQL keeps no cache and reads none of it.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("student_revision_next must run inside the write's transaction")
    if connection.vendor == "postgresql":
        return 0  # no vector cache to keep fresh: nothing to lock, nothing to count
    with connection.cursor() as cursor:
        cursor.execute(_REVISION_NEXT_SQL, [student_id])
    return StudentMemoryRevision.objects.values_list("revision", flat=True).get(pk=student_id)


def _memory_tokens(title: str, content: str) -> int:
    return count_tokens(f"{title}\n{content}")


def _memory_create(*, title: str, content: str, **fields: Any) -> AIMemory:
    """Create a validated memory, its token count and its index entry, in one transaction.

    The embedding task is enqueued by `_memory_written` once that transaction commits.
    """
    with transaction.atomic():
        student_id = fields["student"].pk if "student" in fields else fields["student_id"]
        memory = AIMemory.objects.create(
            title=title,
            content=content,
            token_count=_memory_tokens(title, content),
            created_at=timezone.now(),
            revision=student_revision_next(student_id),
            **fields,
        )
        _memory_written(memory)
    return memory


def memory_note_save(*, student_id: int, conversation_id: int, title: object, content: object) -> tuple[AIMemory, bool]:
    """Store a note from the save_memory tool. Returns (memory, created).

    Raises django ValidationError on invalid arguments or when the per-conversation cap
    (SAVE_MEMORY_MAX_PER_CONVERSATION) is reached. The same note saved twice in one
    conversation (a retried turn) is stored once.
    """
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    existing = AIMemory.objects.filter(
        student_id=student_id,
        source_conversation_id=conversation_id,
        kind=AIMemory.Kind.NOTE,
        title=clean_title,
        content=clean_content,
    ).first()
    if existing is not None:
        return existing, False
    saved = AIMemory.objects.filter(source_conversation_id=conversation_id, kind=AIMemory.Kind.NOTE).count()
    if saved >= settings.SAVE_MEMORY_MAX_PER_CONVERSATION:
        raise ValidationError(
            f"Memory limit reached: at most {settings.SAVE_MEMORY_MAX_PER_CONVERSATION} notes per conversation."
        )
    memory = _memory_create(
        student_id=student_id,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.SAVE_MEMORY_TOOL,
        source_conversation_id=conversation_id,
        title=clean_title,
        content=clean_content,
    )
    return memory, True


def memory_record_save(
    *, student_id: int, kind: str, source_ref: str, title: str, content: str, conversation_id: int | None = None
) -> tuple[AIMemory, bool]:
    """Store the memory of an app record: a graded quiz (kind quiz_result, source quiz) or an
    uploaded file's text (kind file, source file_upload). Returns (memory, created).

    One memory per `source_ref` ("quiz:12") and student: a second call (a redelivered task)
    returns the first. The text is the app's own rendering of the record (not validated like a
    note: cut to the limits of memory.validation, `clip`, `clip_content`). Runs in the
    caller's transaction when there is one (the grading transaction, for a quiz).
    """
    sources: dict[str, str] = {
        AIMemory.Kind.QUIZ_RESULT: AIMemory.Source.QUIZ,
        AIMemory.Kind.FILE: AIMemory.Source.FILE_UPLOAD,
    }
    if kind not in sources or not source_ref:
        raise ValueError(f"not a record memory: kind {kind!r}, source_ref {source_ref!r}")
    existing = AIMemory.objects.filter(student_id=student_id, source_ref=source_ref).first()
    if existing is not None:
        return existing, False
    clean_content = clip_content(content)
    clean_title = clip(title, max_chars=TITLE_MAX_CHARS)
    try:
        with transaction.atomic():
            memory = _memory_create(
                student_id=student_id,
                kind=kind,
                source=sources[kind],
                source_ref=source_ref,
                source_conversation_id=conversation_id,
                title=clean_title,
                content=clean_content,
            )
    except IntegrityError:  # the same record stored meanwhile (memory_one_per_source_ref)
        return AIMemory.objects.get(student_id=student_id, source_ref=source_ref), False
    return memory, True


def memory_derived_store(
    *,
    student_id: int,
    kind: str,
    source: str,
    source_ref: str,
    title: str,
    content: str,
    evidence: list[int],
    confidence: float,
    model: str,
    confirmed: bool = True,
) -> tuple[AIMemory, bool]:
    """Store a memory the model drew from others: an extracted fact or approach, or a merge.
    Returns (memory, created).

    The title and content were validated by the caller's parser; `evidence` lists the memories
    it rests on. `confirmed`: whether a second source agrees (a merge; an extraction says);
    an unconfirmed fact stays out of the prompt's most confident block (AIMemory.confirmed_at).
    One memory per `source_ref` and student, so a redelivered task stores nothing new. Runs in
    the caller's transaction when there is one.
    """
    existing = AIMemory.objects.filter(student_id=student_id, source_ref=source_ref).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            memory = _memory_create(
                student_id=student_id,
                kind=kind,
                source=source,
                source_ref=source_ref,
                title=title,
                content=content,
                evidence=sorted(set(evidence)),
                confidence=min(max(confidence, 0.0), 1.0),
                model=model[:200],
                confirmed_at=timezone.now() if confirmed else None,
            )
    except IntegrityError:  # stored meanwhile by another delivery (memory_one_per_source_ref)
        return AIMemory.objects.get(student_id=student_id, source_ref=source_ref), False
    return memory, True


def approaches_outcome_record(*, student_id: int, passed: bool, since: Any) -> int:
    """Count a quiz outcome for each of the student's active approaches shown in a reply's
    prompt since `since` (the previous quiz result, or None for ever). Returns how many moved.

    Called once per graded quiz, in the transaction that stores its result memory (whose
    creation is the guard against counting a redelivery twice).
    """
    qs = AIMemory.objects.active().filter(student_id=student_id, kind=AIMemory.Kind.APPROACH)
    qs = qs.filter(last_recalled_at__isnull=False)
    if since is not None:
        qs = qs.filter(last_recalled_at__gt=since)
    field = "successes" if passed else "failures"
    return qs.update(**{field: F(field) + 1})


def teacher_note_create(
    *, teacher: Any, student_id: Any, title: object, content: object, visibility: str = AIMemory.Visibility.STUDENT
) -> AIMemory:
    """A teacher adds a note to the memory of a student in one of their classes, seen by the
    student (and the tutor) or by teachers only (`visibility`).

    Another class's student is a 404 (through the scoping primitive); a student is refused.
    """
    if getattr(teacher, "role", None) != User.Role.TEACHER:
        raise Forbidden(_("Only a teacher can add a teacher note."))
    student = student_get_visible(user=teacher, student_id=student_id)
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    return _memory_create(
        student=student,
        kind=AIMemory.Kind.TEACHER_NOTE,
        source=AIMemory.Source.TEACHER,
        author=teacher,
        title=clean_title,
        content=clean_content,
        visibility=visibility,
    )


def memory_summary_store(
    *, student_id: int, conversation_id: int, title: str, content: str, fallback: bool = False
) -> tuple[AIMemory, bool]:
    """Store the one summary of a conversation. Returns (memory, created).

    Idempotent: the unique constraint `memory_one_summary_per_conversation` makes a second
    store (a redelivered task, a sweep racing a retry) return the existing summary. A
    `fallback` (written from the conversation itself, see memory.summaries) is stored with low
    confidence and `needs_review`; a model's summary stored later replaces it in place.
    """
    clean_title = validate_title(title)
    clean_content = validate_content(content, is_summary=True)
    with transaction.atomic():
        existing = (
            AIMemory.objects.select_for_update()
            .filter(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY)
            .first()
        )
        if existing is not None:
            if existing.needs_review and not fallback and existing.status == AIMemory.Status.ACTIVE:
                _memory_rewrite(existing, title=clean_title, content=clean_content)
            return existing, False
        try:
            with transaction.atomic():
                memory = _memory_create(
                    student_id=student_id,
                    kind=AIMemory.Kind.SUMMARY,
                    source=AIMemory.Source.SUMMARY_TASK,
                    source_conversation_id=conversation_id,
                    title=clean_title,
                    content=clean_content,
                    needs_review=fallback,
                    confidence=FALLBACK_CONFIDENCE if fallback else 1.0,
                )
        except IntegrityError:
            return AIMemory.objects.get(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY), False
    return memory, True


# A fallback summary says only what the conversation itself shows (its subject, date, questions).
FALLBACK_CONFIDENCE = 0.2


def _memory_rewrite(memory: AIMemory, *, title: str, content: str) -> None:
    """New text for a locked memory: re-indexed at once, re-embedded after commit; a rewrite by
    a model's summary or a teacher settles a fallback (no review needed, full confidence)."""
    memory.title, memory.content = title, content
    memory.token_count = _memory_tokens(title, content)
    memory.needs_review, memory.confidence = False, 1.0
    memory.revision = student_revision_next(memory.student_id)
    fields = ["title", "content", "token_count", "needs_review", "confidence", "revision", "updated_at"]
    memory.save(update_fields=fields)
    MemoryEmbedding.objects.filter(memory=memory).delete()
    _memory_written(memory)


# --- Edits and archiving ----------------------------------------------------------------------


def _memory_for_edit(*, user: Any, memory_id: Any) -> AIMemory:
    """The memory locked for an edit by `user`: a teacher of the student (404 outside scope)."""
    from memory.selectors import memory_get

    memory = memory_get(user=user, memory_id=memory_id)
    if getattr(user, "role", None) != User.Role.TEACHER:
        raise Forbidden(_("Only a teacher of the student can edit or archive a memory."))
    return AIMemory.objects.select_for_update().get(pk=memory.pk)


def memory_update(
    *, user: Any, memory_id: Any, title: object = None, content: object = None, visibility: str | None = None
) -> AIMemory:
    """Edit a memory's title, content and/or visibility (a teacher of the student).

    The full-text entry is rewritten in the same transaction; the stale vector is dropped (the
    memory is found lexically meanwhile) and a new one is enqueued after commit. A correction
    settles a fallback summary (needs_review off). An archived memory cannot be edited (Conflict).
    Only a teacher note can be made teacher-only (Conflict otherwise): what the student said or
    the tutor wrote to them is theirs to see. A teacher's edit of a fact or an approach, even one
    that keeps its text, confirms it (`confirmed_at`).
    """
    with transaction.atomic():
        memory = _memory_for_edit(user=user, memory_id=memory_id)
        if memory.status != AIMemory.Status.ACTIVE:
            raise Conflict(_("This memory is archived and cannot be edited."))
        if visibility is not None and visibility != memory.visibility:
            if memory.kind != AIMemory.Kind.TEACHER_NOTE:
                raise Conflict(_("Only a teacher note can be kept from the student."))
            memory.visibility = visibility
            memory.revision = student_revision_next(memory.student_id)
            memory.save(update_fields=["visibility", "revision", "updated_at"])
        if title is None and content is None:
            return memory
        if memory.confirmed_at is None and memory.kind in (AIMemory.Kind.FACT, AIMemory.Kind.APPROACH):
            memory.confirmed_at = timezone.now()
            memory.save(update_fields=["confirmed_at", "updated_at"])
        new_title = memory.title if title is None else validate_title(title)
        new_content = (
            memory.content
            if content is None
            else validate_content(content, is_summary=memory.kind == AIMemory.Kind.SUMMARY)
        )
        if (new_title, new_content) == (memory.title, memory.content) and not memory.needs_review:
            return memory
        _memory_rewrite(memory, title=new_title, content=new_content)
    return memory


def memory_archive(*, user: Any, memory_id: Any, reason: str) -> AIMemory:
    """Archive a memory with a reason (a teacher of the student). Never deletes it.

    Idempotent: archiving an archived memory changes nothing. The memory leaves the full-text
    index and its vector is dropped in the same transaction, so recall stops finding it at commit.
    """
    reason = _archive_reason(reason)
    with transaction.atomic():
        return _archive(_memory_for_edit(user=user, memory_id=memory_id), reason)


def _archive_reason(reason: object) -> str:
    return validate_reason(reason, required_message=_("A reason is required to archive a memory."))


def _archive(memory: AIMemory, reason: str) -> AIMemory:
    """Archive a memory locked by the caller's transaction (a no-op if it is archived already)."""
    return memory_retire(memory, reason=reason)


def memory_retire(memory: AIMemory, *, reason: str, successor: AIMemory | None = None) -> AIMemory:
    """Archive a memory locked by the caller's transaction, with a reason and, for a merge, the
    memory that replaces it. A no-op if it is archived already. It leaves the full-text index
    and loses its vector in the same transaction; its row and text stay. A superseded memory is
    left as it is (its chain stays)."""
    if memory.status != AIMemory.Status.ACTIVE:
        return memory
    memory.status = AIMemory.Status.ARCHIVED
    memory.archived_reason = reason[:300]
    memory.superseded_by = successor
    memory.revision = student_revision_next(memory.student_id)
    memory.save(update_fields=["status", "archived_reason", "superseded_by", "revision", "updated_at"])
    fts.memory_unindex([memory.pk])
    MemoryEmbedding.objects.filter(memory=memory).delete()
    return memory


# Archiving is the only change the admin makes to a memory, so it is the model's change
# permission (the "Tutor staff" group has it; see accounts.migrations.0003_tutor_staff_group).
MEMORY_ARCHIVE_PERMISSION = "memory.change_aimemory"


def memory_archive_by_staff(*, staff: Any, memory_id: int, reason: str) -> AIMemory:
    """Archive any student's memory from the Django admin, with a reason. Never deletes it.

    `staff` must be an active staff user with MEMORY_ARCHIVE_PERMISSION (superusers have it),
    else Forbidden. The memory must be one `staff` may see: superusers and staff-role accounts see
    every memory, anyone else (a teacher given the admin) only those of `memories_visible_to`; a
    memory outside that scope is NotFound, like one that does not exist. Same writes and
    guarantees as `memory_archive` (idempotent; the memory leaves the full-text index and loses
    its vector at commit).
    """
    if not (getattr(staff, "is_staff", False) and staff.has_perm(MEMORY_ARCHIVE_PERMISSION)):
        raise Forbidden(_("Only staff with the archive permission can archive a memory here."))
    clean = _archive_reason(reason)
    sees_all = staff.is_superuser or getattr(staff, "role", None) == "staff"
    scope = AIMemory.objects.all()
    if not sees_all:
        scope = scope.filter(pk__in=memories_visible_to(staff).values("pk"))
    with transaction.atomic():
        memory = scope.select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(_("Memory not found."))
        return _archive(memory, clean)


def student_memories_reindex(*, student_id: int, batch_size: int = 500) -> int:
    """Re-index every active memory of a student in their current language. Returns how many.

    In batches by id, each in its own transaction with its memories locked (an edit or an archive
    running meanwhile waits for the batch, so an archived memory is never put back in the index),
    the language read again for each batch: if it changes during the run, a later task redoes it
    and both end on the latest language. The statistics are then counted again from the index.
    Idempotent.
    """
    done, last = 0, 0
    while True:
        with transaction.atomic():
            language = User.objects.filter(pk=student_id).values_list("language", flat=True).first()
            if language is None:
                return done
            rows = list(
                AIMemory.objects.select_for_update()
                .filter(student_id=student_id, status=AIMemory.Status.ACTIVE, pk__gt=last)
                .order_by("pk")
                .values_list("pk", "title", "content")[: max(batch_size, 1)]
            )
            if not rows:
                fts.statistics_rebuild(student_id)
                return done
            fts.memory_index(
                fts.IndexRow(pk, student_id, fts.memory_text(title, content), language) for pk, title, content in rows
            )
        done += len(rows)
        last = rows[-1][0]


def _memory_written(memory: AIMemory) -> None:
    """Index a memory just written or edited, in the caller's transaction; embed it after commit."""
    language = User.objects.filter(pk=memory.student_id).values_list("language", flat=True).first() or "en"
    fts.memory_index(
        [fts.IndexRow(memory.pk, memory.student_id, fts.memory_text(memory.title, memory.content), language)]
    )
    memory_id = memory.pk
    if embeddings.backend_name() != "none":
        transaction.on_commit(lambda: _enqueue_embedding(memory_id))
    if settings.MEMORY_EXTRACTION_ENABLED and memory.kind in EXTRACTABLE_KINDS and not memory.needs_review:
        transaction.on_commit(lambda: _enqueue_extraction(memory_id))


def _enqueue_embedding(memory_id: int) -> None:
    from memory.tasks import memory_embed

    # The memory is committed either way: if the broker is down, `embeddings_sweep` (and
    # `manage.py reembed`) embed it later, and recall finds it lexically meanwhile.
    try:
        memory_embed.delay(memory_id)
    except Exception:
        logger.exception("could not enqueue the embedding of memory %s; the sweep will retry", memory_id)


def _enqueue_extraction(memory_id: int) -> None:
    from memory.tasks import memory_facts_extract

    # Facts are a bonus drawn from a memory that is committed either way.
    try:
        memory_facts_extract.delay(memory_id)
    except Exception:
        logger.exception("could not enqueue the fact extraction of memory %s", memory_id)


# --- Embeddings ---------------------------------------------------------------------------------


def memory_embeddings_write(*, memory_ids: list[int], embedder: embeddings.Embedder | None = None) -> int:
    """Embed these memories with the configured embedder and store the vectors. Returns how many.

    Idempotent: an active memory whose stored vector was made by the same model from the same
    text is skipped, and archived memories are never embedded. The text is embedded outside any
    transaction; the vector is stored only if the memory's text is still the one embedded (an
    edit in between enqueues its own embedding). Raises EmbedderUnavailable.
    """
    embedder = embedder or embeddings.get_embedder()
    if embedder is None:
        return 0
    memories = list(AIMemory.objects.active().filter(pk__in=memory_ids).only("pk", "student_id", "title", "content"))
    current = dict(
        MemoryEmbedding.objects.filter(memory_id__in=[m.pk for m in memories], model=embedder.name).values_list(
            "memory_id", "text_hash"
        )
    )
    todo = []
    texts: list[str] = []
    for memory in memories:
        text = fts.memory_text(memory.title, memory.content)
        digest = embeddings.text_hash(text)
        if current.get(memory.pk) != digest:
            parts = embeddings.sentences(memory.content)
            todo.append((memory, digest, len(texts), len(parts)))
            texts += [text, *parts]
    if not todo:
        return 0
    matrix = embedder.embed(texts)
    with transaction.atomic():
        still = {
            m.pk: embeddings.text_hash(fts.memory_text(m.title, m.content))
            for m in AIMemory.objects.select_for_update()
            .active()
            .filter(pk__in=[m.pk for m, *_ in todo])
            .only("pk", "title", "content")
        }
        todo = [item for item in todo if still.get(item[0].pk) == item[1]]
        # One revision per student written, taken in student order (the counters' locks too).
        students = sorted({memory.student_id for memory, *_ in todo})
        revisions = {student_id: student_revision_next(student_id) for student_id in students}
        for memory, digest, row, count in todo:
            vector = matrix[row]
            MemoryEmbedding.objects.update_or_create(
                memory_id=memory.pk,
                defaults={
                    "student_id": memory.student_id,
                    "model": embedder.name,
                    "dim": int(vector.shape[0]),
                    "vector": vector,
                    "sentences": count,
                    "sentence_vectors": matrix[row + 1 : row + 1 + count],
                    "text_hash": digest,
                    "revision": revisions[memory.student_id],
                },
            )
    return len(todo)


# --- Agents (MCP) -------------------------------------------------------------------------------


def memory_agent_write(*, user: Any, student_id: Any, title: object, content: object) -> AIMemory:
    """Store a note written by an agent acting as `user` (memory.mcp's `write` tool).

    A student writes for themselves (`student_id` may be omitted); a teacher must name a student
    of one of their classes. Anyone else's student is a 404 (NotFound) through the scoping
    primitive, before anything is validated or stored; a teacher who names no student gets a
    ValidationError, as does an invalid title or content. The note is a kind NOTE with source
    MCP_TOOL and no author (only a teacher note carries one), seen by the student and the tutor.
    Not idempotent: each call stores a note.
    """
    if student_id in (None, ""):
        if getattr(user, "role", None) != User.Role.STUDENT:
            raise ValidationError({"student_id": [_("Give the student whose memory to write.")]})
        student_id = user.pk
    student = student_get_visible(user=user, student_id=student_id)
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    return _memory_create(
        student=student,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.MCP_TOOL,
        title=clean_title,
        content=clean_content,
    )


def memory_agent_forget(*, user: Any, memory_id: Any, reason: object) -> AIMemory:
    """Archive a memory on behalf of an agent acting as `user` (memory.mcp's `forget` tool).
    Never deletes it: the row stays, with its reason, and leaves recall and the prompt at commit.

    A student may forget their own memories, a teacher those of their students; any other memory
    (another student's, a teacher-only note for a student, a missing id) is the same 404.
    Idempotent: a memory that is no longer active (archived, or superseded by a newer one) is
    returned unchanged, its first reason kept. The row is locked while it is archived.
    """
    from memory.selectors import memory_get

    clean = _archive_reason(reason)
    with transaction.atomic():
        memory = memory_get(user=user, memory_id=memory_id)
        locked = AIMemory.objects.select_for_update().get(pk=memory.pk)
        if locked.status != AIMemory.Status.ACTIVE:
            return locked
        return _archive(locked, clean)
