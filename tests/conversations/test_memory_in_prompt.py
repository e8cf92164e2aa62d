"""Each chat prompt carries the student's 10 latest memories, and only theirs."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memory.models import AIMemory
from tests.conversations.test_turn import send, start


def add_memories(student, n, prefix="Memory"):
    now = timezone.now()
    AIMemory.objects.bulk_create(
        AIMemory(
            student=student,
            kind="note",
            source="save_memory_tool",
            title=f"{prefix} number {i} about fractions",
            content=f"{prefix} content {i}.",
            token_count=10,
            created_at=now - timedelta(minutes=n - i),
        )
        for i in range(n)
    )


def test_prompt_has_ten_latest_memories_of_this_student_only(clients, llm, school):
    """The 10 newest memories of the student are injected; older ones and other students' are not."""
    add_memories(school["alice"], 15)
    add_memories(school["bob"], 3, prefix="Bob secret")
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    block = llm.calls("chat")[0]["messages"][1]["content"]
    assert block.startswith("<student_memories>")
    for i in range(5, 15):
        assert f"Memory number {i} about fractions" in block
    for i in range(5):
        assert f"Memory number {i} about fractions" not in block
    assert "Bob secret" not in block


def test_memory_load_count_is_a_setting(clients, llm, school, settings):
    settings.MEMORY_LOAD_COUNT = 3
    add_memories(school["alice"], 5)
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    block = llm.calls("chat")[0]["messages"][1]["content"]
    assert block.count("Memory number") == 3


def test_archived_memories_are_not_injected(clients, llm, school):
    add_memories(school["alice"], 2)
    AIMemory.objects.filter(title__contains="number 1 ").update(status="archived", archived_reason="test")
    cid = start(clients["alice"])
    send(clients["alice"], cid)
    block = llm.calls("chat")[0]["messages"][1]["content"]
    assert "number 0" in block and "number 1 " not in block
