"""The plain worker and the queue nobody reads (docs/operations.md, "Queues, workers and the
scheduler"): `celery -A tutor worker` with no -Q reads every queue, so an ended conversation
becomes a memory and an uploaded PDF text; a queue that no worker reads is a warning on
/health/ready, `tutor_queue_consumers` 0 on /metrics, and a log line naming the queue and the
age of its oldest task.

The queue names are under a prefix of the test's own (CELERY_QUEUE_PREFIX), on the shared Redis."""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.test import Client
from rest_framework.test import APIClient

from core import consumers
from core.background import worker_queues
from tests.conftest import Worker, wait_for
from tests.conversations.test_files import pdf_bytes, settled, uploaded
from tests.conversations.test_summary_worker import SUMMARY_ANSWER, assert_one_summary, converse, end, wait_summary
from tests.core.test_metrics import sample
from tests.llm_server import ScriptedLLM
from tutor.celery import app

pytestmark = pytest.mark.skipif(
    not django_settings.CELERY_BROKER_URL.startswith("redis"), reason="the queues' tests need REDIS_URL"
)
QUEUES = ("default", "summaries", "memory", "files")


@pytest.fixture
def prefixed(settings: Any) -> Iterator[str]:
    """The four queues under a prefix of this test's (tasks the test sends are routed there)."""
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    settings.CELERY_QUEUE_PREFIX = prefix
    before = app.conf.task_default_queue
    app.conf.task_default_queue = f"{prefix}default"
    yield prefix
    app.conf.task_default_queue = before
    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    client.delete(*(prefix + q for q in QUEUES), *(consumers.KEY.format(queue=prefix + q) for q in QUEUES))


class PlainWorker(Worker):
    """The command every Celery user types first: no -Q, no pool, no name."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "celery", "-A", "tutor", "worker", "-l", "INFO"]


def ready(client: Client) -> dict[str, Any]:
    resp = client.get("/health/ready")
    assert resp.status_code == 200, resp.content
    body: dict[str, Any] = resp.json()
    return body


@pytest.mark.worker
def test_a_plain_worker_reads_every_queue_summaries_and_files_included(
    worker_env: dict[str, str],
    prefixed: str,
    llm: ScriptedLLM,
    clients: dict[str, APIClient],
    school: dict[str, Any],
) -> None:
    """`celery -A tutor worker` (no -Q): an ended conversation's summary is stored (summaries
    queue) and an uploaded PDF's text extracted (files queue). Meanwhile readiness names no queue
    without a consumer; once the worker stops, it names all four."""
    env = {k: v for k, v in worker_env.items() if k != "CELERY_QUEUE"} | {"CELERY_QUEUE_PREFIX": prefixed}
    worker = PlainWorker(llm, "", env).start()
    balancer = Client(HTTP_HOST="10.1.2.3:8000")
    try:
        text = worker.log_text()
        for queue in QUEUES:
            assert f"{prefixed}{queue}" in text.split("[queues]")[1], text
        wait_for(lambda: ready(balancer)["checks"]["queues"] == "ok", timeout=30)

        llm.script("summary", SUMMARY_ANSWER)
        cid = converse(clients["alice"])
        pdf = pdf_bytes("Adding fractions: 1/2 + 1/3 = 5/6.")
        body = uploaded(clients["alice"], cid, "worksheet.pdf", pdf, "application/pdf")
        assert end(clients["alice"], cid)["summary_status"] == "pending"

        wait_summary(cid, timeout=60)
        assert_one_summary(cid, school["alice"])
        row = settled(body["id"], timeout=60)
        assert row.status == "ready" and "1/2 + 1/3 = 5/6" in row.text
    finally:
        worker.stop()
    # A worker that stops removes its names at once: every queue is without a consumer.
    warning = ready(balancer)["checks"]["queues"]
    assert warning.startswith("warning: no worker reads"), warning
    for queue in QUEUES:
        assert f"{prefixed}{queue} (" in warning


@pytest.mark.django_db
def test_a_queue_no_worker_reads_is_a_warning_a_metric_and_a_log_line(
    prefixed: str, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers read default, memory and files (their heartbeats), none reads summaries, where a
    summary waits: /health/ready stays 200 with a warning naming the queue, its waiting task and
    the oldest one's age; /metrics has tutor_queue_consumers 0 for it and 1 for the others; the
    web process logs it once however often it is polled."""
    settings.METRICS_TOKEN = ""
    consumers.heartbeat([prefixed + q for q in ("default", "memory", "files")], "w1@host:1")
    app.send_task("conversations.tasks.conversation_summarize", args=(1,))
    assert worker_queues() == [prefixed + q for q in QUEUES]

    balancer = Client(HTTP_HOST="10.1.2.3:8000")
    with caplog.at_level(logging.WARNING, logger="core.metrics_collector"):
        body = ready(balancer)
        ready(balancer)
    assert body["status"] == "ok"
    warning = body["checks"]["queues"]
    assert warning.startswith(f"warning: no worker reads {prefixed}summaries (1 waiting, the oldest for "), warning
    assert f"{prefixed}default" not in warning
    lines = [r.getMessage() for r in caplog.records if "has no consumer" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(f"queue {prefixed}summaries has no consumer: 1 tasks wait"), lines

    metrics = Client(REMOTE_ADDR="127.0.0.1").get("/metrics").content.decode()
    assert sample(metrics, "tutor_queue_consumers", queue=f"{prefixed}summaries") == 0.0
    assert sample(metrics, "tutor_queue_consumers", queue=f"{prefixed}memory") == 1.0
    assert sample(metrics, "tutor_queue_depth", queue=f"{prefixed}summaries") == 1.0

    # A worker's names expire three heartbeats after its last one (a worker killed, not stopped).
    settings.QUEUE_HEARTBEAT_SECONDS = 0.001
    assert consumers.consumers([prefixed + "memory"]) == {prefixed + "memory": 0}


def test_the_filesystem_broker_keeps_the_names_in_its_folder(settings: Any, tmp_path: Any) -> None:
    """The embedded default (kombu's filesystem broker): a file per queue and worker, touched at
    each heartbeat, removed when the worker stops."""
    settings.CELERY_BROKER_URL = "filesystem://localhost/"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path / "out")}
    consumers.heartbeat(["default", "files"], "celery@host:7")
    consumers.heartbeat(["files"], "other@host:8")
    assert consumers.consumers(["default", "files", "memory"]) == {"default": 1, "files": 2, "memory": 0}
    consumers.gone(["default", "files"], "celery@host:7")
    assert consumers.consumers(["default", "files"]) == {"default": 0, "files": 1}
