"""A memory's end and its index: archiving (by a teacher, the admin, an agent, or a merge),
never deleting, and re-indexing a student's memories in their language."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from core.errors import Forbidden, NotFound
from memory.models import AIMemory, MemoryEmbedding
from memory.search import fts
from memory.search.backend import search_backend
from memory.selectors import memories_visible_to, memory_get
from memory.services.writing import memory_for_edit, student_revision_next
from memory.validation import validate_reason

# Archiving is the only change the admin makes to a memory, so it is the model's change
# permission (the "Tutor staff" group has it; see accounts.migrations.0003_tutor_staff_group).
MEMORY_ARCHIVE_PERMISSION = "memory.change_aimemory"


def memory_archive(*, user: Any, memory_id: Any, reason: str) -> AIMemory:
    """Archive a memory with a reason (a teacher of the student). Never deletes it.

    Idempotent: archiving an archived memory changes nothing. The memory leaves the full-text
    index and its vector is dropped in the same transaction, so recall stops finding it at commit.
    """
    reason = archive_reason(reason)
    with transaction.atomic():
        return memory_retire(memory_for_edit(user=user, memory_id=memory_id), reason=reason)


def archive_reason(reason: object) -> str:
    return validate_reason(reason, required_message=_("A reason is required to archive a memory."))


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
    search_backend().unindex([memory.pk])
    MemoryEmbedding.objects.filter(memory=memory).delete()
    return memory


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
    clean = archive_reason(reason)
    sees_all = staff.is_superuser or getattr(staff, "role", None) == "staff"
    scope = AIMemory.objects.all()
    if not sees_all:
        scope = scope.filter(pk__in=memories_visible_to(staff).values("pk"))
    with transaction.atomic():
        memory = scope.select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(_("Memory not found."))
        return memory_retire(memory, reason=clean)


def memory_agent_forget(*, user: Any, memory_id: Any, reason: object) -> AIMemory:
    """Archive a memory on behalf of an agent acting as `user` (memory.mcp's `forget` tool).
    Never deletes it: the row stays, with its reason, and leaves recall and the prompt at commit.

    A student may forget their own memories, a teacher those of their students; any other memory
    (another student's, a teacher-only note for a student, a missing id) is the same 404.
    Idempotent: a memory that is no longer active (archived, or superseded by a newer one) is
    returned unchanged, its first reason kept. The row is locked while it is archived.
    """
    clean = archive_reason(reason)
    with transaction.atomic():
        memory = memory_get(user=user, memory_id=memory_id)
        locked = AIMemory.objects.select_for_update().get(pk=memory.pk)
        if locked.status != AIMemory.Status.ACTIVE:
            return locked
        return memory_retire(locked, reason=clean)


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
                search_backend().refresh_statistics(student_id)
                return done
            search_backend().index(
                fts.IndexRow(pk, student_id, fts.memory_text(title, content), language) for pk, title, content in rows
            )
        done += len(rows)
        last = rows[-1][0]


def memories_archive_all(*, student_id: int, reason: str) -> int:
    """Archive every active memory of the student, of every kind (teachers' notes too), with
    `reason`, in the caller's transaction; returns how many. Never deletes one: each keeps its
    row and text, leaves the index and loses its vector (memory_retire). Used when a family
    withdraws consent to memory (privacy.consent); running it again archives nothing more."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("memories_archive_all must run inside the caller's transaction")
    active = AIMemory.objects.select_for_update().filter(student_id=student_id, status=AIMemory.Status.ACTIVE)
    archived = 0
    for memory in active.order_by("pk"):
        memory_retire(memory, reason=reason)
        archived += 1
    return archived
