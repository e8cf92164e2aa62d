"""Health for load balancers and orchestrators: `GET /health/live` and `GET /health/ready`.

Both answer JSON, without authentication, and show no data. They are exempt from the HTTPS
redirect (SECURE_REDIRECT_EXEMPT), CSRF (GET only) and the throttles (no DRF view).

- live: the process answers; touches nothing else. 200 {"status": "ok"}.
- ready: each check by name, "ok" or why it failed; 200 when all pass, else 503. Cheap enough to
  poll every second: `SELECT 1` on the database (PostgreSQL: on a connection of its own, with
  connect and statement timeouts, so that an outage is answered within seconds), a Redis PING
  with a short timeout (or the filesystem broker's folder), the queues' consumers, and the other
  checks of HEALTH_READY_CHECKS (the embedder: loaded in this process, where one is configured).
  A check may also warn ("warning: why"): an operator must act, but this node serves as well as
  any, so the answer stays 200 (a queue that no worker reads). Whether the migrations are
  applied is read from the database until they are, then remembered for the process's life (a
  deployment migrates before it starts new processes; a process never sees them unapplied again).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import redis
from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.db import connection_release, db_thread

logger = logging.getLogger(__name__)

# A check that takes longer than this has failed: a balancer polling each second must not queue.
CHECK_TIMEOUT_SECONDS = 0.5

_migrations_applied = False


class CheckFailed(Exception):
    """A readiness check failed; the message says why (no data, no secret)."""


# PostgreSQL's check connects on its own, bounded by this: libpq's smallest connect_timeout (in
# whole seconds, at least 2), which also bounds the statement. A balancer's check timeout is
# usually 5 s or more.
DATABASE_CHECK_SECONDS = 2


class CheckWarning(Exception):
    """A readiness check warns: the node is ready, something else needs an operator; the message
    says what (no data, no secret)."""


def database() -> None:
    """PostgreSQL: `SELECT 1` on a connection of the check's own, outside the pool, within
    DATABASE_CHECK_SECONDS to connect and as much to answer; a pool waiting on a server that is
    down (DB_POOL_TIMEOUT_SECONDS) or exhausted by a burst never delays the answer. SQLite: on
    the process's connection (a file: nothing to wait on)."""
    if connection.vendor == "postgresql":
        _postgresql_select_1()
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        raise CheckFailed(f"unreachable: {type(exc).__name__}") from exc
    finally:
        connection_release()


def _postgresql_select_1() -> None:
    import psycopg

    params = connection.get_connection_params()
    for django_only in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(django_only, None)
    timeout_ms = DATABASE_CHECK_SECONDS * 1000
    options = " ".join(filter(None, [params.pop("options", ""), f"-c statement_timeout={timeout_ms}"]))
    try:
        with psycopg.connect(**params, connect_timeout=DATABASE_CHECK_SECONDS, options=options, autocommit=True) as own:
            own.execute("SELECT 1")
    except psycopg.Error as exc:
        raise CheckFailed(f"unreachable: {type(exc).__name__}") from exc


def migrations() -> None:
    global _migrations_applied
    if _migrations_applied:
        return
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        raise CheckFailed(f"unreadable: {type(exc).__name__}") from exc
    finally:
        connection_release()
    if plan:
        raise CheckFailed(f"{len(plan)} migrations not applied")
    _migrations_applied = True


@lru_cache(maxsize=4)
def _redis(url: str) -> redis.Redis:
    # One client (and its connection pool) per URL and process: a poll each second reuses its
    # connection instead of opening one.
    return redis.Redis.from_url(url, socket_timeout=CHECK_TIMEOUT_SECONDS, socket_connect_timeout=CHECK_TIMEOUT_SECONDS)


def _ping(url: str) -> None:
    try:
        _redis(url).ping()
    except redis.RedisError as exc:
        raise CheckFailed(f"unreachable: {type(exc).__name__}") from exc


def _folder_writable(folder: str | Path) -> None:
    if not os.access(folder, os.W_OK):
        raise CheckFailed("folder not writable")


def broker() -> None:
    url: str = settings.CELERY_BROKER_URL
    if url.startswith("redis"):
        _ping(url)
    else:
        _folder_writable(str(settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in") or settings.BROKER_DIR))


def cache() -> None:
    if settings.CACHE_URL:
        _ping(settings.CACHE_URL)
    else:
        _folder_writable(str(settings.CACHES["default"]["LOCATION"]))


def queues() -> None:
    """A warning naming each queue that no worker reads, with its oldest task's age (its tasks
    would wait for ever: core.consumers)."""
    from core.metrics_collector import queues_without_consumer

    try:
        abandoned = queues_without_consumer()
    except (redis.RedisError, OSError) as exc:
        raise CheckFailed(f"unreadable: {type(exc).__name__}") from exc
    if abandoned:
        raise CheckWarning("no worker reads " + ", ".join(str(queue) for queue in abandoned))


CHECKS: dict[str, Callable[[], None]] = {
    "database": database,
    "migrations": migrations,
    "broker": broker,
    "cache": cache,
    "queues": queues,
}
# A check skipped when the one it needs has failed (it would fail the same way, after its own wait).
NEEDS = {"migrations": "database", "queues": "broker", "safety_alerts": "database"}


def ready_checks() -> dict[str, Callable[[], object]]:
    """The core checks, then HEALTH_READY_CHECKS ({name: dotted path}); an app's check returns
    None when it does not apply here (nothing configured), and raises CheckFailed otherwise."""
    checks: dict[str, Callable[[], object]] = dict(CHECKS)
    for name, path in settings.HEALTH_READY_CHECKS.items():
        checks[name] = import_string(path)
    return checks


def readiness() -> tuple[bool, dict[str, str]]:
    """(all passed, {check: "ok" | "skipped" | "warning: why" | "failed: why"}); a check is
    skipped when the one it needs (NEEDS) did not pass, and a warning does not fail readiness."""
    results: dict[str, str] = {}
    for name, check in ready_checks().items():
        needed = NEEDS.get(name)
        if needed and results.get(needed, "").startswith("failed"):
            results[name] = "skipped"
            continue
        started = time.monotonic()
        try:
            answer = check()
        except CheckFailed as exc:
            results[name] = f"failed: {exc}"
        except CheckWarning as exc:
            results[name] = f"warning: {exc}"
        except Exception as exc:  # a check that breaks is a failed check, never a 500
            logger.warning("health: the %s check raised %s", name, type(exc).__name__, exc_info=exc)
            results[name] = f"failed: {type(exc).__name__}"
        else:
            results[name] = "skipped" if answer is False else "ok"
        elapsed = time.monotonic() - started
        if elapsed > CHECK_TIMEOUT_SECONDS:
            logger.warning("health: the %s check took %.2f s", name, elapsed)
    ok = all(not value.startswith("failed") for value in results.values())
    return ok, results


@never_cache
@require_GET
def live(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def ready(request: HttpRequest) -> JsonResponse:
    ok, results = readiness()
    return JsonResponse({"status": "ok" if ok else "unavailable", "checks": results}, status=200 if ok else 503)


class OperationsEndpoints:
    """The first middleware: answers /health/live, /health/ready and /metrics itself, before the
    HTTPS redirect, the ALLOWED_HOSTS check, sessions, CSRF, authentication and throttles (a
    balancer polls a node by its address, over plain HTTP, with no credentials). Any other
    request goes on untouched. The same views are in tutor.urls, for `reverse`."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[..., object]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> object:
        view = _endpoint(request.path_info)
        if self.is_async:
            return self._acall(request, view)
        return view(request) if view else self.get_response(request)

    async def _acall(self, request: HttpRequest, view: Callable[[HttpRequest], HttpResponse] | None) -> object:
        if view is None:
            return await self.get_response(request)  # type: ignore[misc]
        if view is live:
            return view(request)
        if view is ready:
            # On threads of its own: during a database outage every database thread may be
            # waiting on the pool (DB_POOL_TIMEOUT_SECONDS a step), and the balancer's check
            # must not queue behind them; its database check needs no pooled connection.
            return await _on_health_thread(view, request)
        # On the database threads (core.db.db_thread), not in the one thread that every
        # other synchronous view of this process shares: a busy server still answers its
        # scraper at once.
        return await db_thread(view, request)


# Two: a balancer polling each node every second, and one more poll while one is answered.
_health_threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="health")


async def _on_health_thread(view: Callable[[HttpRequest], HttpResponse], request: HttpRequest) -> HttpResponse:
    def run() -> HttpResponse:
        try:
            return view(request)
        finally:
            connection_release()

    return await asyncio.get_running_loop().run_in_executor(_health_threads, contextvars.copy_context().run, run)


def _endpoint(path: str) -> Callable[[HttpRequest], HttpResponse] | None:
    if path == "/health/live":
        return live
    if path == "/health/ready":
        return ready
    if path == "/metrics":
        from core.metrics_views import metrics_view

        return metrics_view
    return None
