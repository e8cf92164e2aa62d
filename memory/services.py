"""Writes of memories: notes from the save_memory tool, teacher notes, conversation summaries."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from accounts.selectors import student_get_visible
from llm.tokens import count_tokens
from memory.models import AIMemory
from memory.validation import validate_content, validate_title
from tutor.errors import Forbidden

logger = logging.getLogger(__name__)


def _memory_tokens(title: str, content: str) -> int:
    return count_tokens(f"{title}\n{content}")


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
    saved = AIMemory.objects.filter(
        source_conversation_id=conversation_id, kind=AIMemory.Kind.NOTE
    ).count()
    if saved >= settings.SAVE_MEMORY_MAX_PER_CONVERSATION:
        raise ValidationError(
            f"Memory limit reached: at most {settings.SAVE_MEMORY_MAX_PER_CONVERSATION} notes per conversation."
        )
    memory = AIMemory.objects.create(
        student_id=student_id,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.SAVE_MEMORY_TOOL,
        source_conversation_id=conversation_id,
        title=clean_title,
        content=clean_content,
        token_count=_memory_tokens(clean_title, clean_content),
        created_at=timezone.now(),
    )
    return memory, True


def teacher_note_create(*, teacher: Any, student_id: Any, title: object, content: object) -> AIMemory:
    """A teacher adds a note to the memory of a student in one of their classes.

    Another class's student is a 404 (through the scoping primitive); a student is refused.
    """
    if getattr(teacher, "role", None) != User.Role.TEACHER:
        raise Forbidden("Only a teacher can add a teacher note.")
    student = student_get_visible(user=teacher, student_id=student_id)
    clean_title = validate_title(title)
    clean_content = validate_content(content)
    return AIMemory.objects.create(
        student=student,
        kind=AIMemory.Kind.TEACHER_NOTE,
        source=AIMemory.Source.TEACHER,
        author=teacher,
        title=clean_title,
        content=clean_content,
        token_count=_memory_tokens(clean_title, clean_content),
        created_at=timezone.now(),
    )


def memory_summary_store(*, student_id: int, conversation_id: int, title: str, content: str) -> tuple[AIMemory, bool]:
    """Store the one summary of a conversation. Returns (memory, created).

    Idempotent: the unique constraint `memory_one_summary_per_conversation` makes a second
    store (a redelivered task, a sweep racing a retry) return the existing summary.
    """
    clean_title = validate_title(title)
    clean_content = validate_content(content, is_summary=True)
    existing = AIMemory.objects.filter(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            memory = AIMemory.objects.create(
                student_id=student_id,
                kind=AIMemory.Kind.SUMMARY,
                source=AIMemory.Source.SUMMARY_TASK,
                source_conversation_id=conversation_id,
                title=clean_title,
                content=clean_content,
                token_count=_memory_tokens(clean_title, clean_content),
                created_at=timezone.now(),
            )
    except IntegrityError:
        return AIMemory.objects.get(source_conversation_id=conversation_id, kind=AIMemory.Kind.SUMMARY), False
    return memory, True
