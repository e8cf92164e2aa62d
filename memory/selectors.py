"""Reads of memories. Every query is scoped through accounts.selectors.students_visible_to."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from accounts.selectors import student_get_visible, students_visible_to
from memory.models import AIMemory
from tutor.errors import NotFound


def memory_list(*, user: Any, student_id: Any = None) -> QuerySet[AIMemory]:
    """Active memories `user` may read, newest first; narrowed to one visible student if given."""
    qs = AIMemory.objects.active().filter(student__in=students_visible_to(user).values("pk"))
    if student_id not in (None, ""):
        student = student_get_visible(user=user, student_id=student_id)
        qs = qs.filter(student=student)
    return qs.select_related("source_conversation").order_by("-created_at", "-id")


def memory_get(*, user: Any, memory_id: Any) -> AIMemory:
    try:
        pk = int(memory_id)
    except (TypeError, ValueError):
        raise NotFound("Memory not found.") from None
    memory = AIMemory.objects.filter(
        pk=pk, student__in=students_visible_to(user).values("pk")
    ).first()
    if memory is None:
        raise NotFound("Memory not found.")
    return memory


def memories_for_prompt(*, student_id: int, limit: int) -> list[AIMemory]:
    """The student's `limit` latest active memories, newest first (one indexed query).

    Called by the chat turn on behalf of the student who owns the conversation, so the scope
    is the student id itself.
    """
    return list(
        AIMemory.objects.active()
        .filter(student_id=student_id)
        .order_by("-created_at", "-id")
        .only("id", "kind", "title", "content", "source", "source_conversation_id", "token_count", "created_at")[
            :limit
        ]
    )
