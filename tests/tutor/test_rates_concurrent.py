"""Throttles under concurrency: requests recorded and decided in one atomic step, so that a burst
in flight at once never gets more than the rate through, whatever the cache and however many
server processes take it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from django.utils import timezone

from conversations.models import Conversation
from core.throttles import SendRateThrottle
from tests.conftest import headers
from tests.tutor.test_throttles import use_cache

BURST, IN_FLIGHT, RATE = 50, 10, 30


def burst(fn: Any) -> list[Any]:
    """`fn(i)` for i in range(BURST), IN_FLIGHT at a time, the first IN_FLIGHT released together."""
    barrier = threading.Barrier(IN_FLIGHT)

    def go(i: int) -> Any:
        if i < IN_FLIGHT:
            barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        return list(pool.map(go, range(BURST)))


@dataclass
class _Request:
    user: Any


@pytest.mark.parametrize("kind", ["locmem", "files", "redis"])
def test_a_burst_gets_exactly_the_rate_through(school, settings, tmp_path, kind):
    """50 sends of one user at 30/minute, 10 in flight: exactly 30 allowed, each refused one told
    how long to wait (within the minute); another user's bucket is untouched."""
    use_cache(settings, kind, tmp_path)
    settings.THROTTLE_SEND_RATE = f"{RATE}/minute"

    def attempt(_: int) -> tuple[bool, float | None]:
        throttle = SendRateThrottle()
        allowed = throttle.allow_request(_Request(school["alice"]), None)
        return allowed, throttle.wait()

    outcomes = burst(attempt)
    assert sum(allowed for allowed, _ in outcomes) == RATE
    assert all(wait is not None and 0 < wait <= 60 for allowed, wait in outcomes if not allowed)
    assert SendRateThrottle().allow_request(_Request(school["bob"]), None)


@pytest.fixture
def rated_env(worker_env: dict[str, str]) -> dict[str, str]:
    """The server's environment (read by the `server` fixture, which then starts one of its own):
    the production rate, on the suite's Redis."""
    worker_env["THROTTLE_SEND_RATE"] = f"{RATE}/minute"
    return worker_env


def test_class_asks_and_sends_in_flight_on_the_server_stop_at_the_rate(rated_env, server, school):
    """Through the production server (two processes, Redis): a teacher's 50 questions about a
    class at 30/minute with 10 in flight get exactly 30 answers and 20 `throttled`; a student's
    50 sends over ten conversations likewise get exactly 30 replies."""
    teacher, alice = school["teacher_a"], school["alice"]
    url = f"{server}/api/v1/classrooms/{school['class_a'].pk}/ask/"
    as_teacher, as_alice = headers(teacher), headers(alice)  # read here: the threads hold no connection

    def ask(i: int) -> int:
        resp = httpx2.post(
            url, json={"question": f"Who struggles with fractions? ({i})"}, headers=as_teacher, timeout=60
        )
        assert resp.status_code in (200, 429), resp.text
        if resp.status_code == 429:
            assert resp.json()["error"]["code"] == "throttled" and int(resp.headers["Retry-After"]) > 0
        return resp.status_code

    asked = burst(ask)
    assert (asked.count(200), asked.count(429)) == (RATE, BURST - RATE)

    # Open side by side (the API's start ends the student's open one): one turn at a time each.
    conversations = [
        Conversation.objects.create(student=alice, subject=f"Sums {n}", last_activity_at=timezone.now()).pk
        for n in range(IN_FLIGHT)
    ]

    def send(i: int) -> int:
        body = {"content": f"What is {i} + 1?", "client_message_id": f"m{i}"}
        resp = httpx2.post(
            f"{server}/api/v1/conversations/{conversations[i % IN_FLIGHT]}/messages/",
            json=body,
            headers=as_alice,
            timeout=120,
        )
        assert resp.status_code in (201, 429), resp.text
        return resp.status_code

    sent = burst(send)
    assert (sent.count(201), sent.count(429)) == (RATE, BURST - RATE)
