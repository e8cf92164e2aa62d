"""A year of one student's life, end to end: 300 conversations through the API, each summarised by a
real Celery worker, facts extracted from the summaries and the tutor's notes, vectors from the
embeddings endpoint, then the periodic consolidation. The scripted model follows the rules of
tests/llm_server.py (`default_summary`, `default_extraction`, `default_merge`).

The year holds: an early fact ("struggles with fractions") that a later one updates ("has
mastered fractions"), a fact that stays true, and one note saved ten times in ten wordings.
Each fact is said in two conversations in a row: the second source confirms it, and only a
confirmed fact opens the prompt's memory block.
At the end duplicates are merged, the outdated fact is superseded, the prompt shows the current
truth, the access log says what the tutor knew, and nothing is lost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Conversation, ReplyMemory
from llm.models import LLMUsage
from memory.models import AIMemory, ConsolidationDecision, MemoryEmbedding
from memory.tasks import memories_consolidate_due
from tests.conftest import Worker, client_for, wait_for
from tests.llm_server import ScriptedLLM

pytestmark = pytest.mark.worker

CONVERSATIONS = 300
EARLY = "Fact: Fractions level of the student | Struggles with fractions."
STEADY = "Fact: Reading needs of the student | Prefers short sentences and large print."
LATER = "Fact: Fractions level of the student | Has mastered fractions."
# One note, ten wordings (the tutor saves it again in ten conversations).
NOTE_TITLE = "Likes football examples in maths"
WORDINGS = [
    "She likes football examples in maths problems.",
    "She likes football examples in maths problems a lot.",
    "She really likes football examples in maths problems.",
    "She likes football examples in her maths problems.",
    "She likes football examples in maths problems, always.",
    "She likes the football examples in maths problems.",
    "She still likes football examples in maths problems.",
    "She likes football examples in maths problems today.",
    "She likes football examples in maths problems again.",
    "She likes football examples in all maths problems.",
]
NOTE_AT = {20 + 25 * i: wording for i, wording in enumerate(WORDINGS)}


def _message(day: int) -> str:
    if day in (0, 1):
        return f"Can we start with fractions? {EARLY}"
    if day in (100, 101):
        return f"Long texts are hard for me. {STEADY}"
    if day in (250, 251):
        return f"I got every fraction right this week. {LATER}"
    return f"Can you help with exercise {day} of my homework on topic {day % 17}?"


def _converse(client: APIClient, llm: ScriptedLLM, day: int) -> int:
    if day in NOTE_AT:
        args = json.dumps({"title": NOTE_TITLE, "content": NOTE_AT[day]})
        llm.script(
            "chat", {"content": "", "tool_calls": [{"name": "save_memory", "arguments": args}]}, {"content": "Noted."}
        )
    cid = client.post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
    sent = client.post(
        f"/api/v1/conversations/{cid}/messages/",
        {"content": _message(day), "client_message_id": f"d{day}"},
        format="json",
    )
    assert sent.status_code == 201, sent.content
    assert client.post(f"/api/v1/conversations/{cid}/end/").status_code == 202
    return int(cid)


def _active_fact(alice: Any, title: str) -> AIMemory | None:
    return AIMemory.objects.filter(student=alice, kind="fact", status="active", title=title).first()


def _consolidations_done(worker: Worker) -> int:
    return sum(
        1
        for line in worker.log_text().splitlines()
        if "memory.tasks.memory_consolidate[" in line and "succeeded" in line
    )


def _settled(alice: Any, count: int) -> bool:
    """Every conversation summarised, every extraction asked, every active memory embedded."""
    summaries = AIMemory.objects.filter(student=alice, kind="summary").count()
    extracted = LLMUsage.objects.filter(purpose="extraction", student=alice).count()
    extractable = AIMemory.objects.filter(student=alice, kind__in=["summary", "note"]).count()
    active = AIMemory.objects.filter(student=alice, status="active").count()
    embedded = MemoryEmbedding.objects.filter(student=alice, memory__status="active").count()
    return summaries == count and extracted >= extractable and embedded == active


def test_a_year_of_conversations_keeps_the_current_truth_and_loses_nothing(
    school: dict[str, Any], openai_embedder: ScriptedLLM, worker: Worker, llm: ScriptedLLM
) -> None:
    alice, teacher = school["alice"], client_for(school["teacher_a"])
    client = client_for(alice)
    for day in range(CONVERSATIONS):
        _converse(client, llm, day)
        if day == 0:  # the early fact exists before anything can update it
            wait_for(lambda: _active_fact(alice, "Fractions level of the student"), timeout=60)
    wait_for(lambda: _settled(alice, CONVERSATIONS), timeout=600, interval=0.5)

    # The outdated fact is superseded by the newer one, and the chain is readable.
    current = _active_fact(alice, "Fractions level of the student")
    assert current is not None and current.content == "Has mastered fractions."
    old = AIMemory.objects.get(student=alice, kind="fact", status="superseded")
    assert old.content == "Struggles with fractions." and old.superseded_by_id == current.pk
    chain = teacher.get(f"/api/v1/memories/{old.pk}/chain/").json()
    assert [m["id"] for m in chain["newer"]] == [current.pk]
    assert _active_fact(alice, "Reading needs of the student") is not None

    # The periodic task consolidates: the ten wordings become one note citing them all.
    memories_consolidate_due.delay()
    wait_for(lambda: _consolidations_done(worker) >= 1, timeout=120)
    notes = AIMemory.objects.filter(student=alice, kind="note", title=NOTE_TITLE)
    merged = notes.get(status="active")
    archived = list(notes.filter(status="archived"))
    assert merged.source == "merge" and len(archived) == len(WORDINGS)
    assert set(merged.evidence) >= {m.pk for m in archived}
    assert all(m.archived_reason == f"merged into #{merged.pk}" for m in archived)
    assert ConsolidationDecision.objects.filter(student=alice, outcome="merged").count() == 1
    calls, rows = len(llm.calls("merge")), AIMemory.objects.filter(student=alice).count()
    memories_consolidate_due.delay()  # a second run changes nothing
    wait_for(lambda: _consolidations_done(worker) >= 2, timeout=120)
    assert len(llm.calls("merge")) == calls and AIMemory.objects.filter(student=alice).count() == rows

    # The prompt shows the current truth, the facts first; the access log says so.
    cid = _converse(client, llm, CONVERSATIONS)
    block = next(m["content"] for m in llm.calls("chat")[-1]["messages"] if "<student_memories>" in str(m["content"]))
    lines = block.splitlines()
    facts = [f"{line} {lines[i + 1]}" for i, line in enumerate(lines) if "fact about the student" in line]
    assert len(facts) == 2 and any("Has mastered fractions." in f for f in facts)
    assert not any("Struggles with fractions." in f for f in facts)
    assert block.index("fact about the student") < block.index("summary of a past conversation")
    assert block.count(NOTE_TITLE) <= 1
    reply = Conversation.objects.get(pk=cid).messages.get(role="tutor")
    log = teacher.get(f"/api/v1/conversations/{cid}/messages/{reply.pk}/memories/").json()
    facts_now = AIMemory.objects.filter(student=alice, kind="fact", status="active").values_list("pk", flat=True)
    assert log[0]["memory"]["id"] in set(facts_now) and len(facts_now) == 2
    assert current.pk in {row["memory"]["id"] for row in log} and old.pk not in {row["memory"]["id"] for row in log}

    # Nothing is lost: every memory is still here, active or archived or superseded with a reason.
    by_status = {
        s: AIMemory.objects.filter(student=alice, status=s).count() for s in ("active", "archived", "superseded")
    }
    summaries = AIMemory.objects.filter(student=alice, kind="summary").count()
    assert summaries == CONVERSATIONS + 1 or summaries == CONVERSATIONS  # the last one may still be running
    assert by_status["archived"] == len(WORDINGS) and by_status["superseded"] == 1
    assert not AIMemory.objects.filter(student=alice).exclude(status="active").filter(archived_reason="").exists()
    chains = AIMemory.objects.filter(student=alice, superseded_by__isnull=False).count()
    rows_per_reply = ReplyMemory.objects.filter(message__conversation__student=alice).count() / (CONVERSATIONS + 1)
    print(
        f"\nyear: {sum(by_status.values())} memories: {by_status}, {chains} in chains, "
        f"{ReplyMemory.objects.count()} access-log rows ({rows_per_reply:.1f} per reply)"
    )
