"""Slow calls (a summary model, an embedder) awaited off the database-step threads.

A chat turn's database steps run on core.db's pool of DB_STEP_THREADS threads, one per database
connection. A call that waits for a model, an embeddings server or the CPU-bound local embedder
for seconds must not take one of those threads: hundreds of turns would queue behind it for a
database step. `offload` runs such a call on a pool of its own (threads named `slow-call`), and
gives back any connection the call opened (a gateway call saves its LLMUsage row at once).

With DB_STEP_THREADS=0 (the in-process tests) the call runs as the database steps do then, on
the request's own thread (asgiref's thread-sensitive executor), so that a row it saves is in the
test's transaction.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings

from core.db import connection_release

P = ParamSpec("P")
R = TypeVar("R")

# Threads for slow calls in a process: each mostly waits on the network (or on torch's own
# threads), so more of them than database connections is cheap.
OFFLOAD_THREADS = 32
THREAD_NAME_PREFIX = "slow-call"

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=OFFLOAD_THREADS, thread_name_prefix=THREAD_NAME_PREFIX)
    return _executor


async def offload(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Await `fn(*args, **kwargs)` run on the slow-call pool, never on a database-step thread.
    contextvars go along; a connection the call opened is released when it returns."""

    def run() -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            connection_release()

    if settings.DB_STEP_THREADS <= 0:
        return await sync_to_async(run)()
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_pool(), context.run, run)
