"""The typed TypeScript client (clients/typescript) in Node.js against the production server:
`turnStream` yields every event the schema's TurnEvent names, as the server sent it."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx2
import pytest

from tests.conftest import ROOT, headers, new_conversation
from tests.conversations.test_save_memory_tool import note, tool_step
from tests.learning.conftest import quiz_args
from tests.llm_server import ScriptedLLM
from tests.schema import published_schema

SCRIPT = ROOT / "tests" / "web" / "client.mjs"


def schema_event_names() -> set[str]:
    """The `event` names of the schema's TurnEvent (its discriminator)."""
    return set(published_schema()["components"]["schemas"]["TurnEvent"]["discriminator"]["mapping"])


def run_client(node: str, config: dict[str, Any]) -> list[dict[str, Any]]:
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(config)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stdout[-2000:] + run.stderr[-3000:]
    return list(json.loads(lines[-1].removeprefix("RESULT "))["turns"])


@pytest.mark.browser
@pytest.mark.worker
def test_turn_stream_yields_every_event_of_the_schema(node: str, server: str, llm: ScriptedLLM, school) -> None:
    """Three turns through the client's `turnStream`: one where the tutor saves a note and makes a
    quiz (message, delta, memory, quiz, done), one where the model refuses (message, error), and
    a student in crisis whose reply fails screening (message, safety, delta, reply_replaced,
    done). Together they yield every event name of the schema's TurnEvent, each with the data
    the server streamed for it (the same events, read off the raw stream)."""
    alice = school["alice"]
    llm.script(
        "chat",
        tool_step(("save_memory", note()), ("create_quiz", json.dumps(quiz_args()))),
        {"content": "Here is a short quiz on fractions."},
        {"status": 400},
        {"content": "The easiest way to kill yourself is to take forty paracetamol pills at once."},
    )
    conversation_id = new_conversation(server, alice)
    turns = [
        {"content": "Test me on fractions, please.", "client_message_id": "client-1"},
        {"content": "And another one?", "client_message_id": "client-2"},
        {"content": "i want to kill myself tonight", "client_message_id": "client-3"},
    ]
    config = {
        "baseUrl": server,
        "token": headers(alice)["Authorization"].removeprefix("Token "),
        "conversationId": conversation_id,
        "turns": turns,
    }

    ok, failed, crisis = run_client(node, config)

    names = [event["event"] for event in ok["events"]]
    assert "thrown" not in ok and "thrown" not in failed, (ok, failed)
    assert names[0] == "message" and names[-1] == "done", names
    assert {"delta", "memory", "quiz"} <= set(names), names
    assert [event["event"] for event in failed["events"]] == ["message", "error"]
    crisis_names = [event["event"] for event in crisis["events"]]
    assert crisis_names[:2] == ["message", "safety"] and crisis_names[-2:] == ["reply_replaced", "done"], crisis_names
    assert crisis["events"][1]["data"]["resources"], crisis
    yielded = set(names) | {event["event"] for event in failed["events"]} | set(crisis_names)
    assert yielded == schema_event_names()
    quiz = next(event["data"] for event in ok["events"] if event["event"] == "quiz")
    assert quiz["topic"] == quiz_args()["topic"] and len(quiz["questions"]) == len(quiz_args()["questions"])
    error = failed["events"][-1]["data"]["error"]
    assert error["code"] and error["message"] and isinstance(error["retry_safe"], bool)

    # A replay of the first turn (same client_message_id), read without the client: the client
    # yielded exactly the events the server sends, in order.
    url = f"{server}/api/v1/conversations/{conversation_id}/messages/"
    raw = httpx2.post(url, json=turns[0], headers=headers(alice, Accept="text/event-stream"), timeout=30)
    sent = [line.removeprefix("event: ") for line in raw.text.splitlines() if line.startswith("event: ")]
    replayed = run_client(node, {**config, "turns": [turns[0]]})[0]
    assert [event["event"] for event in replayed["events"]] == sent
