"""The product against a real model server nobody here wrote: llama-cpp-python's OpenAI-compatible
server with SmolLM2-135M-Instruct and a 4,096-token context (fixtures in conftest.py).

These tests check the protocol and the product's guarantees, not the model's wisdom: a turn is
answered (201, or a `done` event) with some text; a streamed tool call is assembled; every ended
conversation gets its summary memory; a conversation longer than the model's window keeps
working; a message too large for the window is refused with a clear 400.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from conversations.models import ContextCheckpoint, Conversation, Message
from llm import gateway
from llm.models import LLMUsage
from memory.models import AIMemory
from memory.tools import SaveMemory
from tests.conftest import Worker
from tests.conversations.test_streaming import async_client, parse_sse, post_stream, read_all
from tests.conversations.test_turn import send, start
from tests.real_model.conftest import CONTEXT_TOKENS, PATIENCE_SECONDS, TIMEOUT_SECONDS, RealModel

pytestmark = pytest.mark.real_model

FORCE_SAVE_MEMORY = {"type": "function", "function": {"name": "save_memory"}}
STUDENT_LINES = [
    "Can you help me with fractions?",
    "What is 3/4 of 12?",
    "I don't get why we flip the second fraction when dividing.",
    "How do I find the area of a triangle?",
    "Is 0.5 the same as 1/2?",
    "What's a prime number?",
    "Can you give me an easy practice question?",
    "I think the answer is 9.",
    "Why do negative times negative make a positive?",
    "Thanks, that helps!",
]


def error_of(resp: Any) -> str:
    """The response's status and body, for assertion messages."""
    return f"{resp.status_code} {resp.content.decode(errors='replace')[:600]}"


# --- 1. A chat turn ----------------------------------------------------------------------------


def test_chat_turn_over_the_json_api(clients: dict[str, APIClient], real_llm: RealModel) -> None:
    """A JSON send is answered 201 with a stored, non-empty reply from the real model."""
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1")
    assert resp.status_code == 201, error_of(resp)
    reply = resp.json()["reply"]
    assert reply["content"].strip()
    assert reply["prompt_tokens"] > 0 and reply["completion_tokens"] > 0


def test_chat_turn_streamed_as_server_sent_events(
    school: dict[str, Any], clients: dict[str, APIClient], real_llm: RealModel
) -> None:
    """With `Accept: text/event-stream` the turn streams `message`, deltas, then a `done` event
    whose content is the non-empty reply, equal to the deltas put together."""
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> tuple[int, bytes]:
        response = await post_stream(client, cid, "What is 3/4 of 12?", "s1")
        return response.status_code, await read_all(response)

    status, raw = async_to_sync(go)()
    assert status == 200, raw[:600]
    events = parse_sse(raw)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "message" and kinds[-1] == "done", events[-1]
    done = events[-1][1]
    assert done["content"].strip()
    assert "".join(data["content"] for kind, data in events if kind == "delta") == done["content"]


# --- 2. A forced tool round --------------------------------------------------------------------


def tool_messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a patient maths tutor for a 12-year-old student."},
        {"role": "user", "content": "Please remember that I always mix up numerators and denominators."},
    ]


def test_forced_tool_call_stream_and_follow_up(real_model: RealModel) -> None:
    """The server's own behaviour, through the openai SDK, that the gateway must cope with:

    - a streamed tool call (forced with `tool_choice`) repeats the call's id and name in every
      chunk, with the arguments in fragments that add up to JSON matching the tool's schema
      (tests/llm_server.py's `repeat_tool_ids` imitates this; change it if this changes). The
      grammar lets raw control characters (a newline) into JSON strings, which a strict
      `json.loads` refuses: they are read here with strict=False;
    - the next request, with the assistant's tool calls and the tool's result, is answered when
      the assistant content is "", and refused when it is null (tests/llm_server.py imitates it).
    """
    client = openai.OpenAI(base_url=real_model.base_url, api_key="x", timeout=TIMEOUT_SECONDS, max_retries=0)
    messages = tool_messages()
    stream = client.chat.completions.create(
        model=real_model.model,
        messages=[],
        stream=True,
        # Plain JSON, as the gateway sends it.
        extra_body={
            "messages": messages,
            "tools": [SaveMemory.schema],
            "tool_choice": FORCE_SAVE_MEMORY,
            "max_tokens": 256,  # without it the server may generate until its window is full
        },
    )
    chunks = [chunk.model_dump() for chunk in stream]
    calls = [call for c in chunks if c["choices"] for call in (c["choices"][0]["delta"]["tool_calls"] or [])]
    assert len(calls) >= 2, chunks
    assert {(call["index"], call["id"], call["function"]["name"]) for call in calls} == {
        (0, calls[0]["id"], "save_memory")
    }, calls
    arguments = "".join(call["function"]["arguments"] or "" for call in calls)
    assert set(json.loads(arguments, strict=False)) == {"title", "content"}, arguments
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls", chunks[-1]

    def follow_up(content: str | None) -> dict[str, Any]:
        return {
            "messages": [
                *messages,
                {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [
                        {
                            "id": calls[0]["id"],
                            "type": "function",
                            "function": {"name": "save_memory", "arguments": arguments},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": calls[0]["id"], "content": "Saved memory 1."},
            ],
            "tools": [SaveMemory.schema],
            "max_tokens": 64,
        }

    answer = client.chat.completions.create(model=real_model.model, messages=[], extra_body=follow_up(""))
    assert answer.choices[0].message.content, answer
    with pytest.raises(openai.InternalServerError) as refused:
        client.chat.completions.create(model=real_model.model, messages=[], extra_body=follow_up(None))
    assert refused.value.status_code == 500


class AddToolChoice(httpx2.AsyncHTTPTransport):
    """A transport that adds `tool_choice` to every JSON request body it sends: `gateway.stream`
    has no parameter for it, and the product itself never forces a tool."""

    def __init__(self, tool_choice: dict[str, Any]) -> None:
        super().__init__()
        self.tool_choice = tool_choice

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = {**json.loads(request.content), "tool_choice": self.tool_choice}
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        forced = httpx2.Request(request.method, request.url, headers=headers, json=body, extensions=request.extensions)
        return await super().handle_async_request(forced)


def test_gateway_stream_assembles_the_real_servers_tool_call(
    real_llm: RealModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gateway.stream` turns the real server's streamed tool call (id and name repeated in
    every chunk) into one ToolCall whose arguments are the JSON the model wrote, once.

    The product never sends `tool_choice` (and without it this server's chatml-function-calling
    handler leaves the tools out of the prompt), so the call is forced by giving the gateway a
    client whose transport adds `tool_choice`: `gateway.stream` has no parameter for it."""

    def forcing_client(profile: gateway.Profile) -> openai.AsyncOpenAI:
        transport = AddToolChoice(FORCE_SAVE_MEMORY)
        return openai.AsyncOpenAI(
            base_url=profile.base_url,
            api_key=profile.api_key,
            timeout=profile.timeout,
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=transport, timeout=profile.timeout),
        )

    monkeypatch.setattr(gateway, "_async_client", forcing_client)
    deltas: list[str] = []
    usage: list[LLMUsage] = []

    async def on_delta(text: str) -> None:
        deltas.append(text)

    result = async_to_sync(gateway.stream)(
        messages=tool_messages(),
        purpose=LLMUsage.Purpose.CHAT,
        profile=gateway.chat_profile(),
        on_delta=on_delta,
        usage_sink=usage,
        tools=[SaveMemory.schema],
    )
    assert [call.name for call in result.tool_calls] == ["save_memory"], result
    arguments = result.tool_calls[0].arguments
    assert set(json.loads(arguments, strict=False)) == {"title", "content"}, arguments
    assert result.tool_calls[0].id
    assert result.content == "" and deltas == []
    assert usage[0].ok and result.prompt_tokens > 0


# --- 3. Ended conversations get a memory -------------------------------------------------------

SUMMARY_TASK = "conversations.tasks.conversation_summarize"
TURNS_PER_CONVERSATION = [3, 5, 2, 4]
FINISHED = re.compile(r"\] (?:succeeded in |retry: |raised unexpected)")


def wait_until_idle(worker: Worker, summaries: int, timeout: float) -> str:
    """Wait until the worker has settled `summaries` summary tasks and holds nothing else:
    every task it received has finished (succeeded, raised, or handed on as a retry, which
    it then receives again), for two seconds in a row. Returns its log."""
    deadline = time.monotonic() + timeout
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        assert worker.proc is not None and worker.proc.poll() is None, f"the worker died:\n{worker.log_text()[-3000:]}"
        log = worker.log_text()
        settled = len(set(re.findall(rf"{re.escape(SUMMARY_TASK)}\[([0-9a-f-]+)\] (?:succeeded in|raised)", log)))
        idle = settled >= summaries and log.count("] received") == len(FINISHED.findall(log))
        if not idle:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 2:
            return log
        time.sleep(0.5)
    raise AssertionError(
        f"the worker did not settle {summaries} summaries in {timeout:.0f} s:\n{worker.log_text()[-3000:]}"
    )


@dataclass
class ConversationRun:
    cid: int
    turns: list[int] = field(default_factory=list)  # the status of each send
    summary_status: str = ""
    summary_error: str = ""
    memories: int = 0  # its summary memories

    def line(self) -> str:
        return (
            f"conversation {self.cid}: sends {self.turns} -> summary {self.summary_status}, "
            f"{self.memories} memory {self.summary_error!r}"
        )


@pytest.mark.worker
def test_every_ended_conversation_gets_a_summary_memory(
    clients: dict[str, APIClient], real_llm: RealModel, real_worker: Worker
) -> None:
    """4 conversations of 2-5 short turns, each ended with POST /end/, a real Celery worker
    summarising with the real model: once the worker is idle, each conversation has exactly its
    one summary memory, and no summary is pending or failed. The sends' statuses are reported,
    not asserted: this server cuts a streamed answer short when another request arrives (its
    `--interrupt_requests`, on by default), here the worker's summaries."""
    client = clients["alice"]
    runs: list[ConversationRun] = []
    for n, turns in enumerate(TURNS_PER_CONVERSATION):
        run = ConversationRun(start(client))
        runs.append(run)
        for t in range(turns):
            resp = send(client, run.cid, STUDENT_LINES[(n + t) % len(STUDENT_LINES)], f"c{n}-t{t}")
            run.turns.append(resp.status_code)
        resp = client.post(f"/api/v1/conversations/{run.cid}/end/")
        assert resp.status_code == 202, error_of(resp)
    wait_until_idle(real_worker, summaries=len(runs), timeout=PATIENCE_SECONDS)
    for run in runs:
        conversation = Conversation.objects.get(pk=run.cid)
        run.summary_status, run.summary_error = conversation.summary_status, conversation.summary_error
        run.memories = AIMemory.objects.filter(source_conversation_id=run.cid, kind=AIMemory.Kind.SUMMARY).count()
    outcome = Counter(run.summary_status for run in runs)
    unsettled = [run for run in runs if run.summary_status in ("pending", "failed") or run.memories != 1]
    report = "\n".join(run.line() for run in runs)
    assert not unsettled, f"summaries {dict(outcome)}, memories {sum(run.memories for run in runs)}:\n{report}"


# --- 4. Past the model's window ----------------------------------------------------------------


def long_message(n: int, chars: int) -> str:
    """A student message of exactly `chars` characters of ordinary prose."""
    text = f"Message {n}. "
    while len(text) < chars:
        text += STUDENT_LINES[len(text) % len(STUDENT_LINES)] + " I wrote down my working step by step. "
    return text[:chars]


# The far-past test's window (LLM_CONTEXT_WINDOW), its turns and their length: every turn past
# the window costs a compression summary and a reply over a full window, so the window is small.
FAR_PAST_WINDOW = 1024
FAR_PAST_TURNS = 10
FAR_PAST_CHARS = 2000


def test_conversation_far_past_the_context_window_keeps_answering(
    clients: dict[str, APIClient], real_llm: RealModel, settings: Any
) -> None:
    """10 turns of 2,000-character messages (about 470 tokens each, nearly five times the
    window in all) with the window set to 1,024 tokens (LLM_CONTEXT_WINDOW): every send is
    answered 201, so the product must fit the prompt to the window, compressing the history
    with the real model as the conversation outgrows it."""
    settings.LLM_CONTEXT_WINDOW = FAR_PAST_WINDOW
    client = clients["alice"]
    cid = start(client)
    statuses: list[int] = []
    first_failure = ""
    for n in range(FAR_PAST_TURNS):
        resp = send(client, cid, long_message(n, FAR_PAST_CHARS), f"long-{n}")
        statuses.append(resp.status_code)
        if resp.status_code != 201 and not first_failure:
            first_failure = f"send {n + 1}: {error_of(resp)}"
    assert statuses == [201] * FAR_PAST_TURNS, f"statuses {statuses}; first failure at {first_failure}"
    total = sum(m.token_count for m in Message.objects.filter(conversation_id=cid))
    assert total > 4 * FAR_PAST_WINDOW, f"the conversation holds {total} tokens"
    assert ContextCheckpoint.objects.filter(conversation_id=cid).exists(), "the history was never compressed"


def test_how_the_server_refuses_a_prompt_past_its_window(real_model: RealModel) -> None:
    """The server's own answers to a prompt longer than its window, which the product meets:
    without streaming, a 400 `context_length_exceeded` naming the window; with `stream: true`,
    a 200 event stream that ends with no event at all (the error is only in the server's log)."""
    body = {"model": real_model.model, "messages": [{"role": "user", "content": long_message(0, 20_000)}]}
    resp = httpx2.post(f"{real_model.base_url}/chat/completions", json=body, timeout=TIMEOUT_SECONDS)
    assert resp.status_code == 400, error_of(resp)
    error = resp.json()["error"]
    assert error["code"] == "context_length_exceeded" and error["type"] == "invalid_request_error", error
    assert error["message"].startswith(f"This model's maximum context length is {CONTEXT_TOKENS} tokens."), error
    with httpx2.stream(
        "POST", f"{real_model.base_url}/chat/completions", json={**body, "stream": True}, timeout=TIMEOUT_SECONDS
    ) as streamed:
        assert streamed.status_code == 200
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert streamed.read() == b""
    needle = f"exceed context window of {CONTEXT_TOKENS}"
    deadline = time.monotonic() + PATIENCE_SECONDS
    while needle not in real_model.log_tail(50_000) and time.monotonic() < deadline:
        time.sleep(0.2)  # the server logs the traceback after it closed the stream
    assert needle in real_model.log_tail(50_000)


# --- 5. A message larger than the window -------------------------------------------------------


def test_message_too_large_for_the_window_is_a_clear_400_and_the_conversation_goes_on(
    clients: dict[str, APIClient], real_llm: RealModel
) -> None:
    """A 20,000-character message (within MESSAGE_MAX_CHARS, far past 4,096 tokens) is refused
    with a 400 whose message names this model's limit; the next short message is answered."""
    client = clients["alice"]
    cid = start(client)
    resp = send(client, cid, long_message(0, 20_000), "huge")
    assert resp.status_code == 400, error_of(resp)
    message = resp.json()["error"]["message"]
    assert re.search(rf"{CONTEXT_TOKENS}|{CONTEXT_TOKENS:,}", message), message
    resp = send(client, cid, "Sorry, here is a shorter question: what is 7 x 8?", "short")
    assert resp.status_code == 201, error_of(resp)
    assert resp.json()["reply"]["content"].strip()
