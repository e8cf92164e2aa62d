"""Small helpers for the recall tests: write memories through the services."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from conversations.models import Conversation
from memory.models import AIMemory
from memory.services import memory_note_save


def note(student: Any, title: str, content: str, *, conversation: Conversation | None = None,
         created_at: datetime | None = None) -> AIMemory:
    """A tutor note saved through memory_note_save (indexed like any memory)."""
    if conversation is None:
        conversation = Conversation.objects.create(student=student, subject="", last_activity_at=timezone.now())
    memory, created = memory_note_save(
        student_id=student.pk, conversation_id=conversation.pk, title=title, content=content
    )
    assert created
    if created_at is not None:
        AIMemory.objects.filter(pk=memory.pk).update(created_at=created_at)
        memory.refresh_from_db()
    return memory
