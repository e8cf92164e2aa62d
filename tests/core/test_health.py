"""/health/live and /health/ready: JSON, no authentication, a 503 naming the check that failed."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import OperationalError, connection
from django.test import Client

from core import health
from safety import unrouted
from tests.conftest import free_port


@pytest.fixture
def anonymous() -> Client:
    # A balancer polls a node by its address: no credentials, a Host no one listed.
    return Client(HTTP_HOST="10.1.2.3:8000")


def test_live_answers_without_the_database(anonymous):
    """/health/live answers 200 {"status": "ok"} without the database (this test may not use it:
    a query would raise)."""
    resp = anonymous.get("/health/live")
    assert resp.status_code == 200
    assert resp.json() == {"status": "ok"}


@pytest.mark.django_db
def test_ready_passes_every_check_and_then_reads_only_select_1(anonymous, settings, django_assert_max_num_queries):
    """With the database migrated and the broker and cache up, /health/ready answers 200 with
    each check "ok" (the embedder "skipped": recall is lexical here); once the migrations have
    been seen applied, a poll costs one query."""
    health._migrations_applied = False
    unrouted._last_check = None
    resp = anonymous.get("/health/ready")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["status"] == "ok"
    # No worker runs here: every queue is named in a warning, which leaves the node ready
    # (tests/core/test_queue_consumers.py).
    assert body["checks"].pop("queues").startswith("warning: no worker reads ")
    # Nor any beat (tests/core/test_beat_outage.py); without Redis, Celery's own scheduler: skipped.
    scheduler = body["checks"].pop("scheduler")
    assert scheduler == "skipped" or scheduler.startswith("warning: no scheduler ran"), scheduler
    assert body["checks"] == {
        "database": "ok",
        "migrations": "ok",
        "broker": "ok",
        "cache": "ok",
        "embedder": "skipped",
        "safety_alerts": "ok",
    }
    with django_assert_max_num_queries(1) as captured:
        assert anonymous.get("/health/ready").status_code == 200
    # PostgreSQL's check runs on a connection of its own, not on Django's.
    expected = [] if connection.vendor == "postgresql" else ["SELECT 1"]
    assert [q["sql"] for q in captured.captured_queries] == expected


class _DeadConnection:
    """A SQLite connection whose file is gone: every cursor fails."""

    vendor = "sqlite"

    def cursor(self) -> Any:
        raise OperationalError("unable to open database file")


@pytest.mark.django_db
def test_ready_fails_when_the_database_is_down(anonymous, monkeypatch):
    """A database that cannot be reached: 503, the database check failed, the migrations
    check skipped (not tried again against a dead server)."""
    if connection.vendor == "postgresql":
        # Nothing listens there: refused at once.
        monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
        monkeypatch.setitem(connection.settings_dict, "PORT", str(free_port()))
    else:
        monkeypatch.setattr(health, "connection", _DeadConnection())
    resp = anonymous.get("/health/ready")
    assert resp.status_code == 503
    checks = resp.json()["checks"]
    assert checks["database"] == "failed: unreachable: OperationalError"
    assert checks["migrations"] == "skipped"
    assert resp.json()["status"] == "unavailable"


@pytest.fixture
def silent_server() -> Iterator[int]:
    """The port of a server that accepts TCP connections and never says a word, as a database
    host behind a dead network path or a frozen PostgreSQL looks to a client."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


@pytest.mark.postgresql_only
@pytest.mark.django_db
def test_ready_answers_while_the_database_does_not(anonymous, monkeypatch, silent_server):
    """A PostgreSQL host that accepts the connection and never answers (the process's own
    connection still open, as a pool's would be): /health/ready answers 503 with the database
    check failed, after its own connect timeout, instead of reporting the open connection "ok"
    or waiting on the pool."""
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(silent_server))
    resp = anonymous.get("/health/ready")
    assert resp.status_code == 503
    checks = resp.json()["checks"]
    assert checks["database"] == "failed: unreachable: ConnectionTimeout", checks
    assert checks["migrations"] == "skipped"


@pytest.mark.django_db
def test_ready_fails_when_the_broker_is_down(anonymous, settings):
    """A Redis broker on a closed port: 503, within the check's short timeout."""
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{free_port()}/0"
    resp = anonymous.get("/health/ready")
    assert resp.status_code == 503
    assert resp.json()["checks"]["broker"].startswith("failed: unreachable")
    assert resp.json()["checks"]["database"] == "ok"


@pytest.mark.django_db
def test_ready_fails_when_the_local_embedder_is_not_loaded(anonymous, settings, monkeypatch):
    """EMBEDDINGS_BACKEND=local with the model not loaded in this process: 503."""
    from memory.search import embeddings

    settings.EMBEDDINGS_BACKEND = "local"
    monkeypatch.setattr(embeddings.LocalEmbedder, "_model", None)
    monkeypatch.setattr(embeddings.LocalEmbedder, "_query_model", None)
    resp = anonymous.get("/health/ready")
    assert resp.status_code == 503
    assert resp.json()["checks"]["embedder"] == "failed: the local model is not loaded"


@pytest.mark.django_db
def test_health_is_exempt_from_authentication_https_and_the_host_check(settings):
    """In production (HTTPS redirect on, only the public host allowed), a balancer's plain-HTTP
    poll by address is answered, without credentials, CSRF token or session."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["tutor.example.org"]
    client = Client(HTTP_HOST="10.1.2.3:8000", enforce_csrf_checks=True)
    assert client.get("/health/live").status_code == 200
    assert client.get("/health/ready").status_code == 200
    # Everything else is still redirected to HTTPS.
    assert Client(HTTP_HOST="tutor.example.org").get("/api/v1/me/").status_code == 301


@pytest.mark.django_db(transaction=True)
def test_ready_answers_while_every_database_thread_waits(monkeypatch, settings):
    """Through the ASGI middleware, with every database-step thread of the process held (as
    each waits on the pool while the database is down), /health/ready is still answered: it
    runs on threads of its own, not queued behind them."""
    from asgiref.sync import async_to_sync
    from django.test import RequestFactory

    from core import db

    settings.DB_STEP_THREADS = 2
    monkeypatch.setattr(db, "_executor", None)
    release = threading.Event()
    held = threading.Barrier(settings.DB_STEP_THREADS + 1)

    def hold() -> None:
        held.wait()
        release.wait()

    async def get_response(request: Any) -> Any:
        raise AssertionError("answered by the middleware")

    async def poll() -> Any:
        holders = [asyncio.ensure_future(db.db_thread(hold)) for _ in range(settings.DB_STEP_THREADS)]
        await asyncio.get_running_loop().run_in_executor(None, held.wait)
        try:
            # Far past an answer: only a check queued behind the held threads reaches it.
            answered: Any = health.OperationsEndpoints(get_response)(request)
            return await asyncio.wait_for(answered, timeout=60)
        finally:
            release.set()
            await asyncio.gather(*holders)

    request = RequestFactory().get("/health/ready", HTTP_HOST="10.1.2.3:8000")
    response = async_to_sync(poll)()
    assert response.status_code in (200, 503)
    assert "database" in json.loads(response.content)["checks"]
