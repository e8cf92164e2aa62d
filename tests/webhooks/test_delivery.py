"""Webhooks delivered by a real Celery worker to a real HTTP receiver (tests/webhook_receiver.py)
that verifies each Standard Webhooks signature: the event after the write that emits it, the
retries of a receiver that is down, the stable `webhook-id`, the schools' scoping, a payload
without the child's words, and a webhook disabled after failing again and again.

The worker is a separate process (tests/conftest.py `Worker`) on a queue of its own, with the
retry settings of each test in its environment. Where a test asserts that nothing was sent, it
first waits for what was made in the same transaction (the deliveries of one event are made
together), so the absence is not just "not yet".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import School, User
from memory.models import AIMemory
from memory.services.writing import memory_create
from tests.conftest import Worker, client_for, make_user, wait_for
from tests.conversations.test_summary_worker import CONTENT, SUMMARY_ANSWER, TITLE, converse, end
from tests.llm_server import ScriptedLLM
from tests.webhook_receiver import Receiver
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.worker

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
CHILD_TEXT = "My secret is that I hate my brother Tom and I cry at night"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A receiver that is down (its port refuses connections) until the test starts it."""
    r = Receiver(path="/hooks/tutor")
    yield r
    r.stop()


def start_worker(worker_env: dict[str, str], llm: ScriptedLLM, **settings: str) -> Worker:
    env = {
        **worker_env,
        "WEBHOOKS_ALLOW_PRIVATE_URLS": "true",
        "WEBHOOKS_DELIVERY_BACKOFF_SECONDS": "0.5",
        "WEBHOOKS_DELIVERY_MAX_RETRIES": "6",
        "WEBHOOKS_TIMEOUT_SECONDS": "2",
        **settings,
    }
    return Worker(llm, env["CELERY_QUEUE"], env).start()


@pytest.fixture
def hook_worker(worker_env: dict[str, str], llm: ScriptedLLM) -> Iterator[Worker]:
    worker = start_worker(worker_env, llm)
    yield worker
    worker.stop()


def subscribe(url: str, school: School | None, events: tuple[str, ...] = ("memory.created",)) -> Webhook:
    return Webhook.objects.create(url=url, secret=SECRET, school=school, events=list(events))


def note_for(student: User) -> AIMemory:
    """A tutor's note about `student`, written in the test process: it emits memory.created."""
    return memory_create(
        student=student,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.SAVE_MEMORY_TOOL,
        title="Fractions practice",
        content=CHILD_TEXT,
    )


def settled(hook: Webhook, status: str = WebhookDelivery.Status.SENT) -> WebhookDelivery | None:
    return hook.deliveries.filter(status=status).first()


def test_a_conversation_ending_delivers_a_signed_memory_created_without_the_child_s_words(
    hook_worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any], receiver: Receiver
) -> None:
    """A student ends a conversation: the worker summarises it into a memory, and the memory's
    school's webhook receives `memory.created` within seconds, signed (verified with
    standardwebhooks), carrying ids and kinds only: neither the student's message, nor the
    summary's text, nor a name. The delivery log records it sent with the receiver's 200."""
    receiver.start()
    hook = subscribe(receiver.url, school["school"])
    llm.script("summary", SUMMARY_ANSWER)
    cid = converse(clients["alice"], text=CHILD_TEXT)
    end(clients["alice"], cid)

    ((headers, body),) = receiver.wait(1)
    (payload,) = receiver.verified(SECRET)
    memory = AIMemory.objects.get(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY)
    assert payload["type"] == "memory.created"
    assert payload["data"] == {
        "memory_id": memory.pk,
        "student_id": school["alice"].pk,
        "kind": "summary",
        "source": "summary_task",
        "school_id": school["school"].pk,
        "school_ids": [school["school"].pk],
    }
    text = body.decode()
    for words in (CHILD_TEXT, "hate my brother", TITLE, CONTENT, "alice", "Maths"):
        assert words not in text
    delivery = wait_for(lambda: settled(hook))
    assert headers["webhook-id"] == delivery.message_id
    assert (delivery.attempts, delivery.response_code, delivery.last_error) == (1, 200, "")


def test_a_subscriber_of_another_school_receives_nothing(
    hook_worker: Worker, school: dict[str, Any], receiver: Receiver
) -> None:
    """An event about a student of school A reaches school A's webhook and every-school's, never
    school B's (its receiver gets nothing and no delivery is made for it); a webhook of A's
    district receives it too."""
    district = School.objects.create(name="District", kind=School.Kind.DISTRICT)
    School.objects.filter(pk=school["school"].pk).update(parent=district)
    other = Receiver(path="/hooks/other").start()
    try:
        receiver.start()
        mine = subscribe(receiver.url, school["school"])
        everyone = subscribe(receiver.url + "?all", None)
        above = subscribe(receiver.url + "?district", district)
        theirs = subscribe(other.url, School.objects.create(name="School B"))
        memory = note_for(school["alice"])
        receiver.wait(3)
        for hook in (mine, everyone, above):
            assert wait_for(lambda hook=hook: settled(hook)).payload["data"]["memory_id"] == memory.pk
        # The four deliveries of one event are made in one transaction: B's would exist by now.
        assert not theirs.deliveries.exists()
        assert other.requests == []
    finally:
        other.stop()


def test_a_receiver_down_then_failing_gets_the_event_once_back_with_the_same_id(
    hook_worker: Worker, school: dict[str, Any], receiver: Receiver
) -> None:
    """A receiver that refuses connections, then answers 500, then 200: the worker retries with
    backoff and the event arrives; every try carries the same `webhook-id` (so the receiver
    can drop a duplicate) and a valid signature; the log shows the tries and the last answer."""
    hook = subscribe(receiver.url, school["school"])
    note_for(school["alice"])
    down = wait_for(lambda: hook.deliveries.filter(attempts__gte=1).exclude(last_error="").first())
    assert "ConnectError" in down.last_error and down.status == WebhookDelivery.Status.PENDING
    receiver.statuses = [500]
    receiver.start()
    requests = receiver.wait(2)
    delivery = wait_for(lambda: settled(hook))
    assert {headers["webhook-id"] for headers, _ in requests} == {delivery.message_id}
    payloads = receiver.verified(SECRET)
    assert payloads[0] == payloads[1] and payloads[0]["type"] == "memory.created"
    assert delivery.attempts >= 3 and delivery.response_code == 200
    assert delivery.last_error == "webhook: HTTP 500"
    assert json.loads(requests[1][1]) == delivery.payload


def test_a_webhook_that_keeps_failing_is_disabled_with_the_reason(
    worker_env: dict[str, str], llm: ScriptedLLM, school: dict[str, Any], receiver: Receiver
) -> None:
    """With WEBHOOKS_DISABLE_AFTER_FAILURES=2, two deliveries that fail after every retry disable
    the webhook: the API shows it inactive with the reason (the last error); a later event makes
    no delivery for it."""
    worker = start_worker(
        worker_env,
        llm,
        WEBHOOKS_DELIVERY_MAX_RETRIES="1",
        WEBHOOKS_DELIVERY_BACKOFF_SECONDS="0.1",
        WEBHOOKS_DISABLE_AFTER_FAILURES="2",
    )
    try:
        receiver.statuses = [503] * 4
        receiver.start()
        hook = subscribe(receiver.url, school["school"])
        note_for(school["alice"])
        wait_for(lambda: settled(hook, WebhookDelivery.Status.FAILED))
        hook.refresh_from_db()
        assert hook.active and hook.consecutive_failures == 1
        note_for(school["bob"])
        wait_for(lambda: hook.deliveries.filter(status=WebhookDelivery.Status.FAILED).count() == 2)
        hook.refresh_from_db()
        assert not hook.active and hook.disabled_at is not None
        assert "2 failed deliveries in a row" in hook.disabled_reason and "HTTP 503" in hook.disabled_reason
        staff_client = client_for(make_user("staff", User.Role.STAFF, is_staff=True))
        staff = staff_client.get(f"/api/v1/webhooks/{hook.pk}/").json()
        assert staff["active"] is False and staff["disabled_reason"] == hook.disabled_reason
        assert len(receiver.requests) == 4
        note_for(school["carol"])
        assert hook.deliveries.count() == 2
    finally:
        worker.stop()
