"""The conversations API: creation, listing, detail with paginated messages, validation, errors."""

from __future__ import annotations

import logging

import pytest

from conversations.models import Conversation, Message
from tests.conversations.test_turn import send, start


def test_create_and_list_newest_first(clients):
    """POST creates (201) with an optional subject; GET lists mine, newest first, paginated."""
    first = start(clients["alice"])
    resp = clients["alice"].post("/api/v1/conversations/", {}, format="json")
    assert resp.status_code == 201 and resp.json()["subject"] == ""
    second = resp.json()["id"]
    body = clients["alice"].get("/api/v1/conversations/").json()
    assert body["count"] == 2
    assert [c["id"] for c in body["results"]] == [second, first]


def test_a_new_conversation_ends_the_students_open_ones(clients, school):
    """Starting a conversation ends the student's open ones (their summaries are requested as
    for any end); another student's open conversation is left alone."""
    first = start(clients["alice"])
    second = start(clients["alice"])
    bobs = start(clients["bob"])
    third = clients["alice"].post("/api/v1/conversations/", {"subject": "Angles"}, format="json").json()
    assert third["status"] == "active"
    statuses = dict(Conversation.objects.values_list("pk", "status"))
    assert statuses[first] == statuses[second] == Conversation.Status.ENDED
    assert statuses[bobs] == Conversation.Status.ACTIVE
    assert Conversation.objects.filter(student=school["alice"], status=Conversation.Status.ACTIVE).count() == 1
    listed = clients["alice"].get("/api/v1/conversations/").json()["results"]
    assert [c["status"] for c in listed] == ["active", "ended", "ended"]


def test_detail_opens_on_the_latest_messages(clients, llm, settings):
    """GET /conversations/{id}/ returns the conversation and its latest messages, newest first,
    with the cursor of the older page."""
    cid = start(clients["alice"])
    for i in range(3):
        assert send(clients["alice"], cid, f"question {i}", f"m{i}").status_code == 201
    body = clients["alice"].get(f"/api/v1/conversations/{cid}/?limit=4").json()
    assert body["message_count"] == 6
    assert [m["seq"] for m in body["messages"]["results"]] == [6, 5, 4, 3]
    assert body["messages"]["next_before"] == body["messages"]["results"][-1]["id"]


def test_messages_page_backwards_with_a_cursor(clients, llm, settings):
    """GET .../messages/ pages newest first with ?before=<id>: no message is skipped or repeated,
    the oldest page says next_before null, and a bad cursor is a 400 in the envelope."""
    cid = start(clients["alice"])
    for i in range(3):
        assert send(clients["alice"], cid, f"question {i}", f"m{i}").status_code == 201
    url = f"/api/v1/conversations/{cid}/messages/"
    first = clients["alice"].get(f"{url}?limit=4").json()
    assert [m["seq"] for m in first["results"]] == [6, 5, 4, 3]
    older = clients["alice"].get(f"{url}?limit=4&before={first['next_before']}").json()
    assert [m["seq"] for m in older["results"]] == [2, 1]
    assert older["next_before"] is None
    assert older["results"][-1]["role"] == "student"
    exact = clients["alice"].get(f"{url}?limit=2&before={first['results'][1]['id']}").json()
    assert [m["seq"] for m in exact["results"]] == [4, 3]
    for bad in ("before=abc", "before=0", "limit=0", "limit=101", f"before={2**63}"):
        resp = clients["alice"].get(f"{url}?{bad}")
        assert resp.status_code == 400, bad
        assert resp.json()["error"]["code"] == "invalid"
    assert clients["bob"].get(url).status_code == 404


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"content": "", "client_message_id": "e1"}, "content"),
        ({"content": "   \n ", "client_message_id": "e2"}, "empty"),
        ({"content": 42, "client_message_id": "e3"}, "text"),
        ({"content": ["a"], "client_message_id": "e4"}, "text"),
        ({"content": {"a": 1}, "client_message_id": "e5"}, "text"),
        ({"client_message_id": "e6"}, "content"),
        ({"content": "hi"}, "client_message_id"),
        ({"content": "hi", "client_message_id": ""}, "client_message_id"),
        ({"content": "x" * 20_001, "client_message_id": "e7"}, "20000"),
    ],
)
def test_bad_message_input_is_400_with_a_message(clients, llm, payload, fragment):
    """Empty, non-text, missing or oversized content is a 400 with a readable message; nothing stored."""
    cid = start(clients["alice"])
    resp = clients["alice"].post(f"/api/v1/conversations/{cid}/messages/", payload, format="json")
    assert resp.status_code == 400, resp.content
    err = resp.json()["error"]
    assert err["code"] == "invalid"
    assert fragment in err["message"]
    assert Message.objects.count() == 0
    assert llm.calls() == []


def test_message_limit_comes_from_settings(clients, llm, settings):
    """The size limit is a setting."""
    settings.MESSAGE_MAX_CHARS = 10
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "x" * 11).status_code == 400
    assert send(clients["alice"], cid, "x" * 10).status_code == 201


def test_malformed_json_body_is_400(clients):
    """A body that is not JSON gets the same error envelope."""
    cid = start(clients["alice"])
    resp = clients["alice"].post(
        f"/api/v1/conversations/{cid}/messages/", data="{not json", content_type="application/json"
    )
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "parse_error"


def test_unknown_url_is_json_404(clients):
    """Even an unknown URL answers in the error envelope."""
    resp = clients["alice"].get("/api/v1/nope/")
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"


def test_end_answers_202_and_send_after_end_is_409(clients, llm):
    """Ending answers 202 at once; a new message to an ended conversation is 409 and not stored."""
    cid = start(clients["alice"])
    send(clients["alice"], cid, "hello", "m1")
    resp = clients["alice"].post(f"/api/v1/conversations/{cid}/end/")
    assert resp.status_code == 202
    assert resp.json()["status"] == "ended" and resp.json()["summary_status"] == "pending"
    again = clients["alice"].post(f"/api/v1/conversations/{cid}/end/")
    assert again.status_code == 202
    late = send(clients["alice"], cid, "one more thing", "m2")
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "conflict"
    assert Message.objects.filter(conversation_id=cid).count() == 2


def test_replay_of_answered_message_after_end_returns_the_reply(clients, llm):
    """A mobile retry of an answered message still gets its reply after the conversation ended."""
    cid = start(clients["alice"])
    first = send(clients["alice"], cid, "hello", "m1").json()
    clients["alice"].post(f"/api/v1/conversations/{cid}/end/")
    replay = send(clients["alice"], cid, "hello", "m1")
    assert replay.status_code == 201
    assert replay.json()["reply"]["id"] == first["reply"]["id"]


def test_no_model_configured_is_503_worded_for_the_student(clients, no_llm, caplog):
    """With no model configured the server runs and the chat answers a student 503 in words for
    a student: no variable, address or server to set (that is the operator's, in the log)."""
    cid = start(clients["alice"])
    with caplog.at_level(logging.WARNING):
        resp = send(clients["alice"], cid)
    assert resp.status_code == 503
    err = resp.json()["error"]
    assert err["code"] == "model_not_configured"
    assert err["message"] == "The tutor is not set up to answer yet. Your message is saved; send it again later."
    assert "no chat model configured" in caplog.text
    assert err["retry_safe"] is True
    # The student's message is kept.
    assert Message.objects.filter(conversation_id=cid, role="student").count() == 1


def test_ending_conversation_without_messages_skips_summary(clients):
    """A conversation with no student message is ended without a summary."""
    cid = start(clients["alice"])
    resp = clients["alice"].post(f"/api/v1/conversations/{cid}/end/")
    assert resp.json()["summary_status"] == "skipped"
    assert Conversation.objects.get(pk=cid).summary_status == "skipped"
