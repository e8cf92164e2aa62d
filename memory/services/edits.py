"""A teacher's edit of a memory: its title, content or visibility."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.errors import Conflict
from memory.models import AIMemory
from memory.services.writing import memory_for_edit, memory_rewrite, student_revision_next
from memory.validation import validate_content, validate_title


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
        memory = memory_for_edit(user=user, memory_id=memory_id)
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
        memory_rewrite(memory, title=new_title, content=new_content)
    return memory
