"""A tool registered from the test suite alone (llm.tools), with no change to conversations/:
offered to the model with its instruction, run when called, its events streamed to the client
and kept for a replay; and what the registry and its runner handle for every tool."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from asgiref.sync import async_to_sync
from django.core.exceptions import ValidationError
from django.utils import translation
from rest_framework import serializers

from conversations.models import Message
from conversations.serializers import turn_events
from llm.tools import (
    Tool,
    ToolArguments,
    ToolContext,
    ToolEvent,
    ToolEventType,
    ToolResult,
    register,
    registered,
    tool_call_run,
    unregister,
)
from tests.conversations.test_save_memory_tool import last_tool_output, tool_step
from tests.conversations.test_streaming import async_client, parse_sse, post_stream, read_all
from tests.conversations.test_turn import send, start

STICKERS = ("star", "rocket")
APPS_TOOLS = ["save_memory", "create_quiz", "update_task"]  # registered by the apps, in this order


class StickerData(serializers.Serializer[None]):
    sticker = serializers.ChoiceField(choices=STICKERS)


class StickerArguments(ToolArguments):
    sticker: Literal["star", "rocket"]


class GiveSticker(Tool):
    """Gives the student a sticker; records each run (its context, its arguments, the language
    it ran in). A rocket is refused by the tool itself (a rule of its domain, after the
    declaration's): the students have had enough of them this week."""

    name = "give_sticker"
    description = "Give the student a sticker for a problem solved alone."
    arguments = StickerArguments
    instruction = "When the student solves a problem alone, you may give them a sticker with give_sticker."
    small_window = True
    event_types = (ToolEventType("sticker", StickerData(), "A sticker the tutor gave."),)

    def __init__(self) -> None:
        self.runs: list[tuple[ToolContext, StickerArguments, str | None]] = []

    def run(self, context: ToolContext, arguments: StickerArguments) -> ToolResult:
        self.runs.append((context, arguments, translation.get_language()))
        if arguments.sticker == "rocket":
            raise ValidationError("no rocket this week.")
        return ToolResult(
            f"Sticker {arguments.sticker} given.",
            [
                ToolEvent("sticker", {"sticker": arguments.sticker}),
                ToolEvent("sticker_live", {"sticker": arguments.sticker}, stored=False),
            ],
        )


@pytest.fixture
def sticker() -> Any:
    tool = register(GiveSticker())
    yield tool
    unregister(tool.name)


def system_text(request: dict[str, Any]) -> str:
    return request["messages"][0]["content"]


def test_a_registered_tool_is_offered_run_streamed_and_replayed(school, clients, llm, sticker):
    """The model is offered the tool after the apps' tools and told its instruction; its call runs
    in the turn's context; its events reach the client between the deltas and `done`; a retry
    with the same client_message_id gives back the stored event, not the live-only one."""
    llm.script("chat", tool_step(("give_sticker", json.dumps({"sticker": "star"}))), {"content": "Well done!"})
    cid = start(clients["alice"])
    client = async_client(school["alice"])

    async def go() -> bytes:
        return await read_all(await post_stream(client, cid, "I solved it alone!", "s1"))

    events = parse_sse(async_to_sync(go)())
    first = llm.calls("chat")[0]
    assert [t["function"]["name"] for t in first["tools"]] == [*APPS_TOOLS, "give_sticker"]
    assert (
        first["tools"][-1]
        == GiveSticker.schema
        == {
            "type": "function",
            "function": {
                "name": "give_sticker",
                "description": "Give the student a sticker for a problem solved alone.",
                "parameters": {
                    "type": "object",
                    "properties": {"sticker": {"type": "string", "enum": ["star", "rocket"]}},
                    "required": ["sticker"],
                },
            },
        }
    )
    assert system_text(first).endswith(" " + GiveSticker.instruction)

    student = Message.objects.get(conversation_id=cid, role="student")
    [(context, arguments, language)] = sticker.runs
    assert context == ToolContext(student_id=school["alice"].pk, conversation_id=cid, message_id=student.pk)
    assert (arguments, language) == (StickerArguments(sticker="star"), "en")
    assert [m["content"] for m in last_tool_output(llm)] == ["Sticker star given."]

    assert [(k, d) for k, d in events if k.startswith("sticker")] == [
        ("sticker", {"sticker": "star"}),
        ("sticker_live", {"sticker": "star"}),
    ]
    assert [k for k, _ in events if k != "delta"] == ["message", "sticker", "sticker_live", "done"]

    async def again() -> bytes:
        return await read_all(await post_stream(client, cid, "I solved it alone!", "s1"))

    replayed = parse_sse(async_to_sync(again)())
    assert [k for k, _ in replayed] == ["message", "sticker", "delta", "done"]
    assert replayed[1][1] == {"sticker": "star"} and replayed[-1][1]["replayed"] is True
    assert len(llm.calls("chat")) == 2  # the replay called no model


def test_a_registered_tools_events_reach_the_json_answer_too(school, clients, llm, sticker):
    """Without `Accept: text/event-stream` the answer carries the plug-in's events in `events`,
    in the order the stream sends them; a replay carries the stored one."""
    llm.script("chat", tool_step(("give_sticker", json.dumps({"sticker": "star"}))), {"content": "Great!"})
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "I solved it alone!", "j1")
    assert resp.status_code == 201, resp.content
    assert resp.json()["events"] == [
        {"event": "sticker", "data": {"sticker": "star"}},
        {"event": "sticker_live", "data": {"sticker": "star"}},
    ]
    assert resp.json()["quizzes"] == [] and resp.json()["safety"] == []
    again = send(clients["alice"], cid, "I solved it alone!", "j1").json()
    assert again["replayed"] is True
    assert again["events"] == [{"event": "sticker", "data": {"sticker": "star"}}]


def test_a_small_window_offers_the_small_window_tools_alone(clients, llm, sticker):
    """On a window too small for every schema, a small_window tool is offered with save_memory,
    and the system prompt names only the tools offered."""
    llm.models_meta = {"max_model_len": 4096}
    llm.script("chat", {"content": "Hello!"})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "Hi", "w1").status_code == 201
    request = llm.calls("chat")[-1]
    assert [t["function"]["name"] for t in request["tools"]] == ["save_memory", "give_sticker"]
    assert GiveSticker.instruction in system_text(request) and "create_quiz" not in system_text(request)


def test_the_runner_answers_every_bad_call_with_an_error_text_in_english(sticker):
    """A name not offered (the offered ones listed), arguments that are not a JSON object or
    that the tool's declaration refuses (the tool does not run), and a ValidationError from the
    tool come back as texts for the model, in English; a raw newline inside a JSON string is
    accepted (llama-cpp's grammar lets it through), and a field the declaration does not name
    is ignored."""
    context = ToolContext(student_id=1, conversation_id=2, message_id=3)

    def run(name: str, arguments: str) -> ToolResult:
        with translation.override("fr"):
            return tool_call_run(tools=[sticker], context=context, name=name, arguments=arguments)

    assert run("save_memory", "{}").text == "Error: unknown tool 'save_memory'. The tools are: give_sticker."
    for arguments in ("{not json", "[1, 2]", '"star"'):
        assert run("give_sticker", arguments).text == (
            'Error: give_sticker not run. The arguments must be a JSON object {"sticker": ...}.'
        )
    undeclared = run("give_sticker", json.dumps({"sticker": "moon"}))
    assert (undeclared.text, undeclared.events) == (
        "Error: give_sticker not run. sticker: Input should be 'star' or 'rocket'.",
        [],
    )
    assert run("give_sticker", "{}").text == "Error: give_sticker not run. sticker: Field required."
    assert sticker.runs == []
    refused = run("give_sticker", json.dumps({"sticker": "rocket"}))
    assert (refused.text, refused.events) == ("Error: give_sticker not run. no rocket this week.", [])
    assert sticker.runs[-1][2] == "en"
    assert run("give_sticker", '{"sticker": "star", "note": "line\none"}').text == "Sticker star given."


def test_the_registry_keeps_the_order_and_refuses_a_second_tool_of_a_name(sticker):
    """Registration order is the order offered; the same class again takes its place; another
    class of the same name is refused. A subclass's schema names its own function."""
    assert [t.name for t in registered()] == [*APPS_TOOLS, "give_sticker"]
    again = register(GiveSticker())
    assert registered()[-1] is again and len(registered()) == 4

    class Impostor(GiveSticker):
        pass

    with pytest.raises(ValueError, match="registered already"):
        register(Impostor())

    class Misnamed(GiveSticker):
        name = "misnamed"

    assert Misnamed.schema["function"]["name"] == "misnamed"
    assert GiveSticker.schema["function"]["name"] == "give_sticker"
    assert [t.name for t in registered()] == [*APPS_TOOLS, "give_sticker"]


def test_the_turn_events_of_the_schema_come_from_the_registered_tools(sticker):
    """The API schema's TurnEvent lists the events the registered tools declare, in their order,
    between the deltas and the screening's events (conversations.screening), before `done`."""
    events = turn_events()
    assert list(events) == [
        "message",
        "delta",
        "memory",
        "quiz",
        "sticker",
        "safety",
        "reply_replaced",
        "done",
        "error",
    ]
    assert events["sticker"].__name__ == "StickerEvent"
    assert set(events["sticker"]().fields["data"].fields) == {"sticker"}
