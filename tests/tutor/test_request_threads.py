"""tutor.request_threads: each request's thread-sensitive work on one thread, kept for reuse."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from django.core.signals import request_finished
from django.test import override_settings

from tutor import request_threads
from tutor.request_threads import ASGIHandler


async def get(handler: ASGIHandler, path: str, query: str = "") -> tuple[int, dict[str, Any]]:
    """One GET through the handler as an ASGI server calls it: the status and the JSON body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    sent: list[dict[str, Any]] = []
    bodies = [{"type": "http.request", "body": b"", "more_body": False}]
    connected = asyncio.Event()  # the client stays: Django stops listening once it has answered

    async def receive() -> dict[str, Any]:
        if bodies:
            return bodies.pop()
        await connected.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await handler(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


@pytest.fixture
def finished_on() -> Any:
    """The threads `request_finished`'s receivers ran on, one per request."""
    threads: list[int] = []

    def receiver(**kwargs: Any) -> None:
        threads.append(threading.get_ident())

    request_finished.connect(receiver, weak=False)
    yield threads
    request_finished.disconnect(receiver)


@override_settings(ROOT_URLCONF="tests.tutor.request_threads_urls")
def test_requests_one_after_another_run_on_one_kept_thread(finished_on, monkeypatch):
    started: list[str] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    handler = ASGIHandler()

    async def five() -> list[int]:
        return [(await get(handler, "/probe/"))[1]["thread"] for _ in range(5)]

    views = asyncio.run(five())
    assert len(set(views)) == 1
    assert finished_on == views  # the request's own thread sent its request_finished
    assert views[0] != threading.get_ident()
    # At most the first request started a thread (none if one was kept already), no join thread.
    assert len(started) <= 1, started
    assert all(name.startswith(request_threads.THREAD_NAME_PREFIX) for name in started)


@override_settings(ROOT_URLCONF="tests.tutor.request_threads_urls")
def test_requests_at_the_same_time_each_have_a_thread_of_their_own(finished_on):
    handler = ASGIHandler()

    async def two() -> list[tuple[int, dict[str, Any]]]:
        return list(await asyncio.gather(*(get(handler, "/probe/", "together=1") for _ in range(2))))

    answers = asyncio.run(two())  # each view waits for the other: on one thread they would never meet
    assert [status for status, _ in answers] == [200, 200]
    views = {body["thread"] for _, body in answers}
    assert len(views) == 2
    assert set(finished_on) == views


def test_idle_threads_beyond_the_kept_number_are_shut_down(monkeypatch):
    pool = request_threads._Threads()
    monkeypatch.setattr(request_threads, "IDLE_KEPT", 1)
    first, second = pool.borrow(), pool.borrow()
    assert first.submit(threading.get_ident).result() != second.submit(threading.get_ident).result()
    pool.give_back(first)
    pool.give_back(second)  # one idle is kept: this one is shut down
    assert pool.borrow() is first
    with pytest.raises(RuntimeError):
        second.submit(threading.get_ident)
    assert pool.started == 2


def test_a_request_that_ends_during_one_of_its_calls_keeps_its_thread_from_the_next():
    pool = request_threads.threads
    leaving, done = request_threads._RequestThread(), threading.Event()
    still_running = leaving.submit(done.wait, 10)
    busy = leaving._executor
    leaving.release()  # its client left while the call runs
    assert busy not in pool._idle
    following = request_threads._RequestThread()
    assert following.submit(threading.get_ident).result(timeout=10) != threading.get_ident()
    assert not still_running.done()  # the next request did not wait behind it
    following.release()
    done.set()
    assert still_running.result(timeout=10) is True  # the call it had ran to its end
    with pytest.raises(RuntimeError):  # and its thread takes no more
        busy.submit(threading.get_ident)
