"""Writing the access log: `access_record`, the one call every read of a student's records makes,
and the period's purge.

`access_record` is called once per request (or per MCP tool call, admin page, question, export),
after the rows were read and before the answer is sent, with every (student, record id) pair the
answer holds: it writes one entry per student other than the reader, in one INSERT (one
statement for one student; for several, with bulk_create's BEGIN and COMMIT around it outside a
transaction). A student reading their own records is never recorded. The chat turn never calls
it: the tutor reading a student's memories for its prompt is the student's own conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from audit.models import AccessEntry

Kind = AccessEntry.Kind
Surface = AccessEntry.Surface


def access_record(
    *, actor: Any, kind: str, surface: str, reads: Iterable[tuple[int | None, int | str | None]]
) -> list[AccessEntry]:
    """Record that `actor` (a user, or None for a machine client) read these (student id, record
    id) pairs of `kind` through `surface`: one entry per student but the actor themself, its ids
    in the order given, without repeats, at most AccessEntry.IDS_MAX. A record id None names no
    row (the student's card, their skills): the entry's ids stay empty. One INSERT, none when
    there is nothing to record."""
    actor_id = getattr(actor, "pk", None) if getattr(actor, "is_authenticated", False) else None
    ids: dict[int, list[int | str]] = {}
    for student_id, record_id in reads:
        if student_id is None or student_id == actor_id:
            continue
        kept = ids.setdefault(int(student_id), [])
        if record_id is not None and record_id not in kept and len(kept) < AccessEntry.IDS_MAX:
            kept.append(record_id)
    if not ids:
        return []
    now = timezone.now()
    rows = [
        AccessEntry(actor_id=actor_id, student_id=student, at=now, kind=kind, record_ids=kept, surface=surface)
        for student, kept in ids.items()
    ]
    if len(rows) == 1:
        # One statement: bulk_create would wrap its INSERT in a transaction of its own.
        rows[0].save(force_insert=True)
        return rows
    return AccessEntry.objects.bulk_create(rows)


def access_record_rows(
    *, actor: Any, kind: str, surface: str, rows: Iterable[Any], student_field: str = "student_id"
) -> list[AccessEntry]:
    """`access_record` for model rows: each row's `student_field` and primary key."""
    return access_record(
        actor=actor, kind=kind, surface=surface, reads=((getattr(row, student_field), row.pk) for row in rows)
    )


def access_log_purge() -> int:
    """Delete the entries older than ACCESS_LOG_DAYS; how many."""
    cutoff = timezone.now() - timedelta(days=settings.ACCESS_LOG_DAYS)
    return AccessEntry.objects.purge_before(cutoff)
