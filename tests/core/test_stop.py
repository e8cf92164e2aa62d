"""Stopping cleanly: `make run` (scripts/run_dev.sh) stopped with SIGTERM to its process group, as
a service manager or `kill -- -PGID` does, stops every process it started within its grace period
(STOP_SECONDS), and the task the worker was running finishes first (docs/operations.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Conversation
from memory.models import AIMemory
from tests.conftest import ROOT, free_port, wait_for
from tests.llm_server import DEFAULT_SUMMARY, ScriptedLLM

pytestmark = pytest.mark.worker

STOP_SECONDS = 20


def processes_with(needle: str, where: str = "cmdline") -> list[int]:
    """The live processes whose command line (or environment: `where="environ"`) contains `needle`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / where).read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_sigterm_to_the_group_stops_everything_in_time_and_the_running_task_finishes(
    worker_env: dict[str, str], llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any], tmp_path: Path
) -> None:
    """run_dev.sh in a process group of its own, its worker inside a summary that waits 4 s for the
    model. SIGTERM to the group: the worker's pool processes are not signalled themselves (none
    exits 'signal 15', none is started again), the summary is stored, and the group, the worker
    and the server are gone within STOP_SECONDS."""
    port = free_port()
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    env = {
        **worker_env,
        "VENV": sys.prefix,
        "RUN_ADDR": f"127.0.0.1:{port}",
        "STOP_SECONDS": str(STOP_SECONDS),
        "EMBEDDINGS_BACKEND": "none",
        # RedBeat's keys (with Redis) of this test's own.
        "CELERY_QUEUE_PREFIX": prefix,
        "WORKER_METRICS_DIR": str(tmp_path / "metrics"),
        # The worker's INFO lines: the test waits for its "ready." line.
        "WORKER_LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ROOT / "scripts" / "run_dev.sh")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    text = lambda: log.read_text(errors="replace")  # noqa: E731
    try:
        wait_for(lambda: proc.poll() is not None or " ready." in text(), timeout=180)
        wait_for(lambda: proc.poll() is not None or text().count("Application startup complete.") >= 2, timeout=180)
        assert proc.poll() is None, text()[-3000:]

        llm.script("summary", {"delay": 4.0, "content": json.dumps(DEFAULT_SUMMARY)})
        client = clients["alice"]
        cid = client.post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
        resp = client.post(
            f"/api/v1/conversations/{cid}/messages/",
            {"content": "1/2 + 1/3?", "client_message_id": "m1"},
            format="json",
        )
        assert resp.status_code == 201, resp.content
        assert client.post(f"/api/v1/conversations/{cid}/end/").status_code == 202
        wait_for(lambda: llm.calls("summary"), timeout=60)  # the worker is inside the model call

        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(STOP_SECONDS + 15)
        stopped_in = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    output = text()
    assert stopped_in < STOP_SECONDS, (stopped_in, output[-3000:])
    assert processes_with(f"CELERY_QUEUE_PREFIX={prefix}", where="environ") == []
    assert processes_with(f"--port {port}") == []
    assert "exited with 'signal 15" not in output and "Cold shutdown" not in output, output[-3000:]
    conversation = Conversation.objects.get(pk=cid)
    assert conversation.summary_status == "done", output[-3000:]
    assert AIMemory.objects.filter(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY).count() == 1
