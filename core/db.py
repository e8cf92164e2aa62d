"""Short database steps from async code, and connections given back between them.

A chat turn awaits the model for seconds. It must not hold a database connection meanwhile:
each database step runs in a worker thread (`db_step`) and gives its connection back to the
pool when it ends (with the PostgreSQL pool, `close()` returns it; on SQLite it closes a file).

The steps run on a pool of DB_STEP_THREADS threads per process, as many as it has database
connections: hundreds of turns at once queue for a thread instead of each starting one of its
own (asgiref's default for a request). With DB_STEP_THREADS=0 they run on the request's own
thread, as Django runs sync code; the in-process tests do so, to share the test's transaction.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import translation

from core import metrics

try:
    from psycopg_pool import PoolTimeout
except ImportError:  # SQLite only: no pool

    class PoolTimeout(Exception):  # type: ignore[no-redef]
        pass


P = ParamSpec("P")
R = TypeVar("R")


def connection_release() -> None:
    """Give this thread's connection back, unless a transaction (or a test's) is open on it."""
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()


def connection_borrow() -> None:
    """Take this thread's connection from the pool now, timing the wait (core.metrics: the pool's
    waits and timeouts). Only PostgreSQL has a pool; elsewhere the first query connects."""
    if connection.vendor != "postgresql" or connection.connection is not None:
        return
    started = time.monotonic()
    try:
        connection.ensure_connection()
    except DatabaseError as exc:
        if isinstance(exc.__cause__, PoolTimeout) or isinstance(exc, PoolTimeout):
            metrics.DB_POOL_TIMEOUTS.inc()
        raise
    metrics.DB_POOL_WAIT.observe(time.monotonic() - started)


_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor | None:
    global _executor
    if settings.DB_STEP_THREADS <= 0:
        return None
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.DB_STEP_THREADS, thread_name_prefix="db-step")
    return _executor


async def db_step(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run `fn` in a thread where the ORM may be used; the connection is released afterwards."""

    def run() -> R:
        try:
            connection_borrow()
            return fn(*args, **kwargs)
        finally:
            connection_release()

    return await _in_thread(run)


async def db_thread(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Run `fn` on db_step's threads without taking a connection first, for a caller that
    reports the database being down itself (core.health); its connection is released after."""

    def run() -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            connection_release()

    return await _in_thread(run)


async def _in_thread(run: Callable[[], R]) -> R:
    pool = _pool()
    if pool is None:
        return await sync_to_async(run)()
    # Django's active language is per thread (asgiref.local), which a pool thread does not
    # inherit: the step runs in the caller's, and one it activates (core.auth: the user's) comes
    # back to the caller, as with sync_to_async, also when the step raises (an error found
    # after authentication is in the user's language); the messages and Content-Language follow it.
    language = translation.get_language()

    def run_in_language() -> tuple[R | None, str, Exception | None]:
        with translation.override(language):
            try:
                return run(), translation.get_language(), None
            except Exception as exc:
                return None, translation.get_language(), exc

    # contextvars go along (the ORM keeps none of its state there; loggers may).
    context = contextvars.copy_context()
    result, chosen, error = await asyncio.get_running_loop().run_in_executor(pool, context.run, run_in_language)
    if chosen:
        translation.activate(chosen)
    if error is not None:
        raise error
    return result  # type: ignore[return-value]
