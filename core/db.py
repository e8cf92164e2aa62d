"""Short database steps from async code, and connections given back between them; the hot
statements compiled once (`compiled_query`).

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
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable
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


# --- Statements bound on the server -----------------------------------------------------------


@contextmanager
def server_cursor() -> Iterator[Any]:
    """A cursor of the default connection whose parameters the server binds (psycopg's
    server-side binding), for the hot statements (the chat turn's, `compiled_query`'s, memory
    search's): with DB_PREPARED_STATEMENTS (the connection's prepare_threshold 0) each statement
    is parsed once per connection, and planned once when PostgreSQL settles on a generic plan
    after five executions, and its parameters are sent as they are, not written into the SQL in
    Python. One statement per `execute` (no `;`-separated list). Django's execute wrappers and
    query log see it as any cursor. On another database, Django's own cursor."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    from django.db.backends.postgresql.base import ServerBindingCursor  # type: ignore[attr-defined]  # psycopg 3 only

    connection.ensure_connection()
    raw = ServerBindingCursor(connection.connection)
    connection.validate_thread_sharing()
    wrapper = _LoggedServerCursor(raw, connection) if connection.queries_logged else CursorWrapper(raw, connection)
    with wrapper as cursor:
        yield cursor


class _LoggedServerCursor(CursorDebugWrapper):
    """Django's query log for a server-binding cursor: the statement with its parameters
    written in (Django reads them back from the cursor only when every cursor binds on the server)."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params), params):
            return CursorWrapper.execute(self, sql, params)


# --- Statements compiled once ------------------------------------------------------------------

# Stand-ins for a statement's values while the ORM compiles it: within every integer field's
# range (the ORM drops a comparison with a value out of its field's range), and no value a
# statement holds of its own.
_STAND_IN = 2_147_391_000


@dataclass(frozen=True)
class _Compiled:
    sql: str
    # The statement's parameters: a value of its own, or (at `slots`) the name of a value given at
    # each run and its type.
    params: tuple[Any, ...]
    slots: frozenset[int]  # the positions in `params` that are names
    model: type[Model] | None  # the model a row builds (None: the rows as tuples)
    fields: tuple[str, ...]  # the model's attnames, in the select's order
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


_compiled: dict[tuple[str, Hashable, str], _Compiled] = {}


def _compile(build: Callable[..., QuerySet[Any]], names: tuple[str, ...]) -> _Compiled:
    stand_ins = {name: _STAND_IN - i for i, name in enumerate(names)}
    queryset = build(**stand_ins)
    query = queryset.query
    if query.select_related or query.annotation_select:
        raise ValueError("compiled_query builds neither related instances nor annotations")
    compiler = query.get_compiler(using=connection.alias)
    sql, params = compiler.as_sql()
    if any(str(value) in sql for value in stand_ins.values()):
        raise AssertionError("a value was written into the compiled statement, not passed as a parameter")
    by_value = {value: name for name, value in stand_ins.items()}
    # A value keeps the type the backend gave it (psycopg's Int4 for an integer field).
    slots = {i: (by_value[p], type(p)) for i, p in enumerate(params) if isinstance(p, int) and p in by_value}
    spec = tuple(slots.get(i, p) for i, p in enumerate(params))
    if {name for name, _type in slots.values()} != set(names):
        raise AssertionError(f"a value of {names} is not a parameter of the compiled statement")
    select = compiler.select
    klass = compiler.klass_info
    model, fields = None, ()
    if klass is not None and queryset._iterable_class is ModelIterable:
        first, last = klass["select_fields"][0], klass["select_fields"][-1] + 1
        model, fields = klass["model"], tuple(s[0].target.attname for s in select[first:last])
    converters = compiler.get_converters([s[0] for s in select[: compiler.col_count]])
    return _Compiled(
        sql, spec, frozenset(slots), model, fields, tuple((i, tuple(c), e) for i, (c, e) in converters.items())
    )


def compiled_query(key: str, shape: Hashable, build: Callable[..., QuerySet[Any]], /, **values: int) -> list[Any]:
    """The rows of `build(**values)`, the queryset's SQL compiled by the ORM once per process, key,
    `shape` and database alias, then run as is with each call's `values` as its parameters: the
    model's instances (as `QuerySet.__iter__` builds them, without select_related or
    annotations), or tuples for a `values_list()`.

    `values` are ints (ids, seqs) that the statement must take as parameters: `build` is called
    once with stand-ins for them, and anything it reads besides them (a limit, a setting, a
    list's length) must be in `shape`, which keys the cache with `key`."""
    cache_key = (key, shape, connection.alias)
    statement = _compiled.get(cache_key)
    if statement is None:
        statement = _compiled[cache_key] = _compile(build, tuple(values))
    params = [p[1](values[p[0]]) if i in statement.slots else p for i, p in enumerate(statement.params)]
    with server_cursor() as cursor:
        cursor.execute(statement.sql, params)
        rows = cursor.fetchall()
    if statement.converters:
        rows = [list(row) for row in rows]
        for row in rows:
            for i, functions, expression in statement.converters:
                value = row[i]
                for convert in functions:
                    value = convert(value, expression, connection)
                row[i] = value
    if statement.model is None:
        return [tuple(row) for row in rows]
    model, fields, alias = statement.model, statement.fields, connection.alias
    return [model.from_db(alias, fields, row[: len(fields)]) for row in rows]
