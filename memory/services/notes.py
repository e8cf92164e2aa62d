"""Notes: from the save_memory tool (the tutor), from an agent (memory.mcp) and from a teacher."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import is_educator, memory_consent_given, student_get_visible
from core.errors import Forbidden
from memory.models import AIMemory
from memory.services.writing import memory_create
from memory.validation import validate_content, validate_title


def memory_note_save(*, student_id: int, conversation_id: int, title: object, content: object) -> tuple[AIMemory, bool]:
    """Store a note from the save_memory tool. Returns (memory, created).

    Raises django ValidationError on invalid arguments or when the per-conversation cap
    (SAVE_MEMORY_MAX_PER_CONVERSATION) is reached. The same note saved twice in one
    conversation (a retried turn) is stored once. A student without consent to memory is offered
    no such tool (memory.tools); a call all the same is refused with a ValidationError.
    """
    if not memory_consent_given(student_id):
        raise ValidationError("Memory is off for this student: nothing is saved.")
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
    memory = memory_create(
        student_id=student_id,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.SAVE_MEMORY_TOOL,
        source_conversation_id=conversation_id,
        title=clean_title,
        content=clean_content,
    )
    return memory, True


def teacher_note_create(
    *, teacher: Any, student_id: Any, title: object, content: object, visibility: str = AIMemory.Visibility.STUDENT
) -> AIMemory:
    """A teacher adds a note to the memory of a student in one of their classes, seen by the
    student (and the tutor) or by teachers only (`visibility`).

    Another class's student is a 404 (through the scoping primitive); a student is refused.
    """
    if not is_educator(teacher):
        raise Forbidden(_("Only a teacher can add a teacher note."))
    student = student_get_visible(user=teacher, student_id=student_id)
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    return memory_create(
        student=student,
        kind=AIMemory.Kind.TEACHER_NOTE,
        source=AIMemory.Source.TEACHER,
        author=teacher,
        title=clean_title,
        content=clean_content,
        visibility=visibility,
    )


def memory_agent_write(*, user: Any, student_id: Any, title: object, content: object) -> AIMemory:
    """Store a note written by an agent acting as `user` (memory.mcp's `write` tool).

    A student writes for themselves (`student_id` may be omitted); a teacher must name a student
    of one of their classes. Anyone else's student is a 404 (NotFound) through the scoping
    primitive, before anything is validated or stored; a teacher who names no student gets a
    ValidationError, as does an invalid title or content. The note is a kind NOTE with source
    MCP_TOOL and no author (only a teacher note carries one), seen by the student and the tutor.
    A student without consent to memory: MemoryConsentOff (409), nothing stored. Not idempotent:
    each call stores a note.
    """
    if student_id in (None, ""):
        if getattr(user, "role", None) != User.Role.STUDENT:
            raise ValidationError({"student_id": [_("Give the student whose memory to write.")]})
        student_id = user.pk
    student = student_get_visible(user=user, student_id=student_id)
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    return memory_create(
        student=student,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.MCP_TOOL,
        title=clean_title,
        content=clean_content,
    )
