"""A student's message is never dropped: idempotent sends, model failures, concurrent sends."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from conversations.models import Message
from llm.models import LLMUsage
from tests.conftest import client_for
from tests.conversations.test_turn import send, start


def test_retry_with_same_client_message_id_never_duplicates(clients, llm):
    """A retry of a completed send returns the same message and reply, and calls no model."""
    cid = start(clients["alice"])
    first = send(clients["alice"], cid, "hello", "same")
    second = send(clients["alice"], cid, "hello", "same")
    assert first.status_code == second.status_code == 201
    assert first.json()["reply"]["id"] == second.json()["reply"]["id"]
    assert first.json()["student_message"]["id"] == second.json()["student_message"]["id"]
    assert second.json()["replayed"] is True
    assert Message.objects.filter(conversation_id=cid).count() == 2
    assert len(llm.calls("chat")) == 1


def test_reusing_client_message_id_for_other_content_is_409(clients, llm):
    """The same client_message_id with different content is a conflict, not a silent overwrite."""
    cid = start(clients["alice"])
    send(clients["alice"], cid, "hello", "same")
    resp = send(clients["alice"], cid, "something else", "same")
    assert resp.status_code == 409
    assert Message.objects.filter(conversation_id=cid, role="student").get().content == "hello"


@pytest.mark.parametrize(
    ("step", "status", "code"),
    [
        ({"status": 503}, 503, "model_unavailable"),
        ({"status": 500}, 503, "model_unavailable"),
        ({"status": 429, "body": {"error": {"message": "slow down", "type": "rate_limit"}}}, 503, "model_unavailable"),
        ({"drop": True}, 503, "model_unavailable"),
        ({"raw": "this is not json"}, 502, "model_bad_response"),
        ({"raw": '{"choices": []}'}, 502, "model_bad_response"),
        ({"content": ""}, 502, "model_bad_response"),
    ],
)
def test_model_failure_keeps_message_and_retry_completes(clients, llm, step, status, code):
    """On a model failure the message stays stored, the API says a retry is safe, and the retry
    with the same client_message_id completes the turn without duplicating anything."""
    llm.script("chat", step, {"content": "Here is the answer."})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "help me", "m1")
    assert resp.status_code == status, resp.content
    err = resp.json()["error"]
    assert err["code"] == code and err["retry_safe"] is True
    assert "retry" in err["message"]
    stored = Message.objects.get(conversation_id=cid)
    assert stored.role == "student" and stored.content == "help me"
    assert err["details"]["student_message_id"] == stored.pk
    assert LLMUsage.objects.filter(ok=False).count() == 1

    retry = send(clients["alice"], cid, "help me", "m1")
    assert retry.status_code == 201, retry.content
    assert retry.json()["student_message"]["id"] == stored.pk
    assert retry.json()["reply"]["content"] == "Here is the answer."
    assert list(Message.objects.filter(conversation_id=cid).values_list("seq", "role")) == [
        (1, "student"),
        (2, "tutor"),
    ]


def test_model_timeout_is_503(clients, llm, settings):
    """A model slower than LLM_TIMEOUT_SECONDS is a 503 and the message stays stored."""
    settings.LLM_TIMEOUT_SECONDS = 0.5
    llm.script("chat", {"delay": 1.5, "content": "too late"})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "help", "m1")
    assert resp.status_code == 503
    assert Message.objects.filter(conversation_id=cid, role="student").count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_sends_are_serialised_in_order(school, llm):
    """Two sends to one conversation at once: both kept, the second answered after the first, in order."""
    llm.script("chat", {"delay": 0.6, "content": "first reply"}, {"content": "second reply"})
    alice = client_for(school["alice"])
    cid = start(alice)
    results: dict[str, int] = {}

    def go(cmid: str, content: str) -> None:
        try:
            results[cmid] = send(client_for(school["alice"]), cid, content, cmid).status_code
        finally:
            connection.close()

    t1 = threading.Thread(target=go, args=("c1", "first question"))
    t1.start()
    # Let the first send take the lock and reach the (slow) model before the second starts.
    import time

    time.sleep(0.2)
    t2 = threading.Thread(target=go, args=("c2", "second question"))
    t2.start()
    t1.join(20)
    t2.join(20)
    assert results == {"c1": 201, "c2": 201}
    rows = list(Message.objects.filter(conversation_id=cid).order_by("seq").values_list("seq", "role", "content"))
    assert rows == [
        (1, "student", "first question"),
        (2, "tutor", "first reply"),
        (3, "student", "second question"),
        (4, "tutor", "second reply"),
    ]
    # The second call saw the first exchange in its history.
    second_prompt = llm.calls("chat")[1]["messages"]
    assert {"role": "assistant", "content": "first reply"} in second_prompt


def test_every_model_call_of_a_turn_is_metered(clients, llm):
    """A tool round that succeeded before the final call failed is still metered, and a
    successful turn's calls are stored with the reply."""
    import json as _json

    args = _json.dumps({"title": "Prefers visual explanations of fractions", "content": "Draw pies."})
    llm.script(
        "chat",
        {"content": "", "tool_calls": [{"name": "save_memory", "arguments": args}]},
        {"status": 503},
        {"content": "", "tool_calls": [{"name": "save_memory", "arguments": args}]},
        {"content": "Done."},
    )
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "help", "m1").status_code == 503
    assert sorted(LLMUsage.objects.values_list("ok", flat=True)) == [False, True]
    assert send(clients["alice"], cid, "help", "m1").status_code == 201
    assert sorted(LLMUsage.objects.values_list("ok", flat=True)) == [False, True, True, True]
    assert set(LLMUsage.objects.values_list("conversation_id", flat=True)) == {cid}
