"""The scheduler through a Redis restart (docs/operations.md, "Queues, workers and the
scheduler"): beat, standalone (`celery -A tutor beat`) or inside a worker (`-B`, as `make run`
starts it), keeps sending the periodic tasks once Redis is back, holding its lock again.

The broker and RedBeat's keys are on a Redis server of the test's own (tests.conftest.OwnRedis,
append-only file on, as in production), restarted under the running beat. A periodic task due
every second (a RedBeat entry the test stores) shows each tick in beat's log."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.conftest import ROOT, OwnRedis, terminate, wait_for

pytestmark = pytest.mark.worker

TICK = "beat-outage-tick"
SENT = f"Sending due task {TICK} "


def every_second(url: str, prefix: str) -> None:
    """A RedBeat entry of the test's own, due every second, sent to a queue no worker reads."""
    from celery.schedules import schedule as every
    from redbeat.decoder import RedBeatJSONEncoder

    client = redis.Redis.from_url(url)
    definition = {
        "name": TICK,
        "task": "tests.beat_outage.tick",
        "args": [],
        "kwargs": {},
        "options": {"queue": f"{prefix}ticks"},
        "schedule": every(timedelta(seconds=1)),
        "enabled": True,
    }
    key = f"{prefix}redbeat:{TICK}"
    client.hset(key, "definition", json.dumps(definition, cls=RedBeatJSONEncoder))
    last = datetime.now(UTC) - timedelta(minutes=1)
    client.hset(key, "meta", json.dumps({"last_run_at": last}, cls=RedBeatJSONEncoder))
    client.zadd(f"{prefix}redbeat::schedule", {key: 0})


@pytest.mark.parametrize("command", [["beat"], ["worker", "-B", "--concurrency=1"]], ids=["standalone", "in-worker"])
def test_beat_keeps_sending_periodic_tasks_after_redis_restarts(
    worker_env: dict[str, str], own_redis: OwnRedis, tmp_path: Path, command: list[str]
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    env = {
        **{k: v for k, v in worker_env.items() if k != "CELERY_QUEUE"},
        "REDIS_URL": own_redis.url,
        "CELERY_BROKER_URL": own_redis.url,
        "CELERY_QUEUE_PREFIX": prefix,
        "BEAT_LOOP_SECONDS": "1",
        "BEAT_LOCK_SECONDS": "5",
        "PYTHONUNBUFFERED": "1",
    }
    every_second(own_redis.url, prefix)
    log = tmp_path / "beat.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tutor", *command, "-l", "INFO"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    text = lambda: log.read_text(errors="replace")  # noqa: E731
    try:
        wait_for(lambda: proc.poll() is not None or text().count(SENT) >= 2, timeout=90)
        assert proc.poll() is None, text()[-4000:]

        # Redis stops, and starts again once beat has met the outage (a connection refused).
        stopped = len(text())
        terminate(own_redis.proc, grace=10)
        met = ("beat: Redis is unreachable", "beat raised exception")
        wait_for(lambda: proc.poll() is not None or any(m in text()[stopped:] for m in met), timeout=60)
        own_redis.start()
        restarted = len(text())
        # Ticks sent after Redis came back, by the same process.
        wait_for(lambda: proc.poll() is not None or text()[restarted:].count(SENT) >= 3, timeout=90)
        assert proc.poll() is None, text()[-4000:]
        after = text()[restarted:]
        assert "CRITICAL" not in after and "beat raised exception" not in after, after[-4000:]
        # Each tick went to the broker: its messages wait on their queue; and the beat says it
        # runs (/health/ready's scheduler check).
        client = redis.Redis.from_url(own_redis.url)
        assert client.llen(f"{prefix}ticks") >= 3
        assert client.exists(f"{prefix}redbeat::tick")
    finally:
        terminate(proc)


def test_beat_writes_the_schedule_again_when_redis_comes_back_without_its_data(
    worker_env: dict[str, str], own_redis: OwnRedis, tmp_path: Path
) -> None:
    """A Redis without persistence restarts empty: the lock and the schedule are gone. The beat
    takes the lock again and writes the periodic tasks again (RedBeat writes them only at start),
    so they are sent again from then on."""
    import shutil

    from core.background import beat_schedule

    prefix = f"t{uuid.uuid4().hex[:8]}-"
    env = {
        **{k: v for k, v in worker_env.items() if k != "CELERY_QUEUE"},
        "REDIS_URL": own_redis.url,
        "CELERY_BROKER_URL": own_redis.url,
        "CELERY_QUEUE_PREFIX": prefix,
        "BEAT_LOOP_SECONDS": "1",
        "BEAT_LOCK_SECONDS": "5",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "beat.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tutor", "beat", "-l", "DEBUG"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    text = lambda: log.read_text(errors="replace")  # noqa: E731
    client = redis.Redis.from_url(own_redis.url)
    schedule_key = f"{prefix}redbeat::schedule"
    try:
        wait_for(lambda: proc.poll() is not None or "beat: Extending lock" in text(), timeout=90)
        # Every periodic task the apps declared (and Celery's own default entries).
        entries = client.zcard(schedule_key)
        assert entries >= len(beat_schedule())

        terminate(own_redis.proc, grace=10)
        for data in own_redis.folder.iterdir():
            if data.name != "beat.log":
                shutil.rmtree(data) if data.is_dir() else data.unlink()
        own_redis.start()
        assert client.zcard(schedule_key) == 0

        wait_for(lambda: proc.poll() is not None or "beat: Redis lost the schedule" in text(), timeout=60)
        assert proc.poll() is None, text()[-4000:]
        wait_for(lambda: client.zcard(schedule_key) == entries, timeout=30)
        assert client.exists(f"{prefix}redbeat::lock")
    finally:
        terminate(proc)


@pytest.mark.django_db
def test_readiness_warns_while_no_scheduler_runs(settings: Any, own_redis: OwnRedis) -> None:
    """/health/ready's `scheduler` check: a warning (the node stays ready) while no beat has run
    its loop for a minute; "ok" once one does."""
    from django.test import Client

    from tutor import beat

    settings.CELERY_BEAT_SCHEDULER = "tutor.beat:Scheduler"
    settings.CELERY_REDBEAT_REDIS_URL = own_redis.url
    settings.CELERY_REDBEAT_KEY_PREFIX = f"t{uuid.uuid4().hex[:8]}-redbeat:"
    balancer = Client(HTTP_HOST="10.1.2.3:8000")
    resp = balancer.get("/health/ready")
    assert resp.json()["checks"]["scheduler"].startswith("warning: no scheduler ran in the last 60 s"), resp.json()
    redis.Redis.from_url(own_redis.url).set(beat.tick_key(), 1, ex=60)
    assert balancer.get("/health/ready").json()["checks"]["scheduler"] == "ok"
