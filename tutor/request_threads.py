"""Django's ASGI handler, with each request's thread-sensitive work on a thread kept for reuse.

Django runs a request's synchronous code (a sync view, a sync middleware, the receivers of
`request_started` and `request_finished`, the response's `close`) through asgiref's
`sync_to_async(thread_sensitive=True)`: all of it on one thread of its own, so that its
database connection and thread-locals stay with the request. Stock Django starts that thread
for each request, and asgiref starts one more at the request's end to join it: two threads
started and ended per request, every request having a signal to send.

`ASGIHandler` keeps the contract (one request's thread-sensitive calls on one thread, one call
at a time) and drops the churn: a request borrows an idle single-thread executor from a process
pool at its first thread-sensitive call and gives it back when it ends. A request that ended
while one of its calls still runs (a client gone during a slow sync view) does not give it back:
its thread ends after that call, as stock Django's would, and no later request waits behind it.
At most `IDLE_KEPT` executors wait idle; the rest are shut down when given back.

A task the request started and that outlives it (a chat turn finishing after its client left)
is no longer in the request's context: a thread-sensitive call it makes gets a thread of its
own, as with stock Django.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync, ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler as DjangoASGIHandler

IDLE_KEPT = 64
THREAD_NAME_PREFIX = "request"


class _Threads:
    """The process's idle single-thread executors."""

    def __init__(self) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        self._lock = threading.Lock()
        self.started = 0  # executors made so far

    def borrow(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            self.started += 1
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix=THREAD_NAME_PREFIX)

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT:
                self._idle.append(executor)
                return
        executor.shutdown(wait=False)


threads = _Threads()


class _RequestThread(Executor):
    """One request's thread-sensitive executor: a borrowed single thread, taken at the first call."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._last: Future[Any] | None = None  # one worker, in order: done means all are done

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self._executor is None:
            self._executor = threads.borrow()
        self._last = self._executor.submit(fn, *args, **kwargs)
        return self._last

    def release(self) -> None:
        """The thread back to the pool if none of the request's calls is running, else ended
        once they are."""
        if self._executor is None:
            return
        if self._last is None or self._last.done():
            threads.give_back(self._executor)
        else:
            self._executor.shutdown(wait=False)
        self._executor = self._last = None


class ASGIHandler(DjangoASGIHandler):
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        async with ThreadSensitiveContext() as context:
            # Where asgiref looks up the context's executor (it would make one at the first call).
            executor = _RequestThread()
            SyncToAsync.context_to_thread_executor[context] = executor
            try:
                await self.handle(scope, receive, send)
            finally:
                # Gone before the context exits: asgiref has no executor left to join.
                SyncToAsync.context_to_thread_executor.pop(context, None)
                executor.release()
