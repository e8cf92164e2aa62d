"""The queues and the scheduler (docs/operations.md, "Queues, workers and the scheduler"): each
task's queue, beat's tasks sent to theirs, summaries stored while a backlog of memory work waits
on its own queue, and one beat sending the periodic tasks however many start.

The tests on Redis use queue names and RedBeat keys under a prefix of their own
(CELERY_QUEUE_PREFIX), so they share the test Redis with the other tests."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.utils import timezone
from rest_framework.test import APIClient

from conversations.models import Conversation
from core.background import beat_schedule
from core.metrics_collector import queue_names
from memory.models import AIMemory
from tests.conftest import ROOT, Worker, terminate, wait_for
from tests.llm_server import ScriptedLLM
from tutor.celery import app, queues, route

ON_REDIS = django_settings.CELERY_BROKER_URL.startswith("redis")
needs_redis = pytest.mark.skipif(not ON_REDIS, reason="the queues' and the scheduler's tests need REDIS_URL")

EXPECTED = {
    "conversations.tasks.conversation_summarize": "summaries",
    "conversations.tasks.summaries_sweep": "summaries",
    "memory.tasks.conversation_summarize": "summaries",
    "memory.tasks.summaries_sweep": "summaries",
    "conversations.tasks.conversations_end_idle": "summaries",
    "memory.tasks.memory_facts_extract": "memory",
    "memory.tasks.memory_consolidate": "memory",
    "memory.tasks.memories_consolidate_due": "memory",
    "memory.tasks.memory_embed": "memory",
    "memory.tasks.embeddings_sweep": "memory",
    "memory.tasks.student_reindex": "memory",
    "conversations.tasks.file_extract": "files",
    "conversations.tasks.files_sweep": "files",
    "learning.tasks.quiz_attempt_grade": "default",
    "safety.tasks.delivery_send": "default",
    "safety.tasks.flag_alert": "default",
}


@pytest.fixture
def prefixed(settings: Any) -> Iterator[str]:
    """Queue names under a prefix of this test's (the four queues, not CELERY_QUEUE's one)."""
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    settings.CELERY_QUEUE_PREFIX = prefix
    before = app.conf.task_default_queue
    app.conf.task_default_queue = f"{prefix}default"
    yield prefix
    app.conf.task_default_queue = before


def queue_of(name: str) -> str:
    return str(app.amqp.router.route({}, name)["queue"].name)


def test_each_task_goes_to_its_queue_and_every_task_to_one_of_the_four(prefixed: str) -> None:
    """Summaries (and their sweep, and the end of idle conversations that starts them), memory
    work and file extraction each have their queue; any other task goes to `default`."""
    app.loader.import_default_modules()
    for name, queue in EXPECTED.items():
        assert name in app.tasks, name
        assert queue_of(name) == prefixed + queue, name
    names = {prefixed + q for q in ("default", "summaries", "memory", "files")}
    assert set(queues()) == names
    assert set(queue_names()) == names  # what /metrics watches
    for name in app.tasks:
        if not name.startswith("celery."):
            assert queue_of(name) in names, name
    assert queue_of("a.task.nobody.listed") == f"{prefixed}default"


def test_a_default_queue_named_by_celery_queue_takes_every_task(prefixed: str) -> None:
    """CELERY_QUEUE=<name> (the test workers, a host that wants one queue): every task goes there."""
    app.conf.task_default_queue = "one-queue"
    assert route("conversations.tasks.conversation_summarize", (), {}, {}) == {"queue": "one-queue"}
    assert queue_of("conversations.tasks.file_extract") == "one-queue"
    assert queues() == ["one-queue"]


@needs_redis
def test_beat_sends_each_periodic_task_to_its_queue(prefixed: str) -> None:
    """Beat sends with `send_task`, routed like any task: each periodic task's message is on its
    queue in Redis (the broker's list named after the queue)."""
    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    schedule = beat_schedule()
    try:
        for entry in schedule.values():
            app.send_task(entry["task"])
        found: dict[str, list[str]] = {}
        for queue in ("default", "summaries", "memory", "files"):
            for raw in client.lrange(prefixed + queue, 0, -1):
                found.setdefault(queue, []).append(json.loads(raw)["headers"]["task"])
    finally:
        client.delete(*(prefixed + q for q in ("default", "summaries", "memory", "files")))
    assert sorted(t for tasks in found.values() for t in tasks) == sorted(e["task"] for e in schedule.values())
    summaries = ["conversations.tasks.conversations_end_idle", "conversations.tasks.summaries_sweep"]
    assert sorted(found["summaries"]) == summaries
    assert sorted(found["memory"]) == ["memory.tasks.embeddings_sweep", "memory.tasks.memories_consolidate_due"]
    assert found["files"] == ["conversations.tasks.files_sweep"]
    assert all(not t.startswith("memory.") for t in found["default"])


# --- A backlog of memory work does not delay summaries -------------------------------------------


def split_env(worker_env: dict[str, str], prefix: str) -> dict[str, str]:
    """A worker environment with the four queues under `prefix` (no CELERY_QUEUE)."""
    env = {k: v for k, v in worker_env.items() if k != "CELERY_QUEUE"}
    return {**env, "CELERY_QUEUE_PREFIX": prefix}


@needs_redis
@pytest.mark.worker
def test_summary_is_stored_while_a_backlog_of_memory_work_waits(
    worker_env: dict[str, str],
    prefixed: str,
    llm: ScriptedLLM,
    clients: dict[str, APIClient],
    school: dict[str, Any],
) -> None:
    """Two workers, one on `summaries`, one on `memory`. Eight fact extractions, each waiting 2 s
    for the model, are queued first; then a conversation ends. Its summary is stored while most of
    the extractions are still on the memory queue, not after them."""
    env = split_env(worker_env, prefixed)
    memory_worker = Worker(llm, f"{prefixed}memory", env).start()
    summaries_worker = Worker(llm, f"{prefixed}summaries", env).start()
    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    try:
        llm.script("extraction", *({"delay": 2.0, "content": json.dumps({"facts": []})} for _ in range(8)))
        now = timezone.now()
        notes = [
            AIMemory.objects.create(
                student=school["alice"], kind="note", title=f"note {i}", content=f"Fractions {i}.", created_at=now
            )
            for i in range(8)
        ]
        for note in notes:
            app.send_task("memory.tasks.memory_facts_extract", args=[note.pk])
        wait_for(lambda: llm.calls("extraction"))  # the memory worker is busy with the first

        resp = clients["alice"].post("/api/v1/conversations/", {"subject": "Maths"}, format="json")
        cid = resp.json()["id"]
        resp = clients["alice"].post(
            f"/api/v1/conversations/{cid}/messages/",
            {"content": "What is 1/2 + 1/3?", "client_message_id": "m1"},
            format="json",
        )
        assert resp.status_code == 201, resp.content
        assert clients["alice"].post(f"/api/v1/conversations/{cid}/end/").status_code == 202
        wait_for(lambda: Conversation.objects.get(pk=cid).summary_status == "done", timeout=30)
        waiting = client.llen(f"{prefixed}memory")
        asked = len(llm.calls("extraction"))
    finally:
        summaries_worker.stop()
        memory_worker.stop()
        client.delete(*(prefixed + q for q in ("default", "summaries", "memory", "files")))
    assert AIMemory.objects.filter(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY).count() == 1
    # The backlog is still there: at most a few of the eight extractions were asked for.
    assert waiting >= 4 and asked <= 4, (waiting, asked)
    assert "Task memory.tasks.memory_facts_extract[" not in summaries_worker.log_text()
    assert "Task conversations.tasks.conversation_summarize[" not in memory_worker.log_text()
    assert "Task conversations.tasks.conversation_summarize[" in summaries_worker.log_text()


# --- One scheduler -------------------------------------------------------------------------------


class Beat:
    """`celery -A tutor beat` in a subprocess with RedBeat, logging to a file of its own."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Beat:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "tutor", "beat", "-l", "DEBUG"],
                cwd=ROOT,
                env={**self.env, "PYTHONUNBUFFERED": "1"},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> int | None:
        return terminate(self.proc)


def seed_overdue(client: redis.Redis, prefix: str, schedule: dict[str, dict[str, Any]]) -> None:
    """Store every periodic task in RedBeat's keys as last run a day ago: due at once, instead of
    one period after the first beat starts (the shortest is a minute)."""
    from celery.schedules import schedule as every
    from redbeat.decoder import RedBeatJSONEncoder

    day_ago = datetime.now(UTC) - timedelta(days=1)
    for name, entry in schedule.items():
        definition = {
            "name": name,
            "task": entry["task"],
            "args": [],
            "kwargs": {},
            "options": {},
            "schedule": every(timedelta(seconds=entry["schedule"])),
            "enabled": True,
        }
        key = f"{prefix}redbeat:{name}"
        client.hset(key, "definition", json.dumps(definition, cls=RedBeatJSONEncoder))
        client.hset(key, "meta", json.dumps({"last_run_at": day_ago}, cls=RedBeatJSONEncoder))
        client.zadd(f"{prefix}redbeat::schedule", {key: 0})


@needs_redis
def test_two_beats_one_sends_and_the_other_takes_over_without_sending_again(
    worker_env: dict[str, str], prefixed: str, tmp_path: Path
) -> None:
    """Two beats start: one holds RedBeat's lock and sends each periodic task once; the other
    waits for the lock. Stopped, the first releases it; the second takes over and, the schedule's
    last runs being in Redis, sends nothing that is not due: each task was sent once in all."""
    env = {**split_env(worker_env, prefixed), "BEAT_LOOP_SECONDS": "1", "BEAT_LOCK_SECONDS": "5"}
    client = redis.Redis.from_url(django_settings.CELERY_REDBEAT_REDIS_URL)
    lock = f"{prefixed}redbeat::lock"
    schedule = beat_schedule()
    seed_overdue(client, prefixed, schedule)
    first = Beat(env, tmp_path / "beat-1.log").start()
    wait_for(lambda: "beat: Acquired lock" in first.text(), timeout=60)
    second = Beat(env, tmp_path / "beat-2.log").start()
    sent = "Scheduler: Sending due task"
    try:
        wait_for(lambda: first.text().count(sent) == len(schedule), timeout=30)
        wait_for(lambda: "beat: Acquiring lock..." in second.text(), timeout=60)
        assert client.exists(lock) and "beat: Acquired lock" not in second.text()
        assert second.text().count(sent) == 0

        assert first.stop() == 0 and "beat: Releasing lock" in first.text()
        wait_for(lambda: "beat: Acquired lock" in second.text(), timeout=30)
        # Its first ticks after taking over: it extends the lock it holds, and finds nothing due.
        wait_for(lambda: second.text().split("beat: Acquired lock")[1].count("beat: Extending lock") >= 2, timeout=30)
        assert second.text().count(sent) == 0
        assert client.exists(lock)
    finally:
        first.stop()
        second.stop()
        messages = [
            json.loads(raw)["headers"]["task"]
            for q in ("default", "summaries", "memory", "files")
            for raw in client.lrange(prefixed + q, 0, -1)
        ]
        client.delete(*(prefixed + q for q in ("default", "summaries", "memory", "files")))
        client.delete(*client.keys(f"{prefixed}redbeat:*"))
    assert sorted(messages) == sorted(e["task"] for e in schedule.values())
