"""The screening sweep (safety.sweep): a student message whose turn died before its flag was
recorded is still screened and alerted, once; a message still in its turn waits for the next
sweep; a flag the turn recorded is not made or alerted twice."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from conversations.models import Conversation, Message
from safety import sweep
from safety.models import Flag, ScreeningCursor
from tests.conversations.test_turn import send, start
from tests.safety.test_safety_e2e import CRISES


def stored_without_a_turn(conversation: Conversation, seq: int, content: str, *, age: float) -> Message:
    """A student message as the claim stores it, its turn killed before screening."""
    message = Message.objects.create(
        conversation=conversation, seq=seq, role="student", content=content, client_message_id=f"lost-{seq}"
    )
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(seconds=age))
    return message


def alerts(callbacks: list[Any]) -> int:
    return sum(1 for cb in callbacks if "safety.tasks.flag_alert" in repr(getattr(cb, "args", ())))


def test_a_message_whose_screening_was_lost_is_screened_and_alerted_once(
    school, clients, llm, django_capture_on_commit_callbacks
):
    cid = start(clients["alice"])
    send(clients["alice"], cid, content="How do I add 1/2 and 1/3?", cmid="m1")
    assert sweep.messages_sweep() == 0  # the first sweep starts at the newest message
    assert ScreeningCursor.objects.get().last_id == Message.objects.latest("pk").pk
    conversation = Conversation.objects.get(pk=cid)
    lost = stored_without_a_turn(conversation, 3, CRISES["fr"], age=600)
    recent = stored_without_a_turn(conversation, 4, CRISES["en"], age=5)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert sweep.messages_sweep() == 1
    flag = Flag.objects.get()
    assert (flag.message_id, flag.severity, flag.source) == (lost.pk, "crisis", "message")
    assert alerts(callbacks) == 1
    # The message still in its turn was left for the next sweep, which takes it once settled.
    assert ScreeningCursor.objects.get().last_id == lost.pk
    Message.objects.filter(pk=recent.pk).update(created_at=timezone.now() - timedelta(seconds=600))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert sweep.messages_sweep() == 1
    assert Flag.objects.count() == 2 and alerts(callbacks) == 1
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert sweep.messages_sweep() == 0
    assert Flag.objects.count() == 2 and alerts(callbacks) == 0


def test_a_flag_the_turn_recorded_is_not_made_or_alerted_twice(
    school, clients, llm, django_capture_on_commit_callbacks
):
    sweep.messages_sweep()
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, content=CRISES["en"], cmid="c1").json()["safety"]
    Message.objects.update(created_at=timezone.now() - timedelta(seconds=600))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert sweep.messages_sweep() == 1
    assert Flag.objects.count() == 1
    assert alerts(callbacks) == 0
