"""Small helpers for the recall tests: write memories through the services."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from conversations.models import Conversation
from memory.models import AIMemory
from memory.services.notes import memory_note_save


def note(
    student: Any,
    title: str,
    content: str,
    *,
    conversation: Conversation | None = None,
    created_at: datetime | None = None,
) -> AIMemory:
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


def concurrent_notes(
    student: Any,
    first: tuple[str, str],
    second: tuple[str, str],
    *,
    hold: float,
    while_held: Callable[[], None] | None = None,
) -> tuple[AIMemory, AIMemory, float]:
    """Two notes (title, content) for one student from two threads: the first is written in a
    transaction kept open `hold` seconds, the second starts once the first is written (still
    uncommitted). `while_held` runs in the caller's thread meanwhile. Returns both memories and
    the seconds the second write took. Any error in a thread fails the assertion here."""
    taken = threading.Event()
    written: dict[str, tuple[AIMemory, float]] = {}
    errors: list[BaseException] = []

    def slow_writer() -> None:
        try:
            with transaction.atomic():
                memory = note(student, *first)
                taken.set()
                time.sleep(hold)  # still uncommitted while the other writer runs
            written["first"] = (memory, 0.0)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
            taken.set()
        finally:
            connection.close()

    def writer() -> None:
        try:
            taken.wait(10)
            started = time.monotonic()
            memory = note(student, *second)
            written["second"] = (memory, time.monotonic() - started)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=slow_writer), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    taken.wait(10)
    if while_held is not None:
        while_held()
    for t in threads:
        t.join(30)
    assert errors == []
    return written["first"][0], written["second"][0], written["second"][1]
