"""The chat turn through the production server: `scripts/serve.sh` (uvicorn, two worker
processes) in a subprocess, over real HTTP, against the test database and the scripted model."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest
from rest_framework.authtoken.models import Token

from conversations.models import Message
from tests.conftest import ROOT, wait_for
from tests.conversations.test_streaming import parse_sse
from tests.llm_server import ScriptedLLM


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(worker_env: dict[str, str], llm: ScriptedLLM, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "serve.log"
    env = {
        **worker_env,
        "RUN_ADDR": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "EMBEDDINGS_BACKEND": "none",
        "DB_STEP_THREADS": "4",  # the turn's database steps on their thread pool, as in production
        "VENV": str(Path(worker_env.get("VIRTUAL_ENV", ROOT / ".venv"))),
    }
    with log.open("wb") as out:
        proc = subprocess.Popen([str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx2.get(f"{base}/api/v1/me/", timeout=1).status_code == 401:
                    break
            except httpx2.TransportError:
                time.sleep(0.2)
        else:
            raise AssertionError(f"server did not start:\n{log.read_text()}")
        yield base
    finally:
        proc.terminate()
        proc.wait(30)
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text
        # Each worker process warmed up before accepting connections (the ASGI lifespan).
        assert text.count("chat model: scripted-tutor at") == 2, text


def headers(user: Any, **extra: str) -> dict[str, str]:
    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}", **extra}


def new_conversation(base: str, user: Any) -> int:
    resp = httpx2.post(f"{base}/api/v1/conversations/", json={"subject": "Maths"}, headers=headers(user))
    assert resp.status_code == 201, resp.text
    return int(resp.json()["id"])


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
