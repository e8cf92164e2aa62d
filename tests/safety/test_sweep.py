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
from safety.selectors import message_context, message_contexts
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


def test_a_batchs_contexts_read_at_once_are_each_messages_own(school, django_assert_num_queries):
    """`message_contexts` gives each message of a batch what `message_context` gives it alone:
    the student's previous messages of its own conversation (a tutor's reply skipped), from
    before the batch as from within it, in one statement."""
    conversations = [
        Conversation.objects.create(student=school[name], subject=name, last_activity_at=timezone.now())
        for name in ("alice", "alice", "bob")
    ]
    seqs = dict.fromkeys(conversations, 0)

    def say(conversation: Conversation, role: str = "student") -> Message:
        seqs[conversation] += 1
        seq = seqs[conversation]
        cmid = f"m{seq}" if role == "student" else None
        content = f"{conversation.subject} {conversation.pk} says {seq}"
        return Message.objects.create(
            conversation=conversation, seq=seq, role=role, content=content, client_message_id=cmid
        )

    one, two, three = conversations
    for _ in range(5):  # before the batch: more than the context's size in one conversation
        say(one)
        say(one, "tutor")
    say(two)
    batch = [say(one), say(three), say(two), say(one), say(two), say(one)]
    say(one, "tutor")
    batch.append(say(one))
    say(three)  # after the batch: never read as context
    messages = [(m.pk, m.conversation_id) for m in batch[1:]]  # the batch's first id is one of its
    with django_assert_num_queries(1):
        contexts = message_contexts(messages=messages, size=3)
    expected = {
        pk: message_context(conversation_id=conversation, before_id=pk, size=3) for pk, conversation in messages
    }
    assert contexts == expected
    assert [len(contexts[pk]) for pk, _ in messages] == [0, 1, 3, 2, 3, 3]
    assert message_contexts(messages=messages, size=0) == {pk: [] for pk, _ in messages}


def test_the_guards_screen_reads_the_context_in_one_statement_and_screens_without_the_database(
    school, django_assert_num_queries, settings
):
    """safety.line: the turn's guard reads a message's context in its database step
    (`stored_context`, one statement) and screens it off the database threads (`screen_stored`
    given that context: no statement), with the verdict of the sweep's path, which reads it
    itself."""
    from safety import line

    settings.SAFETY_LEARNED = True
    conversation = Conversation.objects.create(student=school["alice"], subject="s", last_activity_at=timezone.now())
    texts = ["I failed again", "everyone hates me", "I don't want to be here anymore"]
    stored = [
        Message.objects.create(
            conversation=conversation, seq=i + 1, role="student", content=t, client_message_id=f"c{i}"
        )
        for i, t in enumerate(texts)
    ]
    last = stored[-1]
    with django_assert_num_queries(1):
        context = line.stored_context(message_id=last.pk, conversation_id=conversation.pk)
    assert context == texts[:2]
    with django_assert_num_queries(0):
        guarded = line.screen_stored(
            message_id=last.pk, conversation_id=conversation.pk, text=last.content, context=context
        )
    swept = line.screen_stored(message_id=last.pk, conversation_id=conversation.pk, text=last.content)
    assert [(r.backend, r.signals, r.scores) for r in guarded] == [(r.backend, r.signals, r.scores) for r in swept]
    assert guarded[1].answered  # the learned screen read it
    settings.SAFETY_LEARNED = False
    assert line.stored_context(message_id=last.pk, conversation_id=conversation.pk) == []
