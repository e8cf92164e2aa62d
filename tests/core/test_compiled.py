"""Statements compiled once (core.db.compiled_query): the rows the ORM gives for the same
queryset, each call's values as parameters, and a value the ORM would write into the SQL refused."""

from __future__ import annotations

import pytest
from django.db.models import Q
from django.utils import timezone

from conversations.models import Conversation, Message
from core import db
from memory.models import AIMemory


def _memories(*, student_id: int):
    return AIMemory.objects.filter(student_id=student_id).order_by("-created_at", "-id").only("id", "title", "evidence")


def test_a_compiled_query_gives_the_orm_s_instances_for_each_student(school):
    """Model instances as the ORM builds them (deferred fields, JSON decoded, datetimes aware),
    for every student the same statement is run for."""
    now = timezone.now()
    for name in ("alice", "bob"):
        for i in range(3):
            AIMemory.objects.create(
                student=school[name], kind="note", title=f"{name} {i}", content="x", evidence=[{"n": i}], created_at=now
            )
    for name in ("alice", "bob"):
        student_id = school[name].pk
        got = db.compiled_query("test.memories", None, _memories, student_id=student_id)
        expected = list(_memories(student_id=student_id))
        assert [(m.pk, m.title, m.evidence) for m in got] == [(m.pk, m.title, m.evidence) for m in expected]
        assert all(m.get_deferred_fields() == e.get_deferred_fields() for m, e in zip(got, expected, strict=True))
        assert got[0].created_at == expected[0].created_at and got[0].created_at.tzinfo is not None
        assert {m.student_id for m in got} == {student_id}
    assert len([k for k in db._compiled if k[0] == "test.memories"]) == 1  # compiled once


def test_a_compiled_values_list_gives_tuples(school):
    conversation = Conversation.objects.create(student=school["alice"], last_activity_at=timezone.now())
    for seq in range(1, 6):
        Message.objects.create(conversation=conversation, seq=seq, role="tutor", content=f"m{seq}", token_count=seq)

    def build(*, conversation_id: int, after: int):
        return (
            Message.objects.filter(conversation_id=conversation_id, seq__gt=after)
            .order_by("seq")
            .values_list("seq", "content")
        )

    assert db.compiled_query("test.messages", None, build, conversation_id=conversation.pk, after=3) == [
        (4, "m4"),
        (5, "m5"),
    ]
    assert db.compiled_query("test.messages", None, build, conversation_id=conversation.pk, after=0)[0] == (1, "m1")


def test_a_value_the_orm_writes_into_the_sql_is_refused(school):
    """A value that is not a parameter (here a LIMIT) cannot be filled in later: it belongs in the
    shape, and compiling it as a value raises."""

    def build(*, student_id: int, limit: int):
        return AIMemory.objects.filter(Q(student_id=student_id))[:limit]

    with pytest.raises(AssertionError):
        db.compiled_query("test.limit", None, build, student_id=school["alice"].pk, limit=3)
