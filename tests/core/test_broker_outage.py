"""A worker whose Redis restarts while it holds tasks keeps running: it reconnects, takes the
next tasks, and the task it held is finished once (summaries are idempotent, and a message whose
acknowledgement was lost is delivered again after the visibility timeout).

The broker here is a Redis server of the test's own (tests.conftest.OwnRedis: Debian's
redis-server, which CI installs; append-only file on, as in production), so that it can be
restarted without touching the Redis the other tests share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis
from kombu import Queue

from conversations.models import Conversation
from tests.conftest import OwnRedis, Worker, wait_for
from tests.conversations.test_summary_worker import SUMMARY_ANSWER, ended_pending, summaries_of
from tests.llm_server import ScriptedLLM

pytestmark = pytest.mark.worker


def summarize(url: str, queue: str, conversation_id: int) -> None:
    """Send the summary task through the test's own broker (not the shared one)."""
    from tutor.celery import app

    with app.connection_for_write(url) as connection:
        app.send_task(
            "conversations.tasks.conversation_summarize", args=(conversation_id,), queue=queue, connection=connection
        )


def test_a_worker_keeps_running_through_a_redis_restart_with_a_task_in_hand(
    worker_env: dict[str, str], llm: ScriptedLLM, school: dict[str, Any], own_redis: OwnRedis, tmp_path: Path
) -> None:
    queue = worker_env["CELERY_QUEUE"]
    env = {
        **worker_env,
        "REDIS_URL": own_redis.url,
        "CELERY_BROKER_URL": own_redis.url,
        "CELERY_VISIBILITY_TIMEOUT": "5",
        "PYTHONUNBUFFERED": "1",
    }
    worker = Worker(llm, queue, env, pool="prefork", concurrency=2).start()
    try:
        # The first summaries' model calls take 4 s: Redis restarts while the worker holds them.
        llm.script("summary", *[{**SUMMARY_ANSWER, "delay": 4.0}] * 3)
        held = [ended_pending(school[name]) for name in ("alice", "alice", "carol")]
        for conversation in held:
            summarize(own_redis.url, queue, conversation.pk)
        wait_for(lambda: len(llm.calls("summary")) >= 2, timeout=30)
        own_redis.restart()

        for conversation in held:
            wait_for(lambda c=conversation.pk: Conversation.objects.get(pk=c).summary_status == "done", timeout=60)
        second = ended_pending(school["bob"])
        summarize(own_redis.url, queue, second.pk)
        wait_for(lambda: Conversation.objects.get(pk=second.pk).summary_status == "done", timeout=60)
        assert worker.proc is not None and worker.proc.poll() is None, worker.log_text()[-4000:]
        # The first message's acknowledgement may have been lost with the connection: it comes
        # back after the visibility timeout, and finds its summary written.
        text = worker.log_text()
        assert "Unrecoverable error" not in text, text[-4000:]
        for conversation in held:
            assert len(summaries_of(conversation.pk)) == 1
        assert len(summaries_of(second.pk)) == 1
    finally:
        worker.stop()


def test_a_channel_closed_after_its_connection_was_collected_keeps_its_messages_unacked(own_redis: OwnRedis) -> None:
    """tutor.broker's repair: a channel holding an unacknowledged message, closed once the
    connection was detached from its transport (Celery's cleanup after a connection loss),
    raises the broker's ConnectionError, which kombu's close ignores, instead of the
    AttributeError that stopped the worker; the message stays in Redis's unacknowledged set."""
    from tutor.broker import Transport
    from tutor.celery import app

    connection = app.connection_for_write(own_redis.url)
    assert isinstance(connection.transport, Transport)
    channel: Any = connection.default_channel
    with connection.Producer() as producer:
        producer.publish({"n": 1}, routing_key="outage-test", declare=[Queue("outage-test")])
    held = channel.basic_get("outage-test", no_ack=False)
    assert held is not None
    # What the cleanup leaves when the first close stopped early: no client, no pool.
    connection.transport.client = None
    channel._pool = None
    channel.__dict__.pop("client", None)
    with pytest.raises(redis.exceptions.ConnectionError):
        channel._connparams()
    connection.maybe_close_channel(channel)
    assert redis.Redis.from_url(own_redis.url).hlen("unacked") == 1
