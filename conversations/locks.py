"""The per-conversation turn lock: two sends to one conversation run one after the other.

The lock is held across the model call but outside any database transaction, so the student's
message is committed before the model is called and survives any failure.

- PostgreSQL: a session-level advisory lock keyed by the conversation id, held by the request's
  connection (released on unlock, or by the server if the connection drops).
- SQLite (the embedded single-process default): striped in-process locks. The embedded server
  is one process, so this serialises every send to a conversation there too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

_STRIPES = [threading.Lock() for _ in range(256)]


@contextmanager
def turn_lock(conversation_id: int) -> Iterator[None]:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [conversation_id])
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [conversation_id])
    else:
        with _STRIPES[conversation_id % len(_STRIPES)]:
            yield
