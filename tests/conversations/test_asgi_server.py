"""The chat turn through the production server: `scripts/serve.sh` (uvicorn, two worker
processes) in a subprocess, over real HTTP, against the test database and the scripted model;
and how that server stops (SIGTERM: the drain)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conversations.models import Message
from tests.conftest import ROOT, client_for, free_port, headers, new_conversation, wait_for
from tests.conversations.test_streaming import parse_sse


@pytest.mark.worker
def test_disconnect_mid_stream_then_retries_during_and_after(server, llm, school):
    """Over real HTTP: the client reads the first delta and hangs up; the turn completes in the
    server. A retry during the turn (possibly served by the other worker process) and one after
    it both get the reply, from one model call."""
    # The model holds its stream after two sentences until the retry is under way.
    llm.script(
        "chat", {"content": "Halves and thirds share sixths. So write both. Fractions in sixths.", "hold_after": 10}
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

    # The retry streams. Served by the process driving the turn, it follows the turn's feed and
    # its first event arrives while the model is held: the model is released then. Served by the
    # other process, it polls the database and shows nothing until the reply is stored, so the
    # model is released after a grace period instead.
    first_event = threading.Event()

    def retry_streamed() -> list[tuple[str, dict[str, Any]]]:
        lines: list[str] = []
        with httpx2.stream("POST", url, json=body, headers=headers(alice, Accept="text/event-stream"), timeout=60) as r:
            assert r.status_code == 200, r.read()
            for line in r.iter_lines():
                first_event.set()
                lines.append(line)
        return parse_sse("\n".join(lines).encode() + b"\n\n")

    with ThreadPoolExecutor(1) as pool:
        retry = pool.submit(retry_streamed)
        first_event.wait(timeout=3.0)
        llm.release()
        during = retry.result()
    reply = Message.objects.get(conversation_id=cid, role="tutor")
    assert during[0][0] == "message" and during[-1][0] == "done", during
    assert during[-1][1]["replayed"] is False and during[-1][1]["id"] == reply.pk
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
        other = httpx2.post(url, json={"content": "x", "client_message_id": "x"}, headers=headers(school["bob"]))
        replies_then = Message.objects.filter(conversation_id=cid, role="tutor").count()
        assert (first.result(), second.result()) == (201, 201)
    assert other.status_code == 404 and json.loads(other.content)["error"]["code"] == "not_found"
    assert replies_then == 0  # answered while the first turn was still streaming (not queued behind it)
    rows = list(Message.objects.filter(conversation_id=cid).order_by("seq").values_list("role", "content"))
    assert [r for r, _ in rows] == ["student", "tutor", "student", "tutor"]
    assert rows[0][1] == "question 1" and rows[2][1] == "question 2"


# --- Stopping: SIGTERM drains the server -------------------------------------------------------------


@contextmanager
def serving(worker_env: dict[str, str], log: Path, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """scripts/serve.sh in a subprocess with these variables, until it answers; stopped after."""
    port = free_port()
    full_env = {
        **worker_env,
        "RUN_ADDR": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
        "EMBEDDINGS_BACKEND": "none",
        "DB_STEP_THREADS": "4",
        "VENV": str(Path(worker_env.get("VIRTUAL_ENV", ROOT / ".venv"))),
        **env,
    }
    with log.open("wb") as out:
        proc = subprocess.Popen([str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=full_env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"

    def answering() -> bool:
        assert proc.poll() is None, log.read_text()
        try:
            return httpx2.get(f"{base}/api/v1/me/", timeout=1).status_code == 401
        except httpx2.TransportError:
            return False

    try:
        wait_for(answering, timeout=120, interval=0.05)  # a ready server returns at once
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(30)


def worker_processes(supervisor: int) -> list[int]:
    """The pids of uvicorn's worker processes under its supervisor (multiprocessing's spawned
    children, not its resource tracker)."""
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    return [int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


class SSEReader(threading.Thread):
    """Reads a turn's event stream in the background: `events` as they come, `first_delta` set
    at the first delta, `ended` once the response is over (cleanly or not: `failure`)."""

    def __init__(self, url: str, body: dict[str, Any], user: Any) -> None:
        super().__init__(daemon=True)
        self.url, self.body, self.user = url, body, user
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.first_delta = threading.Event()
        self.ended_at: float | None = None
        self.failure: BaseException | None = None

    def run(self) -> None:
        hdrs = headers(self.user, Accept="text/event-stream")
        try:
            with httpx2.stream("POST", self.url, json=self.body, headers=hdrs, timeout=60) as resp:
                assert resp.status_code == 200, resp.read()
                block: list[str] = []
                for line in resp.iter_lines():
                    if line:
                        block.append(line)
                        continue
                    fields = dict(item.split(": ", 1) for item in block)
                    block = []
                    self.events.append((fields["event"], json.loads(fields["data"])))
                    if fields["event"] == "delta":
                        self.first_delta.set()
        except BaseException as exc:  # a cut connection: what the drain must not do
            self.failure = exc
        finally:
            self.ended_at = time.monotonic()
            self.first_delta.set()


@pytest.mark.worker
def test_sigterm_ends_long_turns_with_a_retry_safe_error_and_refuses_new_requests(
    worker_env, llm, school, tmp_path, settings
):
    """SIGTERM to the production server (WEB_GRACEFUL_TIMEOUT=3, two worker processes, each
    signalled twice, as systemd stops a unit):
    - a request arriving during the drain is answered at once: 503 `server_shutting_down` in the
      envelope, `retry_safe`, with `Retry-After` (header and details), never left hanging;
    - a turn that ends within the timeout ends as usual (`done`);
    - a stream still running near the timeout ends with an `error` event (`server_shutting_down`,
      retry_safe, the student message's id) before the timeout, not with a cut connection; a
      request waiting for its turn's JSON gets the same error as a 503;
    - the server exits within the timeout, without a traceback;
    - the student's message is kept: its retry with the same client_message_id (here on the next
      server, this test's process) completes the turn at once (the stopping server released the
      conversation), with one student message and the reply to it.
    """
    graceful = 3.0
    slow = {"content": "Let us go through it slowly. " * 40, "stream_seconds": 60}
    llm.script("chat", slow, slow, {"content": "Halves make quarters.", "stream_seconds": 1.0})
    alice, bob, carol = school["alice"], school["bob"], school["carol"]
    log = tmp_path / "serve.log"
    with serving(worker_env, log, WEB_GRACEFUL_TIMEOUT=str(int(graceful))) as (base, proc):
        conversations = {name: new_conversation(base, school[name]) for name in ("alice", "bob", "carol")}

        def url(name: str) -> str:
            return f"{base}/api/v1/conversations/{conversations[name]}/messages/"

        question = {"content": "Why is 1/2 + 1/3 not 2/5?", "client_message_id": "m1"}
        long_stream = SSEReader(url("alice"), question, alice)
        long_stream.start()
        assert long_stream.first_delta.wait(20) and long_stream.failure is None
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(
                httpx2.post,
                url("bob"),
                json={"content": "And 2/3?", "client_message_id": "b1"},
                headers=headers(bob),
                timeout=60,
            )
            wait_for(lambda: len(llm.calls("chat")) == 2, timeout=20, interval=0.02)
            short_stream = SSEReader(
                url("carol"), {"content": "What is half of a half?", "client_message_id": "c1"}, carol
            )
            short_stream.start()
            assert short_stream.first_delta.wait(20)

            # As systemd stops a unit: SIGTERM to every process, so each worker process also
            # gets the one its supervisor passes on (the second must not cut the drain short).
            workers = worker_processes(proc.pid)
            assert len(workers) == 2
            proc.send_signal(signal.SIGTERM)
            for pid in workers:
                os.kill(pid, signal.SIGTERM)
            stopping = time.monotonic()

            def refused() -> httpx2.Response | None:
                # Answered normally until the worker processes got the signal (the supervisor
                # passes it on within half a second); then 503, never a hang. A worker process
                # with nothing in progress exits at once, and a connection it had just accepted
                # is cut: a client sends that request again (docs/api.md), and it reaches the
                # process still draining.
                try:
                    resp = httpx2.get(f"{base}/api/v1/me/", headers=headers(alice), timeout=graceful)
                except (httpx2.ReadError, httpx2.RemoteProtocolError, httpx2.ConnectError):
                    return None
                return resp if resp.status_code == 503 else None

            late: httpx2.Response = wait_for(refused, timeout=graceful, interval=0.05)
            assert time.monotonic() - stopping < graceful
            envelope = late.json()["error"]
            assert (envelope["code"], envelope["retry_safe"]) == ("server_shutting_down", True)
            assert int(late.headers["Retry-After"]) == envelope["details"]["retry_after_seconds"] >= 1
            assert late.headers["content-type"] == "application/json"

            long_stream.join(graceful + 5)
            short_stream.join(graceful + 5)
            cut_off = waiting.result(graceful + 5)
        proc.wait(graceful + 10)
        exited = time.monotonic()

    assert long_stream.failure is None and short_stream.failure is None
    assert [name for name, _ in short_stream.events][-1] == "done"
    names = [name for name, _ in long_stream.events]
    assert names[0] == "message" and "delta" in names and names[-1] == "error"
    stored = long_stream.events[0][1]
    error = long_stream.events[-1][1]["error"]
    assert (error["code"], error["retry_safe"]) == ("server_shutting_down", True)
    assert error["details"]["student_message_id"] == stored["id"]
    assert long_stream.ended_at is not None and long_stream.ended_at - stopping < graceful
    assert cut_off.status_code == 503 and cut_off.json()["error"]["code"] == "server_shutting_down"
    assert cut_off.json()["error"]["retry_safe"] is True and "Retry-After" in cut_off.headers
    assert exited - stopping < graceful + 2
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text

    # The retry, on the server that is up: the turn of the stored message completes at once.
    settings.TURN_WAIT_SECONDS = 2.0  # a conversation left claimed would answer 503 conversation_busy
    llm.script("chat", {"content": "Because thirds and halves are different sizes: use sixths."})
    retry = client_for(alice).post(f"/api/v1/conversations/{conversations['alice']}/messages/", question, format="json")
    assert retry.status_code == 201, retry.content
    assert retry.json()["student_message"]["id"] == stored["id"] and retry.json()["replayed"] is False
    assert retry.json()["reply"]["content"] == "Because thirds and halves are different sizes: use sixths."
    rows = Message.objects.filter(conversation_id=conversations["alice"]).order_by("seq")
    assert [(m.role, m.pk == stored["id"]) for m in rows] == [("student", True), ("tutor", False)]
