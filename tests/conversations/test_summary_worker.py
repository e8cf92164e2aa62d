"""The conversation summary, end to end through a real Celery worker consuming from the real broker.

Every test starts `celery -A tutor worker` as a subprocess (the `worker` fixture) on a queue of its
own, pointed at the test database and at the scripted model server; nothing runs eagerly. Tasks
are sent from the test process with `.delay()` / `.apply_async()` or by the code under test.

Where a test asserts that something did *not* happen (the model was not asked, no memory was
stored), it first waits for the worker's log to show that the task in question finished, so the
absence is not just "not yet".
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import Q
from django.utils import timezone
from rest_framework.test import APIClient

from conversations.models import Conversation, Message
from conversations.tasks import conversation_summarize, conversations_end_idle, summaries_sweep
from llm.models import LLMUsage
from memory.models import AIMemory
from tests.conftest import Worker, wait_for
from tests.llm_server import DEFAULT_SUMMARY, ScriptedLLM

pytestmark = pytest.mark.worker

SUMMARIZE = "conversations.tasks.conversation_summarize"
SWEEP = "conversations.tasks.summaries_sweep"
END_IDLE = "conversations.tasks.conversations_end_idle"

TITLE = "Adding fractions with unlike denominators"
CONTENT = (
    "The student added 1/2 and 1/3 after finding the common denominator 6. Next time, practise with three fractions."
)
SUMMARY_ANSWER = {"content": json.dumps({"title": TITLE, "content": CONTENT})}
OUTAGE = {"status": 503, "body": {"error": {"message": "overloaded", "type": "server_error"}}}


# --- helpers ------------------------------------------------------------------------------------


def converse(client: APIClient, text: str = "How do I add 1/2 and 1/3?") -> int:
    """A conversation with one student message and the tutor's reply, through the API."""
    resp = client.post("/api/v1/conversations/", {"subject": "Maths"}, format="json")
    assert resp.status_code == 201, resp.content
    cid = resp.json()["id"]
    resp = client.post(
        f"/api/v1/conversations/{cid}/messages/", {"content": text, "client_message_id": "m1"}, format="json"
    )
    assert resp.status_code == 201, resp.content
    return int(cid)


def end(client: APIClient, cid: int) -> dict[str, Any]:
    resp = client.post(f"/api/v1/conversations/{cid}/end/")
    assert resp.status_code == 202, resp.content
    body: dict[str, Any] = resp.json()
    assert body["status"] == "ended"
    return body


def ended_pending(student: Any) -> Conversation:
    """An ended conversation with a student message whose summary is pending, nothing enqueued.

    The state `conversation_close` commits before it enqueues the task: used where the test
    itself controls the deliveries.
    """
    now = timezone.now()
    conversation = Conversation.objects.create(
        student=student,
        subject="Maths",
        status=Conversation.Status.ENDED,
        last_activity_at=now,
        ended_at=now,
        summary_status=Conversation.SummaryStatus.PENDING,
        summary_requested_at=now,
        message_count=2,
        history_tokens=20,
    )
    Message.objects.create(
        conversation=conversation,
        seq=1,
        role=Message.Role.STUDENT,
        content="What is 1/2 + 1/3?",
        client_message_id="m1",
        token_count=10,
    )
    Message.objects.create(
        conversation=conversation, seq=2, role=Message.Role.TUTOR, content="Use the denominator 6.", token_count=10
    )
    return conversation


def summary_status_is(cid: int, *statuses: str) -> Conversation | None:
    conversation = Conversation.objects.get(pk=cid)
    return conversation if conversation.summary_status in statuses else None


def wait_summary(cid: int, *statuses: str, timeout: float = 20.0) -> Conversation:
    conversation: Conversation = wait_for(lambda: summary_status_is(cid, *(statuses or ("done",))), timeout=timeout)
    return conversation


def summaries_of(cid: int) -> list[AIMemory]:
    return list(AIMemory.objects.filter(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY))


def succeeded(task_id: str, name: str = SUMMARIZE) -> str:
    return f"Task {name}[{task_id}] succeeded"


def results(log: str, task_id: str, name: str = SUMMARIZE) -> list[str]:
    """The return values the worker logged for a task id, one per finished delivery."""
    needle = succeeded(task_id, name) + " in "
    # A text log line ends with its context (core.logging: " [request_id=... task_id=...]").
    lines = [re.sub(r" \[[a-z_]+=[^\]]*\]$", "", line) for line in log.splitlines() if needle in line]
    return [line.rsplit(": ", 1)[1] for line in lines]


def send_summarize(cid: int, task_id: str | None = None) -> str:
    task_id = task_id or str(uuid.uuid4())
    conversation_summarize.apply_async((cid,), task_id=task_id)
    return task_id


def summary_usage(cid: int) -> list[LLMUsage]:
    return list(LLMUsage.objects.filter(purpose=LLMUsage.Purpose.SUMMARY, conversation_id=cid).order_by("id"))


def assert_one_summary(cid: int, student: Any, title: str = TITLE, content: str = CONTENT) -> AIMemory:
    memories = summaries_of(cid)
    assert len(memories) == 1, memories
    memory = memories[0]
    assert memory.kind == AIMemory.Kind.SUMMARY
    assert memory.source == AIMemory.Source.SUMMARY_TASK
    assert memory.source_conversation_id == cid
    assert memory.student_id == student.pk
    assert (memory.title, memory.content) == (title, content)
    assert memory.token_count > 0
    assert memory.status == AIMemory.Status.ACTIVE
    return memory


# --- the happy path -----------------------------------------------------------------------------


def test_end_via_api_answers_at_once_and_worker_stores_the_summary(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """Ending a conversation answers 202 at once (summary pending); the worker then stores exactly
    one summary memory from the model's JSON and marks the conversation's summary done."""
    # The model takes 1.5 s: the end request must not wait for it.
    llm.script("summary", {"delay": 1.5, **SUMMARY_ANSWER})
    cid = converse(clients["alice"])

    started = time.monotonic()
    body = end(clients["alice"], cid)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, f"ending took {elapsed:.2f}s: it waited for the summary"
    assert body["summary_status"] == "pending"

    conversation = wait_summary(cid)
    assert conversation.summary_error == ""
    assert conversation.summary_attempts == 0
    assert_one_summary(cid, school["alice"])

    calls = llm.calls("summary")
    assert len(calls) == 1
    assert calls[0]["model"] == "scripted-summary"
    assert "How do I add 1/2 and 1/3?" in calls[0]["messages"][-1]["content"]
    [usage] = summary_usage(cid)
    assert usage.ok and usage.student_id == school["alice"].pk
    assert f"Task {SUMMARIZE}[" in worker.log_text()


def test_messages_queued_under_the_old_task_names_still_summarise(
    worker: Worker, llm: ScriptedLLM, school: dict[str, Any]
) -> None:
    """The summary task and its sweep moved to conversations.tasks; a message queued under their
    names in memory.tasks before an upgrade still runs: the summary is stored once, and the old
    sweep sends a pending summary again."""
    from tutor.celery import app

    llm.script("summary", SUMMARY_ANSWER, SUMMARY_ANSWER)
    first = ended_pending(school["alice"])
    app.send_task("memory.tasks.conversation_summarize", args=(first.pk,))
    wait_summary(first.pk)
    assert_one_summary(first.pk, school["alice"])

    second = ended_pending(school["bob"])
    Conversation.objects.filter(pk=second.pk).update(summary_requested_at=timezone.now() - timedelta(hours=1))
    app.send_task("memory.tasks.summaries_sweep")
    wait_summary(second.pk)
    assert_one_summary(second.pk, school["bob"])
    text = worker.log_text()
    assert "Task memory.tasks.conversation_summarize[" in text and f"Task {SUMMARIZE}[" in text


# --- redelivery and races -----------------------------------------------------------------------


def test_redelivered_task_after_done_stores_nothing_and_does_not_ask_the_model(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """A summary task delivered again once the summary is done (the same task id twice, or a new
    .delay()) finishes as already done: still one memory, and the model is not asked again."""
    cid = converse(clients["alice"])
    end(clients["alice"], cid)
    wait_summary(cid)
    assert len(llm.calls("summary")) == 1

    same_id = str(uuid.uuid4())
    send_summarize(cid, same_id)
    send_summarize(cid, same_id)
    result = conversation_summarize.delay(cid)
    log = worker.wait_for_log(succeeded(result.id))
    log = worker.wait_for_log(succeeded(same_id), count=2)

    assert results(log, same_id) == ["'already_done'", "'already_done'"]
    assert results(log, result.id) == ["'already_done'"]
    assert len(llm.calls("summary")) == 1
    assert len(summary_usage(cid)) == 1
    assert_one_summary(cid, school["alice"], DEFAULT_SUMMARY["title"], DEFAULT_SUMMARY["content"])
    assert Conversation.objects.get(pk=cid).summary_status == "done"


def test_two_deliveries_racing_store_one_summary(
    worker: Worker, worker_env: dict[str, str], llm: ScriptedLLM, school: dict[str, Any]
) -> None:
    """Two deliveries of one summary task running at the same time on two workers both reach the
    model, but only one memory is stored; the other delivery finds it and finishes as done."""
    second = Worker(llm, worker_env["CELERY_QUEUE"], worker_env).start()
    try:
        # Both calls are slow, so the second delivery starts before the first one stored anything.
        llm.script("summary", {"delay": 1.0, **SUMMARY_ANSWER}, {"delay": 1.0, **SUMMARY_ANSWER})
        cid = ended_pending(school["alice"]).pk
        task_id = send_summarize(cid)
        send_summarize(cid, task_id)
        needle = succeeded(task_id)
        wait_for(lambda: (worker.log_text() + second.log_text()).count(needle) == 2)
        logs = worker.log_text() + second.log_text()
    finally:
        second.stop()

    # One delivery per worker: they ran concurrently.
    assert needle in worker.log_text() and needle in second.log_text()
    assert sorted(results(logs, task_id)) == ["'already_done'", "'stored'"]
    assert len(llm.calls("summary")) == 2
    assert_one_summary(cid, school["alice"])
    assert Conversation.objects.get(pk=cid).summary_status == "done"

    # A third delivery, now that it is done, does not ask the model.
    worker.wait_for_log(succeeded(send_summarize(cid)))
    assert len(llm.calls("summary")) == 2
    assert len(summaries_of(cid)) == 1


# --- the model down -----------------------------------------------------------------------------


def test_model_down_then_back_retries_with_backoff_and_stores(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """The model answers 503 twice then recovers: the task retries with growing backoff and stores
    the summary; each failed call is metered as an LLMUsage row with ok=False."""
    llm.script("summary", OUTAGE, OUTAGE, SUMMARY_ANSWER)
    cid = converse(clients["alice"])
    end(clients["alice"], cid)

    conversation = wait_summary(cid)
    assert_one_summary(cid, school["alice"])
    assert conversation.summary_attempts == 2
    assert len(llm.calls("summary")) == 3

    usage = summary_usage(cid)
    assert [u.ok for u in usage] == [False, False, True]
    assert all("503" in u.error for u in usage[:2])
    # Exponential backoff (0.3 s, then 0.6 s, each with +-20% jitter) between the calls.
    first_gap = (usage[1].created_at - usage[0].created_at).total_seconds()
    second_gap = (usage[2].created_at - usage[1].created_at).total_seconds()
    assert first_gap >= 0.3 * 0.8 - 0.02, first_gap
    assert second_gap >= 0.6 * 0.8 - 0.02, second_gap

    log = worker.log_text()
    assert log.count(f"summary: conversation {cid} retry in") == 2
    assert log.count("] retry: Retry in ") == 2  # Celery's own record of the two retries


def test_model_down_past_max_retries_stays_pending_until_the_sweep(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """The model stays down past SUMMARY_MAX_RETRIES (3): a fallback memory is stored and the
    summary stays pending (not lost, not failed) with its attempts counted. Once the model is
    back, summaries_sweep re-enqueues the summaries pending for longer than
    SUMMARY_SWEEP_AFTER_MINUTES, and the model's summary replaces the fallback."""
    llm.script("summary", OUTAGE, OUTAGE, OUTAGE, OUTAGE)
    cid = converse(clients["alice"])
    end(clients["alice"], cid)

    worker.wait_for_log(f"summary: conversation {cid} still pending after 4 tries")
    worker.wait_for_log(": 'pending'")
    conversation = Conversation.objects.get(pk=cid)
    assert conversation.summary_status == "pending"
    assert conversation.summary_attempts == 4
    assert "503" in conversation.summary_error
    [fallback] = summaries_of(cid)
    assert fallback.needs_review is True
    assert len(llm.calls("summary")) == 4
    assert [u.ok for u in summary_usage(cid)] == [False] * 4

    # A pending summary requested half a minute ago is not due yet: the sweep leaves it alone.
    recent = ended_pending(school["bob"])
    Conversation.objects.filter(pk=recent.pk).update(summary_requested_at=timezone.now() - timedelta(seconds=30))
    Conversation.objects.filter(pk=cid).update(summary_requested_at=timezone.now() - timedelta(minutes=16))

    # The model is back (the script is empty: it answers with a valid summary).
    sweep = summaries_sweep.delay()
    log = worker.wait_for_log(succeeded(sweep.id, SWEEP))
    assert results(log, sweep.id, SWEEP) == ["1"]  # re-enqueued: the due one only
    assert "summary sweep: re-enqueued 1 conversations" in log
    conversation = wait_summary(cid)
    assert_one_summary(cid, school["alice"], DEFAULT_SUMMARY["title"], DEFAULT_SUMMARY["content"])
    [replaced] = summaries_of(cid)
    assert replaced.pk == fallback.pk and replaced.needs_review is False and replaced.confidence == 1.0
    assert conversation.summary_error == ""
    assert conversation.summary_attempts == 4
    assert len(llm.calls("summary")) == 5
    assert Conversation.objects.get(pk=recent.pk).summary_status == "pending"
    assert summaries_of(recent.pk) == []


# --- invalid answers ----------------------------------------------------------------------------


def test_invalid_json_once_is_repaired_and_stored(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """An answer that is not the JSON asked for gets one repair request telling the model what was
    wrong; a valid second answer is stored."""
    llm.script("summary", {"content": "Sure! The student worked on fractions."}, SUMMARY_ANSWER)
    cid = converse(clients["alice"])
    end(clients["alice"], cid)

    conversation = wait_summary(cid)
    assert conversation.summary_error == ""
    assert_one_summary(cid, school["alice"])
    first, repair = llm.calls("summary")
    assert repair["messages"][: len(first["messages"])] == first["messages"]
    assert repair["messages"][-2] == {"role": "assistant", "content": "Sure! The student worked on fractions."}
    assert repair["messages"][-1]["content"].startswith("That answer is not valid: It contains no JSON object.")
    assert [u.ok for u in summary_usage(cid)] == [True, True]


def test_invalid_json_twice_stores_a_fallback_and_is_logged(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient]
) -> None:
    """Two invalid answers (the first and the repair) store a fallback memory needing review,
    record the error, log it, and are not retried: a new delivery leaves it as it is."""
    short = json.dumps({"title": "Fractions", "content": "Fractions."})
    llm.script("summary", {"content": "not json at all"}, {"content": short})
    cid = converse(clients["alice"])
    end(clients["alice"], cid)

    conversation = wait_summary(cid, "fallback")
    assert conversation.summary_error.startswith("invalid summary:")
    assert "Title must have 4 to 10 words" in conversation.summary_error
    [fallback] = summaries_of(cid)
    assert fallback.needs_review is True
    logged = f"summary: conversation {cid}: no summary (invalid summary:"
    [line] = [line for line in worker.wait_for_log(logged).splitlines() if logged in line]
    assert " ERROR " in line, line
    assert len(llm.calls("summary")) == 2

    again = send_summarize(cid)
    assert results(worker.wait_for_log(succeeded(again)), again) == ["'already_done'"]
    assert len(llm.calls("summary")) == 2
    assert Conversation.objects.get(pk=cid).summary_status == "fallback"
    assert [m.pk for m in summaries_of(cid)] == [fallback.pk]


# --- nothing to summarise -----------------------------------------------------------------------


def test_conversation_without_student_message_is_skipped_without_the_model(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """Ending a conversation with no student message marks its summary skipped, enqueues nothing,
    stores no memory and never calls the model; a summary task that still reaches the worker for
    such a conversation marks it skipped the same way."""
    resp = clients["alice"].post("/api/v1/conversations/", {"subject": "Maths"}, format="json")
    assert resp.status_code == 201, resp.content
    empty = int(resp.json()["id"])
    assert end(clients["alice"], empty)["summary_status"] == "skipped"

    # A conversation ended as pending, but without student message, delivered to the worker.
    now = timezone.now()
    stray = Conversation.objects.create(
        student=school["alice"],
        status=Conversation.Status.ENDED,
        last_activity_at=now,
        ended_at=now,
        summary_status=Conversation.SummaryStatus.PENDING,
        summary_requested_at=now,
    )
    task_id = send_summarize(stray.pk)
    log = worker.wait_for_log(succeeded(task_id))

    # The end enqueued nothing: the only summary task the worker received is the one sent above.
    assert log.count(f"Task {SUMMARIZE}[") == 2  # received + succeeded, one task
    assert results(log, task_id) == ["'skipped'"]
    for cid in (empty, stray.pk):
        assert Conversation.objects.get(pk=cid).summary_status == "skipped"
        assert summaries_of(cid) == []
    assert llm.calls("summary") == []
    assert not LLMUsage.objects.filter(purpose=LLMUsage.Purpose.SUMMARY).exists()


# --- a worker dying -----------------------------------------------------------------------------


def test_worker_killed_mid_call_is_recovered_as_soon_as_a_worker_is_back(
    worker_env: dict[str, str],
    llm: ScriptedLLM,
    clients: dict[str, APIClient],
    school: dict[str, Any],
) -> None:
    """A worker SIGKILLed while waiting for the model: the summary stays pending, owned by a dead
    process. The next worker to start on this host takes it over at once (its start-up sweep),
    on the filesystem broker (which deleted the message when it handed it out) as on Redis
    (which would only make it visible again after the visibility timeout, an hour by default).
    One summary is stored, within seconds of the restart, far inside the 2-minute bound."""
    queue = worker_env["CELERY_QUEUE"]
    first = Worker(llm, queue, worker_env).start()
    second: Worker | None = None
    try:
        # Long enough to be killed inside the call.
        llm.script("summary", {"delay": 4.0, **SUMMARY_ANSWER})
        cid = converse(clients["alice"])
        end(clients["alice"], cid)
        wait_for(lambda: llm.calls("summary"))  # the first worker is inside the model call
        first.kill()
        assert first.proc is not None and first.proc.returncode == -9
        conversation = Conversation.objects.get(pk=cid)
        assert conversation.summary_status == "pending" and conversation.summary_owner.endswith(f":{first.proc.pid}")

        restarted = time.monotonic()
        second = Worker(llm, queue, worker_env).start()
        conversation = wait_summary(cid, timeout=60)
        recovered_in = time.monotonic() - restarted
        second.wait_for_log("summary sweep: re-enqueued 1 conversations")
    finally:
        first.stop()
        if second is not None:
            second.stop()

    assert recovered_in < 120
    assert conversation.summary_status == "done" and conversation.summary_owner == ""
    assert_one_summary(cid, school["alice"], DEFAULT_SUMMARY["title"], DEFAULT_SUMMARY["content"])
    assert len(llm.calls("summary")) == 2
    assert f"{SUMMARIZE}[" in first.log_text() and "'stored'" not in first.log_text()  # killed mid-call


def test_a_summary_not_enqueued_while_the_broker_was_down_is_swept_a_minute_later(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any]
) -> None:
    """The broker refuses the summary task when the conversation ends (it is down): the end still
    answers 202 and the summary is pending, never started. The first sweep after
    SUMMARY_UNSTARTED_AFTER_SECONDS (beat sends one every minute) enqueues it: stored."""
    from unittest import mock

    from kombu.exceptions import OperationalError as BrokerDown

    cid = converse(clients["alice"])
    with mock.patch.object(conversation_summarize, "delay", side_effect=BrokerDown("Error 111 connecting")):
        end(clients["alice"], cid)
    conversation = Conversation.objects.get(pk=cid)
    assert conversation.summary_status == "pending" and conversation.summary_owner == ""

    # Within the first minute the sweep leaves it alone (its message may still be on its way).
    first = summaries_sweep.delay()
    assert results(worker.wait_for_log(succeeded(first.id, SWEEP)), first.id, SWEEP) == ["0"]
    # A minute later (the broker is back), the next sweep enqueues it.
    Conversation.objects.filter(pk=cid).update(summary_requested_at=timezone.now() - timedelta(seconds=61))
    sweep = summaries_sweep.delay()
    assert results(worker.wait_for_log(succeeded(sweep.id, SWEEP)), sweep.id, SWEEP) == ["1"]
    wait_summary(cid)
    assert_one_summary(cid, school["alice"], DEFAULT_SUMMARY["title"], DEFAULT_SUMMARY["content"])


# --- idle conversations -------------------------------------------------------------------------


def test_idle_conversation_is_ended_by_the_task_and_summarised(
    worker: Worker, llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any], settings: Any
) -> None:
    """conversations_end_idle, run by the worker, ends the conversations idle for longer than
    CONVERSATION_IDLE_MINUTES, and their summary is then stored; an active one is left alone."""
    llm.script("summary", SUMMARY_ANSWER)
    idle = converse(clients["alice"])
    active = converse(clients["bob"], "What is a prime number?")
    idle_since = timezone.now() - timedelta(minutes=settings.CONVERSATION_IDLE_MINUTES + 1)
    Conversation.objects.filter(pk=idle).update(last_activity_at=idle_since)

    result = conversations_end_idle.delay()
    log = worker.wait_for_log(succeeded(result.id, END_IDLE))
    assert results(log, result.id, END_IDLE) == ["1"]

    conversation = wait_summary(idle)
    assert conversation.status == "ended" and conversation.ended_at is not None
    assert_one_summary(idle, school["alice"])
    still = Conversation.objects.get(pk=active)
    assert (still.status, still.summary_status) == ("active", "not_requested")
    assert not AIMemory.objects.filter(Q(source_conversation_id=active) | Q(student=school["bob"])).exists()
    assert len(llm.calls("summary")) == 1
