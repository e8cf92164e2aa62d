"""Short database steps from async code, and connections given back between them.

A chat turn awaits the model for seconds. It must not hold a database connection meanwhile:
each database step runs in a worker thread (`db_step`) and gives its connection back to the
pool when it ends (with the PostgreSQL pool, `close()` returns it; on SQLite it closes a file).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import connection

P = ParamSpec("P")
R = TypeVar("R")


def connection_release() -> None:
    """Give this thread's connection back, unless a transaction (or a test's) is open on it."""
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()


async def db_step(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run `fn` in a thread where the ORM may be used; the connection is released afterwards."""

    def run() -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            connection_release()

    return await sync_to_async(run)()
