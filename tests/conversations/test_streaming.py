"""The streamed chat turn (Server-Sent Events), in process, with the real openai SDK streaming from
the scripted server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from conversations.models import Message
from llm.models import LLMUsage
from memory.models import AIMemory
from tests.conversations.test_turn import send, start


def parse_sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


class AsyncUserClient:
    """Django's AsyncClient, authenticated with the user's token."""

    def __init__(self, user: Any) -> None:
        token, _ = Token.objects.get_or_create(user=user)
        self.auth = f"Token {token.key}"
        self.client = AsyncClient()

    def post(self, path: str, data: dict[str, Any], **headers: str) -> Any:
        return self.client.post(
            path, data, content_type="application/json", headers={"Authorization": self.auth, **headers}
        )


def async_client(user: Any) -> AsyncUserClient:
    return AsyncUserClient(user)


def post_stream(client: AsyncUserClient, cid: int, content: str, cmid: str) -> Any:
    return client.post(
        f"/api/v1/conversations/{cid}/messages/",
        {"content": content, "client_message_id": cmid},
        Accept="text/event-stream",
    )


async def read_all(response: Any) -> bytes:
    return b"".join([chunk async for chunk in response.streaming_content])


async def wait_for_reply(cid: int, timeout: float = 10.0) -> Message:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        reply = await sync_to_async(Message.objects.filter(conversation_id=cid, role="tutor").first)()
        if reply is not None:
            return reply
        await asyncio.sleep(0.05)
    raise AssertionError("no reply stored")


def test_stream_sends_message_deltas_then_done(school, clients, llm):
    """The events come in order: the stored student message, the reply in chunks, the stored reply."""
    llm.script("chat", {"content": "Find a common denominator. Six works for halves and thirds. Then add them."})
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> Any:
        response = await post_stream(client, cid, "How do I add 1/2 and 1/3?", "s1")
        return response, await read_all(response)

    response, raw = async_to_sync(go)()
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    events = parse_sse(raw)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "message" and kinds[-1] == "done"
    assert set(kinds[1:-1]) == {"delta"} and len(kinds) > 4
    stored = Message.objects.get(conversation_id=cid, role="tutor")
    assert events[0][1]["id"] == stored.reply_to_id
    assert "".join(data["content"] for kind, data in events if kind == "delta") == stored.content
    done = events[-1][1]
    assert done["id"] == stored.pk and done["replayed"] is False
    assert done["prompt_tokens"] > 0 and done["completion_tokens"] > 0 and done["model"]
    assert llm.calls("chat")[0]["stream"] is True
    assert LLMUsage.objects.get().ok is True


def test_streamed_tool_calls_with_repeated_ids_save_a_note(school, clients, llm):
    """Tool calls streamed in fragments, with the id and name repeated in every chunk as
    llama-cpp-python sends them, save one note (a `memory` event); the assistant message that
    carries the calls goes back with content "", never null."""
    args = json.dumps({"title": "Struggles with adding unlike fractions", "content": "Needs common denominators."})
    llm.script(
        "chat",
        {"content": "", "tool_calls": [{"name": "save_memory", "arguments": args}]},
        {"content": "Noted! Let's practise."},
    )
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> bytes:
        return await read_all(await post_stream(client, cid, "I never get fractions right", "s1"))

    events = parse_sse(async_to_sync(go)())
    assert [k for k, _ in events if k != "delta"] == ["message", "memory", "done"]
    note = AIMemory.objects.get(student=school["alice"])
    assert note.title == "Struggles with adding unlike fractions"
    assert dict(events)["memory"]["id"] == note.pk
    second = llm.calls("chat")[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant" and m.get("tool_calls"))
    assert assistant["content"] == ""
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == json.loads(args)
    assert second[-1]["role"] == "tool" and second[-1]["content"].startswith("Saved memory")


@pytest.mark.parametrize("failure", [{"drop_after": 3}, {"error_after": 3}, {"cut_after": 3}])
def test_model_failure_mid_stream_is_an_error_event_and_the_retry_completes(school, clients, llm, failure):
    """A stream cut halfway, ended by the server's error event, or ended early without a finish
    reason, ends with an `error` event (retry_safe) and stores nothing of the partial answer; the
    retry completes the turn."""
    llm.script("chat", {"content": "This answer will be cut off halfway through.", **failure})
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> bytes:
        return await read_all(await post_stream(client, cid, "help", "s1"))

    events = parse_sse(async_to_sync(go)())
    assert events[-1][0] == "error"
    error = events[-1][1]["error"]
    assert error["code"] == "model_unavailable" and error["retry_safe"] is True
    assert error["details"]["student_message_id"] == events[0][1]["id"]
    assert LLMUsage.objects.get().ok is False
    retry = send(clients["alice"], cid, "help", "s1")
    assert retry.status_code == 201, retry.content
    assert retry.json()["replayed"] is False
    assert list(Message.objects.filter(conversation_id=cid).values_list("role", flat=True)) == ["student", "tutor"]


def test_client_gone_mid_stream_loses_nothing_and_retries_never_call_the_model_again(school, clients, llm):
    """A client that stops reading after the first delta: the turn completes and is stored. A
    retry during the turn joins it, a retry after it replays it: one model call in all."""
    long_reply = "A long reply. It takes a while. To write out. In full."
    llm.script("chat", {"content": long_reply, "stream_seconds": 1.0})
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> tuple[list[tuple[str, dict[str, Any]]], int, dict[str, Any], dict[str, Any]]:
        response = await post_stream(client, cid, "explain fractions", "s1")
        stream = response.streaming_content
        first = [await anext(stream), await anext(stream)]
        await stream.aclose()  # the client is gone
        stored_before = await sync_to_async(Message.objects.filter(conversation_id=cid, role="tutor").count)()
        during = await client.post(
            f"/api/v1/conversations/{cid}/messages/",
            {"content": "explain fractions", "client_message_id": "s1"},
        )
        reply = await wait_for_reply(cid)
        after = await client.post(
            f"/api/v1/conversations/{cid}/messages/",
            {"content": "explain fractions", "client_message_id": "s1"},
        )
        assert reply.content == during.json()["reply"]["content"]
        return parse_sse(b"".join(first)), stored_before, during.json(), after.json()

    first, stored_before, during, after = async_to_sync(go)()
    assert first[0][0] == "message" and "delta" in [k for k, _ in first]
    assert stored_before == 0  # the client left before the reply existed
    assert during["reply"]["content"] == long_reply
    assert during["replayed"] is False  # joined the turn in progress
    assert after["replayed"] is True and after["reply"]["id"] == during["reply"]["id"]
    assert len(llm.calls("chat")) == 1
    assert Message.objects.filter(conversation_id=cid).count() == 2


def test_another_users_send_gets_404_without_waiting_for_the_owners_turn(school, clients, llm):
    """The visibility check comes before anything waits: while Alice's turn is in progress, Bob's
    send to her conversation is a 404 at once, and her turn goes on."""
    llm.script("chat", {"content": "Slow answer.", "delay": 1.0})
    cid = start(clients["alice"])
    alice = async_client(school["alice"])
    bob = async_client(school["bob"])
    teacher_b = async_client(school["teacher_b"])

    async def go() -> tuple[int, int, int, Any]:
        response = await post_stream(alice, cid, "question", "s1")
        stream = response.streaming_content
        await anext(stream)  # Alice's message is stored; the model is thinking
        other = await post_stream(bob, cid, "question", "s1")
        teacher = await post_stream(teacher_b, cid, "question", "s1")
        replies_then = await sync_to_async(Message.objects.filter(conversation_id=cid, role="tutor").count)()
        rest = b"".join([chunk async for chunk in stream])
        return other.status_code, teacher.status_code, replies_then, rest

    bob_status, teacher_status, replies_then, rest = async_to_sync(go)()
    assert bob_status == 404 and teacher_status == 404
    assert replies_then == 0  # answered while Alice's turn was still in progress
    assert parse_sse(rest)[-1][0] == "done"


def test_a_request_cancelled_right_after_its_message_is_stored_still_gets_its_turn(school, clients, llm):
    """The client leaves while the turn is being opened, just after the message was stored and
    the conversation claimed: the turn still runs and stores its reply (no message left without
    a reply behind a lease until it expires)."""
    from unittest import mock

    from conversations.turn import claim, drive

    cid = start(clients["alice"])
    original = drive.turn_begin
    claimed = []
    raise_in_request = asyncio.Event()
    loop: asyncio.AbstractEventLoop | None = None

    def begin_then_leave(**kwargs):
        outcome = original(**kwargs)
        claimed.append(outcome)
        loop.call_soon_threadsafe(raise_in_request.set)  # the client goes away now
        return outcome

    async def go() -> None:
        nonlocal loop
        loop = asyncio.get_running_loop()
        request = asyncio.ensure_future(
            drive.turn_open(user=school["alice"], conversation_id=cid, content="hello", client_message_id="c1")
        )
        await raise_in_request.wait()
        request.cancel()
        await wait_for_reply(cid)

    with mock.patch.object(drive, "turn_begin", side_effect=begin_then_leave):
        async_to_sync(go)()
    assert isinstance(claimed[0], claim.Claimed)
    assert list(Message.objects.filter(conversation_id=cid).values_list("role", flat=True)) == ["student", "tutor"]


def test_a_streamed_reply_with_a_nul_byte_is_stored_and_sent_without_it(school, clients, llm):
    """A NUL (PostgreSQL refuses it in text) and a lone surrogate in a streamed answer are left
    out of the deltas and of the stored reply; the turn ends with `done`."""
    llm.script("chat", {"content": "Seven\x00, since 14 / 2\ud800 = 7."})
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> Any:
        response = await post_stream(client, cid, "And 14 / 2?", "s1")
        return await read_all(response)

    events = parse_sse(async_to_sync(go)())
    assert events[-1][0] == "done", events
    deltas = "".join(data["content"] for kind, data in events if kind == "delta")
    assert deltas == "Seven, since 14 / 2 = 7."
    assert Message.objects.get(conversation_id=cid, role="tutor").content == deltas
