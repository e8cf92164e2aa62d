"""A question answered as Server-Sent Events: the deltas as the model writes, then the checked
answer; or an error event when the model fails."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync

from insights.models import AskLog
from llm.models import LLMUsage
from tests.conversations.test_streaming import async_client, parse_sse, read_all


def stream(user: Any, url: str, question: str) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
    client = async_client(user)

    async def go() -> tuple[int, bytes]:
        response = await client.post(url, {"question": question}, Accept="text/event-stream")
        return response.status_code, await read_all(response)

    status, raw = async_to_sync(go)()
    return status, parse_sse(raw)


def test_the_stream_ends_with_the_checked_answer(school, llm, record):
    """delta events carry the model's text (a forged ref included); the last event is `answer`,
    the stored log, with the forged ref dropped."""
    llm.ask_forged_ref = "m999999"
    status, events = stream(school["teacher_a"], f"/api/v1/students/{school['alice'].pk}/ask/", "Why fractions?")
    assert status == 200
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "answer" and set(kinds[:-1]) == {"delta"} and len(kinds) > 2
    streamed = "".join(data["text"] for kind, data in events if kind == "delta")
    answer = events[-1][1]
    assert "[m999999]" in streamed and answer["dropped"] == ["m999999"]
    assert "[m999999]" not in answer["answer"] and answer["citations"]
    assert AskLog.objects.get().pk == answer["id"]


def test_a_class_question_streams_too(school, llm, record):
    status, events = stream(
        school["teacher_a"], f"/api/v1/classrooms/{school['class_a'].pk}/ask/", "Who mixes up area?"
    )
    assert status == 200 and events[-1][0] == "answer"
    assert [s["username"] for s in events[-1][1]["students"]] == ["bob"]


def test_a_model_failing_mid_stream_ends_with_an_error_event(school, llm, record):
    """The model's stream breaks: an `error` event (retry_safe), no log, the call metered as failed."""
    llm.script("ask", {"content": "She adds the denominators too, every time.", "error_after": 3})
    status, events = stream(school["teacher_a"], f"/api/v1/students/{school['alice'].pk}/ask/", "Why fractions?")
    assert status == 200
    kind, data = events[-1]
    assert kind == "error" and data["error"]["code"] == "model_unavailable" and data["error"]["retry_safe"]
    assert not AskLog.objects.exists()
    assert LLMUsage.objects.get(purpose="ask").ok is False


def test_errors_before_the_stream_are_json(school, llm, record):
    """Another class's teacher asking for a stream gets the JSON 404, nothing streamed."""
    client = async_client(school["teacher_b"])

    async def go() -> Any:
        return await client.post(
            f"/api/v1/students/{school['alice'].pk}/ask/", {"question": "Why?"}, Accept="text/event-stream"
        )

    response = async_to_sync(go)()
    assert response.status_code == 404 and response["Content-Type"].startswith("application/json")
