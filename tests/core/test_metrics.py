"""/metrics: refused (404) to strangers, served to a scraper with the token or on a private
address; the turn, model, queue and response metrics move with what happens."""

from __future__ import annotations

import json
import socket
import time
import uuid

import httpx2
import pytest
import redis
from django.test import Client
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from core.metrics import exposition_start
from core.metrics_collector import QueueState, filesystem_queues, redis_queues
from tests.conftest import OwnRedis, Worker, headers
from tests.conversations.test_asgi_server import serving
from tests.conversations.test_summary_worker import ended_pending, send_summarize, wait_summary
from tests.conversations.test_turn import send, start


def sample(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return None


@pytest.mark.django_db
def test_metrics_are_refused_to_a_public_address_without_the_token(settings):
    """From a public address: 404 in the error envelope, with no token configured and with a
    wrong one; with the right Bearer token, the metrics."""
    public = Client(REMOTE_ADDR="93.184.216.34")
    settings.METRICS_TOKEN = ""
    resp = public.get("/metrics")
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"
    settings.METRICS_TOKEN = "scrape-secret"
    assert public.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    resp = public.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret")
    assert resp.status_code == 200
    assert resp["Content-Type"].startswith("text/plain")
    assert sample(resp.content.decode(), "tutor_metrics_source_up", source="database") == 1.0


@pytest.mark.django_db
def test_metrics_are_served_to_a_private_address_without_a_token(settings):
    """Without METRICS_TOKEN, loopback and private addresses may scrape; a token, once set, is
    required from them too."""
    settings.METRICS_TOKEN = ""
    assert Client(REMOTE_ADDR="10.0.0.5").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    settings.METRICS_TOKEN = "scrape-secret"
    assert Client(REMOTE_ADDR="10.0.0.5").get("/metrics").status_code == 404


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_chat_turn_moves_the_turn_latency_token_and_response_metrics(clients, llm):
    """One scripted turn: one more turn `ok`, one more first-token and whole-turn observation,
    the chat's prompt and completion tokens counted, and the 201 counted under the route's name."""
    before = {
        "ok": value("tutor_turns_total", outcome="ok"),
        "ttft": value("tutor_turn_first_token_seconds_count"),
        "turn": value("tutor_turn_seconds_count"),
        "prompt": value("tutor_model_tokens_total", purpose="chat", kind="prompt"),
        "completion": value("tutor_model_tokens_total", purpose="chat", kind="completion"),
        "sent": value("tutor_http_responses_total", route="message-send", method="POST", status="201"),
    }
    llm.script("chat", {"content": "Find a common denominator first: 6."})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid).status_code == 201
    assert value("tutor_turns_total", outcome="ok") == before["ok"] + 1
    assert value("tutor_turn_first_token_seconds_count") == before["ttft"] + 1
    assert value("tutor_turn_seconds_count") == before["turn"] + 1
    assert value("tutor_model_tokens_total", purpose="chat", kind="prompt") > before["prompt"]
    assert value("tutor_model_tokens_total", purpose="chat", kind="completion") > before["completion"]
    sent = value("tutor_http_responses_total", route="message-send", method="POST", status="201")
    assert sent == before["sent"] + 1


def test_a_failed_model_call_is_counted_by_kind(clients, llm):
    """The model failing (a 503): the turn's outcome is its error code, and the failed call is
    counted as `unavailable` under the chat purpose."""
    errors = value("tutor_model_errors_total", purpose="chat", kind="unavailable")
    llm.script("chat", {"status": 503})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 503, resp.content
    code = resp.json()["error"]["code"]
    assert value("tutor_turns_total", outcome=code) >= 1
    assert value("tutor_model_errors_total", purpose="chat", kind="unavailable") > errors


def test_queue_depth_oldest_age_and_tasks_by_name_read_a_real_redis_queue(own_redis: OwnRedis) -> None:
    """Tasks published to a Redis queue no worker reads (a Redis server of the test's own): the
    depth, the oldest task's age from the `sent_at` header set at publish (tutor.celery), and the
    waiting tasks by name; past the scan, the counts are scaled to the depth."""
    from tutor.celery import app

    url = own_redis.url
    queue = f"test-metrics-{uuid.uuid4().hex[:8]}"
    try:
        assert redis_queues(url, [queue]) == {queue: QueueState()}
        with app.connection_for_write(url) as connection:
            for name in ["memory.tasks.memory_facts_extract"] * 3 + ["memory.tasks.memory_consolidate"]:
                app.send_task(name, args=(1,), queue=queue, connection=connection)
        state = redis_queues(url, [queue])[queue]
        assert state.depth == 4
        assert 0.0 <= state.oldest_age < 60.0
        assert state.tasks == {"memory.tasks.memory_facts_extract": 3, "memory.tasks.memory_consolidate": 1}
        # The two oldest read: three extractions first, so two of two scaled to four.
        assert redis_queues(url, [queue], scan=2)[queue].tasks == {"memory.tasks.memory_facts_extract": 4}
    finally:
        redis.Redis.from_url(url).delete(queue)


def test_the_filesystem_broker_queue_is_read_the_same_way(tmp_path):
    """The embedded default's broker (kombu's filesystem transport): message files per queue."""
    body = {"headers": {"task": "memory.tasks.memory_consolidate", "sent_at": time.time() - 30}}
    for i in range(2):
        (tmp_path / f"{i:03d}_x{i}.memory.msg").write_text(json.dumps(body))
    (tmp_path / "009_y.summaries.msg").write_text("not json")
    states = filesystem_queues(tmp_path, ["memory", "summaries", "files"])
    assert states["memory"].depth == 2 and states["memory"].tasks == {"memory.tasks.memory_consolidate": 2}
    assert 29 <= states["memory"].oldest_age < 90
    assert states["summaries"].depth == 1 and states["summaries"].tasks == {"unknown": 1}
    assert states["files"] == QueueState()


@pytest.mark.django_db(transaction=True)
def test_the_production_server_adds_up_the_metrics_of_its_worker_processes(worker_env, school, tmp_path):
    """scripts/serve.sh, two worker processes in multiprocess mode: /metrics counts every
    response whichever process answered it, and the folder holds both processes' samples."""
    folder = tmp_path / "metrics"
    env = {"PROMETHEUS_MULTIPROC_DIR": str(folder), "METRICS_TOKEN": "scrape-secret"}
    with serving(worker_env, tmp_path / "serve.log", **env) as (base, _proc):
        me = headers(school["alice"])
        sent = 40
        with httpx2.Client(base_url=base) as client:
            for _ in range(sent):
                # A new connection each time: the kernel spreads them over both processes.
                assert client.get("/api/v1/me/", headers={**me, "Connection": "close"}).status_code == 200
            resp = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret"})
        assert resp.status_code == 200, resp.text
        counted = sample(resp.text, "tutor_http_responses_total", route="me", method="GET", status="200")
        assert counted == sent
        pids = {path.stem.rsplit("_", 1)[-1] for path in folder.glob("counter_*.db")}
        assert len(pids) == 2, sorted(p.name for p in folder.iterdir())


def test_a_worker_metrics_endpoint_is_refused_on_a_public_or_unspecified_address():
    """WORKER_METRICS_ADDR has no token: only a loopback or private host is served."""
    for address in ("8.8.8.8:0", "0.0.0.0:0", "[::]:0"):
        with pytest.raises(ValueError, match="not a loopback or private address"):
            exposition_start(address)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_node_serves_the_metrics_of_its_tasks(worker_env, llm, school, tmp_path):
    """A worker with WORKER_METRICS_ADDR serves its own /metrics (no web server on its node): a
    summary it wrote shows as one summary lag sample and the summary call's tokens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**worker_env, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "m"), "WORKER_METRICS_ADDR": f"127.0.0.1:{port}"}
    worker = Worker(llm, worker_env["CELERY_QUEUE"], env).start()
    try:
        conversation = ended_pending(school["alice"])
        send_summarize(conversation.pk)
        wait_summary(conversation.pk)
        text = httpx2.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        worker.stop()
    assert sample(text, "tutor_summary_lag_seconds_count") == 1
    assert (sample(text, "tutor_model_tokens_total", purpose="summary", kind="prompt") or 0) > 0
