"""The pattern rule (safety.patterns.pattern_check): quieter signals of distress adding up to a
concern, citing what they were. Flags are made with the ORM, as screening records them; the
memories are screened by the real offline line."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import User
from conversations.models import Conversation, Message
from memory.models import AIMemory
from safety import recording
from safety.models import Flag, FlagAction
from safety.patterns import pattern_check
from safety.types import BackendResult, Category, Severity, Signal, combine

DISTRESSED = "I feel hopeless and alone, I cry every night"


@pytest.fixture
def pattern_settings(settings: Any) -> Any:
    settings.SAFETY_PATTERN_COUNT = 3
    settings.SAFETY_PATTERN_DAYS = 14
    return settings


def conversation_of(student: User) -> Conversation:
    return Conversation.objects.create(student=student, last_activity_at=timezone.now())


def signal(
    conversation: Conversation,
    *,
    severity: str = "info",
    category: str = "distress",
    categories: list[str] | None = None,
    days_ago: float = 0,
) -> Flag:
    """A student message and its flag, made `days_ago` days ago."""
    seq = conversation.messages.count() + 1
    message = Message.objects.create(
        conversation=conversation, seq=seq, role="student", content=f"message {seq}", client_message_id=f"c{seq}"
    )
    flag = Flag.objects.create(
        student_id=conversation.student_id,
        conversation=conversation,
        message=message,
        source=Flag.Source.MESSAGE,
        category=category,
        categories=categories or [category],
        severity=severity,
    )
    if days_ago:
        Flag.objects.filter(pk=flag.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return flag


def memory(student: User, content: str, **fields: Any) -> AIMemory:
    values: dict[str, Any] = {"kind": "note", "title": "Note", "source": "save_memory_tool", **fields}
    return AIMemory.objects.create(student=student, content=content, created_at=timezone.now(), **values)


def patterns_of(student: User) -> list[Flag]:
    return list(Flag.objects.filter(student=student, source=Flag.Source.PATTERN))


def test_the_third_signal_raises_a_concern_citing_the_messages(
    school, pattern_settings, django_capture_on_commit_callbacks
):
    """Two signals of distress in the window raise nothing; the third raises one concern
    (source pattern, category distress) citing the three messages, summarised without quoting
    them, logged `created`, its alert enqueued after commit. A fourth adds nothing while that
    flag is open."""
    alice = school["alice"]
    conversation = conversation_of(alice)
    first = signal(conversation, days_ago=10)
    second = signal(conversation, severity="concern", days_ago=3)
    assert pattern_check(student_id=alice.pk) is None

    third = signal(conversation_of(alice))
    with django_capture_on_commit_callbacks() as callbacks:
        flag = pattern_check(student_id=alice.pk)

    assert flag is not None
    assert (flag.source, flag.category, flag.severity, flag.status) == ("pattern", "distress", "concern", "open")
    assert set(flag.cited_messages.values_list("pk", flat=True)) == {
        first.message_id,
        second.message_id,
        third.message_id,
    }
    assert flag.excerpt.startswith("3 signals of distress in 14 days: message (flag ")
    assert "message 1" not in flag.excerpt  # what was counted, never what was said
    assert flag.actions.filter(kind=FlagAction.Kind.CREATED).exists()
    # One alert enqueued after commit (besides the flag.raised event for webhooks).
    alerts = [c for c in callbacks if getattr(c, "args", ())[:1] == ("safety.tasks.flag_alert",)]
    assert [c.args for c in alerts] == [("safety.tasks.flag_alert", flag.pk)]

    signal(conversation)
    assert pattern_check(student_id=alice.pk) is None
    assert patterns_of(alice) == [flag]


def test_what_does_not_count(school, pattern_settings):
    """Signals older than the window, crises (alerted on their own), other categories, other
    students' signals and tutor replies' flags do not add up to a pattern."""
    alice, bob = school["alice"], school["bob"]
    conversation = conversation_of(alice)
    signal(conversation, days_ago=15)
    signal(conversation, severity="crisis", category="self_harm")
    signal(conversation, category="harassment")
    signal(conversation_of(bob))
    signal(conversation_of(bob))
    reply = signal(conversation)
    Flag.objects.filter(pk=reply.pk).update(source=Flag.Source.REPLY)
    signal(conversation)

    assert pattern_check(student_id=alice.pk) is None
    assert pattern_check(student_id=bob.pk) is None
    assert not Flag.objects.filter(source=Flag.Source.PATTERN).exists()


def test_self_harm_and_secondary_categories_count(school, pattern_settings):
    """A quieter self-harm signal counts, and so does a flag whose most severe category is
    another but whose categories include distress."""
    alice = school["alice"]
    conversation = conversation_of(alice)
    signal(conversation, category="self_harm")
    signal(conversation, category="harassment", categories=["distress", "harassment"])
    signal(conversation)

    flag = pattern_check(student_id=alice.pk)

    assert flag is not None and flag.categories == ["distress", "self_harm"]
    assert flag.cited_messages.count() == 3


def test_a_memory_the_offline_line_finds_distress_in_counts_once(school, pattern_settings):
    """A memory of the window in which the offline line finds distress is one signal, cited in
    `cited_memories`; an archived one, one without distress, and the summary of a conversation
    whose messages were already counted are not."""
    alice = school["alice"]
    conversation = conversation_of(alice)
    signal(conversation)
    signal(conversation)
    memory(alice, "Working on fractions; 1/2 + 1/4 = 3/4.")
    memory(alice, DISTRESSED, status=AIMemory.Status.ARCHIVED, archived_reason="test")
    memory(alice, DISTRESSED, kind="summary", source="summary_task", source_conversation=conversation)
    assert pattern_check(student_id=alice.pk) is None

    noted = memory(alice, f"Alice wrote: {DISTRESSED}")
    flag = pattern_check(student_id=alice.pk)

    assert flag is not None
    assert list(flag.cited_memories.all()) == [noted]
    assert flag.cited_messages.count() == 2
    assert "memory " in flag.excerpt


def test_after_a_resolved_pattern_only_newer_signals_count(school, pattern_settings):
    """Once a teacher closed a pattern flag, its signals do not raise it again: three newer
    signals are needed."""
    alice = school["alice"]
    conversation = conversation_of(alice)
    for _ in range(3):
        signal(conversation, days_ago=2)
    first = pattern_check(student_id=alice.pk)
    assert first is not None
    Flag.objects.filter(pk=first.pk).update(status=Flag.Status.RESOLVED)

    signal(conversation)
    signal(conversation)
    assert pattern_check(student_id=alice.pk) is None
    signal(conversation)
    second = pattern_check(student_id=alice.pk)

    assert second is not None and second.pk != first.pk
    assert second.cited_messages.count() == 3


def test_recording_the_third_distress_signal_raises_the_pattern(school, pattern_settings):
    """Through screening's recording (safety.recording.flag_record): the pattern is checked
    after each flag, and the third quiet signal raises it."""
    alice = school["alice"]
    conversation = conversation_of(alice)
    quiet = Signal(Category.DISTRESS, Severity.INFO)
    verdict = combine([BackendResult(backend="offline", answered=True, signals=[quiet])])
    for seq in (1, 2, 3):
        message = Message.objects.create(
            conversation=conversation, seq=seq, role="student", content="...", client_message_id=f"r{seq}"
        )
        recording.flag_record(
            student_id=alice.pk,
            source=Flag.Source.MESSAGE,
            verdict=verdict,
            conversation_id=conversation.pk,
            message_id=message.pk,
        )
        assert len(patterns_of(alice)) == (1 if seq == 3 else 0)
