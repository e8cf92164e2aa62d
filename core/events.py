"""Product events for the systems around the product: what happened, to whom, by ids and kinds.

An app's service calls `emit(...)` where the thing happens, inside its transaction or not; the
event is handed to each registered sink once that transaction commits (a rolled back write emits
nothing). A durable sink gets it at once instead, inside the emitting transaction, to record it
there (an outbox): what it writes commits with the write or not at all, so an event whose process
dies right after the commit is still on record for the sink's own sweep. A sink is a plug-in
(core.registry): the webhooks app registers the one that delivers events to the schools'
subscribers (docs/webhooks.md). The apps that emit know no sink by name, and with no sink
registered an event goes nowhere.

An event carries ids and kinds, never anything a child wrote (no message, no memory text, no
name): `data` is what a receiver gets, so a service puts in it only ids, kinds, counts and
dates. Sinks run after commit in the emitting process; one that raises is logged and the others
still run (the write that emitted it is committed either way). A durable sink runs in a
savepoint: if it raises, its writes alone are rolled back, it is logged, and it gets the event
again after commit as any other sink.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.registry import Registry

logger = logging.getLogger(__name__)

CONVERSATION_ENDED = "conversation.ended"
MEMORY_CREATED = "memory.created"
MEMORY_SUPERSEDED = "memory.superseded"
QUIZ_GRADED = "quiz.graded"
MASTERY_CHANGED = "mastery.changed"
FLAG_RAISED = "flag.raised"
ROSTER_IMPORTED = "roster.imported"

EVENT_TYPES: tuple[str, ...] = (
    CONVERSATION_ENDED,
    MEMORY_CREATED,
    MEMORY_SUPERSEDED,
    QUIZ_GRADED,
    MASTERY_CHANGED,
    FLAG_RAISED,
    ROSTER_IMPORTED,
)


@dataclass(frozen=True)
class Event:
    """One event: its type, when it happened, the student it is about (None for an event about a
    school, as a roster import), the schools it concerns besides the student's, and its data."""

    type: str
    timestamp: datetime
    data: dict[str, Any]
    student_id: int | None = None
    school_ids: tuple[int, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Sink:
    """`receive` takes each event after its transaction commits; with `durable`, at emit time
    within that transaction (it should write only to the database, and send its work with
    core.background.enqueue, which waits for the commit)."""

    name: str
    receive: Callable[[Event], None]
    durable: bool = False


sinks: Registry[Sink] = Registry("event sink", replace="any")


def emit(
    event_type: str,
    *,
    data: dict[str, Any],
    student_id: int | None = None,
    school_ids: tuple[int, ...] = (),
    using: str | None = None,
) -> None:
    """Hand the event to every durable sink now, in the current transaction on `using`, and to
    every other sink once it commits (at once outside a transaction). `data` holds ids, kinds
    and dates only."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    event = Event(
        type=event_type, timestamp=timezone.now(), data=data, student_id=student_id, school_ids=tuple(school_ids)
    )
    later = [sink for sink in sinks if not sink.durable or not _record(sink, event, using)]
    if later:
        transaction.on_commit(partial(_deliver, event, later), using=using)


def roster_imported(*, school_ids: tuple[int, ...], counts: dict[str, Any], using: str | None = None) -> None:
    """Emit `roster.imported` for a roster import that changed these schools: `counts` are how
    many rows of each kind it created, updated, deactivated, left unchanged or rejected (no
    names)."""
    emit(ROSTER_IMPORTED, data={"counts": dict(counts)}, school_ids=school_ids, using=using)


def _record(sink: Sink, event: Event, using: str | None) -> bool:
    """Hand `event` to a durable sink in a savepoint; False (logged, rolled back) if it raised."""
    try:
        with transaction.atomic(using=using):
            sink.receive(event)
    except Exception:
        logger.exception("durable event sink %s failed on %s; it gets it after commit", sink.name, event.type)
        return False
    return True


def _deliver(event: Event, to: list[Sink]) -> None:
    for sink in to:
        try:
            sink.receive(event)
        except Exception:
            # The write is committed; a sink that fails loses this event for its receivers only,
            # which its own log says (the other sinks still get it).
            logger.exception("event sink %s failed on %s", sink.name, event.type)
