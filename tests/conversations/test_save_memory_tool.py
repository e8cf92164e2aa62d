"""The save_memory tool: valid calls store notes, invalid ones get an error back, a cap applies."""

from __future__ import annotations

import json

from memory.models import AIMemory
from tests.conversations.test_turn import send, start


def tool_step(*calls):
    return {"content": "", "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def note(title="Struggles with fractions, strong in geometry", content="Use pictures."):
    return json.dumps({"title": title, "content": content})


def last_tool_output(llm, index=1):
    return [m for m in llm.calls("chat")[index]["messages"] if m["role"] == "tool"]


def test_invalid_arguments_return_an_error_to_the_model_and_the_turn_completes(clients, llm):
    """Bad arguments (short title, too long content, not JSON, unknown tool) never cause a 500."""
    llm.script(
        "chat",
        tool_step(
            ("save_memory", note(title="Too short")),
            ("save_memory", note(content="word " * 201)),
            ("save_memory", "{not json"),
            ("save_memory", "[1, 2]"),
            ("delete_everything", "{}"),
        ),
        {"content": "Let's continue."},
    )
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 201, resp.content
    assert resp.json()["reply"]["content"] == "Let's continue."
    outputs = [m["content"] for m in last_tool_output(llm)]
    assert len(outputs) == 5
    assert all(o.startswith("Error") for o in outputs)
    assert "4 to 10 words" in outputs[0]
    assert "200 words" in outputs[1]
    assert "unknown tool" in outputs[4]
    assert AIMemory.objects.count() == 0


def test_cap_per_conversation(clients, llm, settings):
    """At most SAVE_MEMORY_MAX_PER_CONVERSATION notes per conversation; the model is told the limit."""
    settings.SAVE_MEMORY_MAX_PER_CONVERSATION = 2
    calls = [("save_memory", note(title=f"Observation number {i} about the student")) for i in range(4)]
    llm.script("chat", tool_step(*calls), {"content": "ok"})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid).status_code == 201
    outputs = [m["content"] for m in last_tool_output(llm)]
    assert [o.startswith("Saved") for o in outputs] == [True, True, False, False]
    assert "limit" in outputs[2].lower()
    assert AIMemory.objects.filter(source_conversation_id=cid).count() == 2


def test_same_note_twice_is_stored_once(clients, llm):
    """A retried turn that saves the same note does not duplicate it."""
    llm.script("chat", tool_step(("save_memory", note()), ("save_memory", note())), {"content": "ok"})
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    assert AIMemory.objects.count() == 1
    assert last_tool_output(llm)[1]["content"].startswith("Already saved")


def test_a_model_that_keeps_calling_tools_is_a_502_and_the_message_is_kept(clients, llm, settings):
    """The tool loop is bounded: endless tool calls end in a retry-safe 502."""
    settings.MAX_TOOL_ROUNDS = 2
    for _ in range(3):
        llm.script("chat", tool_step(("save_memory", "{}")))
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 502
    assert resp.json()["error"]["retry_safe"] is True
