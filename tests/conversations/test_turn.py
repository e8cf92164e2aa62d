"""A chat turn end to end over the API, with the real openai SDK against the scripted server."""

from __future__ import annotations

import json

from conversations.models import Message
from llm.models import LLMUsage
from memory.models import AIMemory


def start(client):
    resp = client.post("/api/v1/conversations/", {"subject": "Maths"}, format="json")
    assert resp.status_code == 201, resp.content
    return resp.json()["id"]


def send(client, conversation_id, content="How do I add 1/2 and 1/3?", cmid="m1"):
    return client.post(
        f"/api/v1/conversations/{conversation_id}/messages/",
        {"content": content, "client_message_id": cmid},
        format="json",
    )


def test_send_stores_message_and_reply_with_token_counts(clients, llm):
    """A send stores the student message, calls the model and stores the reply with its tokens."""
    llm.script("chat", {"content": "Find a common denominator first: 6."})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["student_message"]["content"] == "How do I add 1/2 and 1/3?"
    assert body["reply"]["content"] == "Find a common denominator first: 6."
    assert body["reply"]["reply_to"] == body["student_message"]["id"]
    assert body["student_message"]["token_count"] > 0
    assert body["reply"]["prompt_tokens"] > 0
    assert LLMUsage.objects.filter(purpose="chat", ok=True).count() == 1
    sent = llm.calls("chat")[0]
    assert sent["messages"][-1] == {"role": "user", "content": "How do I add 1/2 and 1/3?"}
    assert sent["tools"][0]["function"]["name"] == "save_memory"


def test_save_memory_tool_call_stores_a_note(clients, llm, school):
    """A save_memory call stores a note and the model then finishes its answer."""
    args = json.dumps({"title": "Struggles with adding unlike fractions", "content": "Needs common denominators."})
    llm.script(
        "chat",
        {"content": "", "tool_calls": [{"name": "save_memory", "arguments": args}]},
        {"content": "Noted! Let's practise."},
    )
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 201, resp.content
    assert resp.json()["reply"]["content"] == "Noted! Let's practise."
    note = AIMemory.objects.get(student=school["alice"])
    assert note.kind == "note" and note.source == "save_memory_tool"
    assert note.source_conversation_id == cid
    second = llm.calls("chat")[1]
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["content"].startswith("Saved memory")
    assert Message.objects.filter(conversation_id=cid).count() == 2


def test_a_reply_with_a_nul_byte_is_stored_without_it(clients, llm):
    """PostgreSQL refuses NUL in text: a model answer holding one (and a lone surrogate, which
    UTF-8 cannot encode) is stored and answered without them, instead of failing the turn."""
    llm.script("chat", {"content": "Half\x00 of six\ud800 is three."})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 201, resp.content
    assert resp.json()["reply"]["content"] == "Half of six is three."
    reply = Message.objects.get(conversation_id=cid, role=Message.Role.TUTOR)
    assert reply.content == "Half of six is three."
