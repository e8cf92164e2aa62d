"""Logs: JSON lines carrying the request id, the user, conversation and turn ids, and the Celery
task's; the request id follows the work into the tasks it enqueues (a real worker); no message
text or memory content is logged."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from conversations.models import Conversation, Message
from core.logging import ContextFilter, JsonFormatter
from core.request_id import (
    HEADER,
    context_begin,
    context_end,
    context_fields,
    request_id_accepted,
    task_context_begin,
    task_headers,
)
from memory.models import AIMemory
from tests.conftest import Worker, wait_for
from tests.conversations.test_asgi_server import serving
from tests.llm_server import ScriptedLLM

SUMMARIZE = "conversations.tasks.conversation_summarize"
EXTRACT = "memory.tasks.memory_facts_extract"
# A sentence the summary keeps word for word and the extraction turns into a fact
# (tests.llm_server: default_summary, default_extraction): it reaches every stage's data.
SECRET_WORD = "quasarmarmalade"
SECRET = (
    f"Fact: Wendeline keeps a {SECRET_WORD} tuba | Wendeline hides a {SECRET_WORD} tuba under the violet staircase."
)


class JsonLog:
    """Every record that reaches the root logger, as the production handler writes it."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonFormatter())
        self.handler.addFilter(ContextFilter())

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines() if line.startswith("{")]


@pytest.fixture
def json_log() -> Iterator[JsonLog]:
    log = JsonLog()
    root = logging.getLogger()
    root.addHandler(log.handler)
    yield log
    root.removeHandler(log.handler)
    context_end()


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON lines of a process's output (a Celery worker also prints its banner as text)."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def new_conversation(client: APIClient) -> int:
    resp = client.post("/api/v1/conversations/", {"subject": "Music"}, format="json")
    assert resp.status_code == 201, resp.content
    return int(resp.json()["id"])


# --- The request id --------------------------------------------------------------------------------


@pytest.mark.parametrize("sent", ["0f8fe5c2-6a4e-4c1b-9a55-1f9d3c2b7e10", "7F000001:8296_7F00001E:1F90", "a"])
def test_a_sane_request_id_is_kept(sent: str) -> None:
    """A request id of letters, digits and `._:+/=-`, up to 128 characters, is kept as sent."""
    assert request_id_accepted(sent) == sent


@pytest.mark.parametrize("sent", [None, "", "x" * 129, "two words", "line\nbreak", "<script>", "é" * 8])
def test_an_insane_request_id_is_replaced(sent: str | None) -> None:
    """A missing, overlong or oddly written request id is replaced by a new one (32 hex digits)."""
    accepted = request_id_accepted(sent)
    assert accepted != sent
    assert re.fullmatch(r"[0-9a-f]{32}", accepted)
    assert request_id_accepted(sent) != accepted  # a new one each time


def test_the_response_returns_the_request_id(clients: dict[str, APIClient]) -> None:
    """The response's X-Request-ID is the one the client sent if sane, else a new one per request."""
    resp = clients["alice"].get("/api/v1/conversations/", HTTP_X_REQUEST_ID="lb-0001-abcd")
    assert resp.status_code == 200
    assert resp["X-Request-ID"] == "lb-0001-abcd"
    first = clients["alice"].get("/api/v1/conversations/", HTTP_X_REQUEST_ID="not sane!")["X-Request-ID"]
    second = clients["alice"].get("/api/v1/conversations/")["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", first) and re.fullmatch(r"[0-9a-f]{32}", second)
    assert first != second
    # Errors too (an unknown URL, answered outside DRF).
    assert clients["alice"].get("/no/such/page", HTTP_X_REQUEST_ID="lb-0002")["X-Request-ID"] == "lb-0002"


def test_a_requests_log_lines_are_json_with_its_request_and_user_ids(
    clients: dict[str, APIClient], school: dict[str, Any], json_log: JsonLog
) -> None:
    """A line logged while a request is served (Django's own 404 warning here) is one JSON object
    with the timestamp, level, logger, message, the request's id and the authenticated user's."""
    carols = Conversation.objects.create(student=school["carol"], subject="Maths", last_activity_at=timezone.now())
    resp = clients["alice"].get(f"/api/v1/conversations/{carols.pk}/", HTTP_X_REQUEST_ID="req-404-alice")
    assert resp.status_code == 404
    lines = [line for line in json_log.lines() if line.get("request_id") == "req-404-alice"]
    assert lines, json_log.text
    line = next(line for line in lines if line["logger"] == "django.request")
    assert line["level"] == "WARNING"
    assert line["message"] == f"Not Found: /api/v1/conversations/{carols.pk}/"
    assert line["user_id"] == school["alice"].pk
    assert line["status_code"] == 404
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", line["timestamp"])
    # Nothing else from the record (Django attaches the request object to it).
    assert set(line) <= {"timestamp", "level", "logger", "message", "request_id", "user_id", "status_code"}


def test_a_turns_lines_carry_its_conversation_and_turn_ids(
    llm: ScriptedLLM, clients: dict[str, APIClient], school: dict[str, Any], json_log: JsonLog
) -> None:
    """The model failing in a turn is logged with the request id, the user, the conversation and
    the turn (the student message's id), and not with the message's text."""
    cid = new_conversation(clients["alice"])
    llm.script("chat", {"status": 400, "body": {"error": {"message": "bad request", "type": "invalid_request_error"}}})
    resp = clients["alice"].post(
        f"/api/v1/conversations/{cid}/messages/",
        {"content": SECRET, "client_message_id": "m1"},
        format="json",
        HTTP_X_REQUEST_ID="req-turn-1",
    )
    assert resp.status_code == 502, resp.content
    message = Message.objects.get(conversation_id=cid, role=Message.Role.STUDENT)
    failed = [line for line in json_log.lines() if line["message"].startswith("llm call failed purpose=chat")]
    assert len(failed) == 1, json_log.text
    assert failed[0]["request_id"] == "req-turn-1"
    assert failed[0]["user_id"] == school["alice"].pk
    assert (failed[0]["conversation_id"], failed[0]["turn_id"]) == (cid, message.pk)
    assert SECRET_WORD not in json_log.text.lower()


# --- Into the Celery tasks -------------------------------------------------------------------------


def test_the_signals_carry_the_context_into_a_task_and_end_it_after() -> None:
    """What a task is published with (tutor.celery: before_task_publish) is the sender's request,
    user, conversation and turn ids; the task runs with them and its own name and id
    (task_prerun), and nothing is left once it ended (task_postrun)."""
    from tutor import celery as signals

    context_begin(request_id="req-1", user_id=7, conversation_id=3, turn_id=11, task_name="sender", task_id="s-1")
    headers: dict[str, object] = {}
    signals._carry_log_context(headers=headers)
    assert headers == {HEADER: {"request_id": "req-1", "user_id": 7, "conversation_id": 3, "turn_id": 11}}
    assert task_headers() == headers[HEADER]
    context_end()

    class Request:
        log_context = headers[HEADER]

    class Task:
        name = "conversations.tasks.conversation_summarize"
        request = Request()

    signals._begin_task_log_context(task_id="t-1", task=Task())
    assert context_fields() == {
        "request_id": "req-1",
        "user_id": 7,
        "conversation_id": 3,
        "turn_id": 11,
        "task_name": "conversations.tasks.conversation_summarize",
        "task_id": "t-1",
    }
    signals._end_task_log_context()
    assert context_fields() == {}
    # A task sent outside any request carries nothing, and runs with its own name and id only.
    empty: dict[str, object] = {}
    signals._carry_log_context(headers=empty)
    assert empty == {}
    task_context_begin(carried=None, task_name="beat.task", task_id="t-2")
    assert context_fields() == {"task_name": "beat.task", "task_id": "t-2"}
    context_end()


@pytest.mark.worker
def test_a_summary_logs_the_request_id_of_the_request_that_ended_the_conversation(
    worker_env: dict[str, str],
    llm: ScriptedLLM,
    clients: dict[str, APIClient],
    school: dict[str, Any],
    json_log: JsonLog,
) -> None:
    """A turn, then the end of the conversation: the summary task, and the fact extraction it
    enqueues, log JSON lines (LOG_FORMAT=json) in a real worker with the request id of the end
    request and the student's id. The student's distinctive sentence, kept in the summary and in
    a fact, appears in no log line of the web process or the worker."""
    worker = Worker(llm, worker_env["CELERY_QUEUE"], {**worker_env, "LOG_FORMAT": "json"}).start()
    try:
        alice = clients["alice"]
        cid = new_conversation(alice)
        resp = alice.post(
            f"/api/v1/conversations/{cid}/messages/", {"content": SECRET, "client_message_id": "m1"}, format="json"
        )
        assert resp.status_code == 201, resp.content
        resp = alice.post(f"/api/v1/conversations/{cid}/end/", HTTP_X_REQUEST_ID="req-end-0001")
        assert resp.status_code == 202, resp.content
        assert resp["X-Request-ID"] == "req-end-0001"

        facts = AIMemory.objects.filter(student=school["alice"], content__contains=SECRET_WORD)
        summary = wait_for(lambda: facts.filter(kind=AIMemory.Kind.SUMMARY).first())
        wait_for(lambda: facts.exclude(kind=AIMemory.Kind.SUMMARY).exists())
        worker.wait_for_log(f"Task {EXTRACT}[")
        log = worker.wait_for_log(" succeeded in ", count=2)
    finally:
        worker.stop()
    lines = json_lines(log)
    assert lines and "ready." in "".join(line["message"] for line in lines)
    for name in (SUMMARIZE, EXTRACT):
        ran = [line for line in lines if line.get("task_name") == name]
        assert ran, log[-3000:]
        assert {line.get("request_id") for line in ran} == {"req-end-0001"}
        assert {line.get("user_id") for line in ran} == {school["alice"].pk}
        assert len({line["task_id"] for line in ran}) == 1
        assert all({"timestamp", "level", "logger", "message"} <= set(line) for line in ran)
    assert SECRET_WORD in summary.content
    assert SECRET_WORD not in log.lower()
    assert SECRET_WORD not in json_log.text.lower()


@pytest.mark.django_db(transaction=True)
def test_the_production_server_logs_json_lines_only_its_supervisors_included(
    worker_env: dict[str, str], tmp_path: Path
) -> None:
    """scripts/serve.sh with LOG_FORMAT=json and two worker processes: every line it writes,
    from its start to its stop, is one JSON object, uvicorn's supervisor's lines too."""
    log = tmp_path / "serve.log"
    with serving(worker_env, log, LOG_FORMAT="json") as (base, _proc):
        assert httpx2.get(f"{base}/no/such/page", headers={"X-Request-ID": "serve-json-1"}).status_code == 404
    text = log.read_text()
    not_json = [line for line in text.splitlines() if line.strip() and not _is_json_object(line)]
    assert not not_json, text
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    loggers = {line["logger"] for line in lines}
    assert {"uvicorn.error", "django.request"} <= loggers, loggers
    # No access log unless WEB_ACCESS_LOG=1: its lines hold the URLs' query strings.
    assert "uvicorn.access" not in loggers, loggers
    assert any(line["message"].startswith("Started parent process") for line in lines), lines
    assert any(line.get("request_id") == "serve-json-1" for line in lines), lines


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
