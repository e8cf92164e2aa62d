"""The chat turn through the production server: `scripts/serve.sh` (uvicorn, two worker
processes) in a subprocess, over real HTTP, against the test database and the scripted model."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from conversations.models import Message
from tests.conftest import headers, new_conversation, wait_for
from tests.conversations.test_streaming import parse_sse


@pytest.mark.worker
def test_disconnect_mid_stream_then_retries_during_and_after(server, llm, school):
    """Over real HTTP: the client reads the first delta and hangs up; the turn completes in the
    server. A retry during the turn (possibly served by the other worker process) and one after
    it both get the reply, from one model call."""
    llm.script(
        "chat", {"content": "Halves and thirds share sixths, so write both fractions in sixths.", "stream_seconds": 1.5}
    )
    alice = school["alice"]
    cid = new_conversation(server, alice)
    url = f"{server}/api/v1/conversations/{cid}/messages/"
    body = {"content": "How do I add 1/2 and 1/3?", "client_message_id": "m1"}
    seen: list[str] = []
    with httpx2.stream("POST", url, json=body, headers=headers(alice, Accept="text/event-stream")) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            seen.append(line)
            if line == "event: delta":
                break
    assert seen[0] == "event: message"

    during = httpx2.post(url, json=body, headers=headers(alice), timeout=30)
    assert during.status_code == 201, during.text
    assert during.json()["replayed"] is False
    reply = Message.objects.get(conversation_id=cid, role="tutor")
    assert during.json()["reply"]["id"] == reply.pk
    after = httpx2.post(url, json=body, headers=headers(alice, Accept="text/event-stream"), timeout=30)
    events = parse_sse(after.content)
    assert [k for k, _ in events] == ["message", "delta", "done"]
    assert events[-1][1]["replayed"] is True and events[-1][1]["id"] == reply.pk
    assert len(llm.calls("chat")) == 1


@pytest.mark.worker
def test_concurrent_sends_are_serialised_and_others_get_404_at_once(server, llm, school):
    """Two sends to one conversation at once, on the real server: both stored, in order, each
    reply after its message. Meanwhile another student's send gets its 404 without waiting."""
    # Long enough that a loaded machine still answers the other student's 404 mid-stream.
    llm.stream_seconds = (2.0, 2.0)
    alice = school["alice"]
    cid = new_conversation(server, alice)
    url = f"{server}/api/v1/conversations/{cid}/messages/"

    def go(n: int) -> int:
        body = {"content": f"question {n}", "client_message_id": f"m{n}"}
        return httpx2.post(url, json=body, headers=headers(alice), timeout=30).status_code

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(go, 1)
        wait_for(lambda: Message.objects.filter(conversation_id=cid).exists(), timeout=10, interval=0.02)
        second = pool.submit(go, 2)
        started = time.monotonic()
        other = httpx2.post(url, json={"content": "x", "client_message_id": "x"}, headers=headers(school["bob"]))
        elapsed = time.monotonic() - started
        replies_then = Message.objects.filter(conversation_id=cid, role="tutor").count()
        assert (first.result(), second.result()) == (201, 201)
    assert other.status_code == 404 and json.loads(other.content)["error"]["code"] == "not_found"
    assert replies_then == 0 and elapsed < 2.0  # answered while the first turn was still streaming
    rows = list(Message.objects.filter(conversation_id=cid).order_by("seq").values_list("role", "content"))
    assert [r for r, _ in rows] == ["student", "tutor", "student", "tutor"]
    assert rows[0][1] == "question 1" and rows[2][1] == "question 2"
