"""Questions about a student and a class against the real small model (llama-cpp-python's server
with SmolLM2-135M-Instruct, fixtures in conftest.py). The protocol and the product's guarantees,
not the answer's quality: the endpoint answers, streams, and stores its log; every citation it
keeps points at evidence the prompt showed."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from insights.models import AskLog, AskMemory
from llm.models import LLMUsage
from memory.models import AIMemory
from memory.services.writing import memory_create
from tests.conversations.test_streaming import async_client, parse_sse, read_all
from tests.real_model.conftest import RealModel

pytestmark = pytest.mark.real_model


def error_of(resp: Any) -> str:
    return f"{resp.status_code} {resp.content.decode(errors='replace')[:600]}"


@pytest.fixture
def evidence(school: dict[str, Any]) -> list[int]:
    """Two of alice's memories, one of bob's."""
    made = [
        memory_create(
            student=school["alice"],
            kind=AIMemory.Kind.FACT,
            source=AIMemory.Source.EXTRACTION,
            title="Confuses numerator and denominator",
            content="When adding fractions she adds the denominators too.",
            confidence=0.8,
        ),
        memory_create(
            student=school["alice"],
            kind=AIMemory.Kind.APPROACH,
            source=AIMemory.Source.EXTRACTION,
            title="Pizza slices help her with fractions",
            content="Drawing fractions as pizza slices helped her.",
            confidence=0.7,
        ),
        memory_create(
            student=school["bob"],
            kind=AIMemory.Kind.FACT,
            source=AIMemory.Source.EXTRACTION,
            title="Mixes up perimeter and area",
            content="He multiplies the sides when asked for the perimeter.",
            confidence=0.9,
        ),
    ]
    return [m.pk for m in made]


def test_a_question_about_a_student_is_answered_and_logged(
    school: dict[str, Any], clients: dict[str, APIClient], real_llm: RealModel, evidence: list[int]
) -> None:
    """200 with some answer text; the log, its access log and the metering are stored; every
    citation kept is one of alice's records."""
    resp = clients["teacher_a"].post(
        f"/api/v1/students/{school['alice'].pk}/ask/", {"question": "Why is alice stuck on fractions?"}, format="json"
    )
    assert resp.status_code == 200, error_of(resp)
    body = resp.json()
    assert body["answer"].strip()
    assert all(c["student"] == school["alice"].pk for c in body["citations"])
    log = AskLog.objects.get(pk=body["id"])
    assert log.model and log.prompt_tokens > 0
    assert set(AskMemory.objects.filter(ask=log).values_list("memory_id", flat=True)) >= set(evidence[:2])
    # A teacher's question is metered to the teacher, never to the student's budget.
    assert LLMUsage.objects.filter(purpose="ask", asker=school["teacher_a"], student=None, ok=True).count() == 1
    assert not LLMUsage.objects.filter(purpose="ask", student=school["alice"]).exists()


def test_a_question_streams_and_ends_with_the_answer(
    school: dict[str, Any], real_llm: RealModel, evidence: list[int]
) -> None:
    """With `Accept: text/event-stream`: deltas, then the `answer` event, the stored log."""
    client = async_client(school["teacher_a"])

    async def go() -> tuple[int, bytes]:
        response = await client.post(
            f"/api/v1/students/{school['alice'].pk}/ask/",
            {"question": "What worked with alice?"},
            Accept="text/event-stream",
        )
        return response.status_code, await read_all(response)

    status, raw = async_to_sync(go)()
    assert status == 200, raw[:600]
    events = parse_sse(raw)
    assert events[-1][0] == "answer", events[-1]
    assert {kind for kind, _ in events[:-1]} == {"delta"}
    assert AskLog.objects.filter(pk=events[-1][1]["id"]).exists()


def test_a_question_about_a_class_is_answered(
    school: dict[str, Any], clients: dict[str, APIClient], real_llm: RealModel, evidence: list[int]
) -> None:
    """The class's shortlist goes to the real model in one call; the answer is logged."""
    resp = clients["teacher_a"].post(
        f"/api/v1/classrooms/{school['class_a'].pk}/ask/",
        {"question": "Who mixes up perimeter and area?"},
        format="json",
    )
    assert resp.status_code == 200, error_of(resp)
    body = resp.json()
    assert body["answer"].strip()
    assert all(s["id"] in (school["alice"].pk, school["bob"].pk) for s in body["students"])
    assert AskLog.objects.get(pk=body["id"]).classroom == school["class_a"]
