"""The turn lease: one turn at a time per conversation, a crashed turn never blocks it for good,
ending mid-turn keeps the reply, and a database outage answers 503, never a bare 500."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.db import OperationalError
from django.utils import timezone

from conversations import summaries
from conversations.models import Conversation, Message
from conversations.turn import claim, drive
from memory.models import AIMemory
from tests.conversations.test_turn import send, start


def hold_lease(cid: int, *, expires_in: float, message: Message | None = None) -> None:
    Conversation.objects.filter(pk=cid).update(
        turn_token="held-by-another-process",
        turn_expires_at=timezone.now() + timedelta(seconds=expires_in),
        turn_message=message,
    )


def test_a_send_waits_for_the_turn_in_progress_then_says_nothing_was_stored(clients, llm, settings):
    """While another turn holds the conversation, a new message is not stored; after
    TURN_WAIT_SECONDS the send answers 503 conversation_busy, saying so."""
    settings.TURN_WAIT_SECONDS = 0.3
    cid = start(clients["alice"])
    hold_lease(cid, expires_in=60)
    resp = send(clients["alice"], cid, "hello", "m1")
    assert resp.status_code == 503
    err = resp.json()["error"]
    assert err["code"] == "conversation_busy" and err["retry_safe"] is True
    assert "not stored" in err["message"]
    assert not Message.objects.filter(conversation_id=cid).exists()
    assert llm.calls("chat") == []


def test_a_lease_left_by_a_crashed_process_expires_and_the_turn_goes_on(clients, llm):
    """A stored message whose turn died with its process (the lease expired, no reply): the
    retry takes the conversation over and completes the turn."""
    cid = start(clients["alice"])
    conversation = Conversation.objects.get(pk=cid)
    message = claim.message_append(
        conversation=conversation, role=Message.Role.STUDENT, content="hello", client_message_id="m1"
    )
    hold_lease(cid, expires_in=-1, message=message)
    resp = send(clients["alice"], cid, "hello", "m1")
    assert resp.status_code == 201, resp.content
    assert resp.json()["student_message"]["id"] == message.pk
    conversation.refresh_from_db()
    assert conversation.turn_token == "" and conversation.turn_expires_at is None


def test_a_retry_while_another_process_answers_waits_for_its_reply(clients, llm, settings):
    """A retry of a message whose turn runs in another process (a live lease on that very
    message) does not call the model: it waits, then says the message is saved."""
    settings.TURN_WAIT_SECONDS = 0.3
    cid = start(clients["alice"])
    message = claim.message_append(
        conversation=Conversation.objects.get(pk=cid), role=Message.Role.STUDENT, content="hi", client_message_id="m1"
    )
    hold_lease(cid, expires_in=60, message=message)
    resp = send(clients["alice"], cid, "hi", "m1")
    assert resp.status_code == 503
    err = resp.json()["error"]
    assert err["code"] == "conversation_busy" and err["details"]["student_message_id"] == message.pk
    assert "saved" in err["message"]
    assert llm.calls("chat") == []


def test_the_lease_is_released_after_a_failed_turn(clients, llm):
    """A model failure releases the lease at once: the next send does not wait for it to expire."""
    llm.script("chat", {"status": 503})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "hello", "m1").status_code == 503
    assert Conversation.objects.get(pk=cid).turn_token == ""
    assert send(clients["alice"], cid, "again", "m2").status_code == 201


def test_ending_mid_turn_keeps_the_reply_and_the_summary_waits_for_it(clients, llm, school):
    """The conversation is ended while the model answers: the reply is stored, the summary
    refuses to run while the turn holds the lease, and once written it covers the reply."""
    cid = start(clients["alice"])
    ended: dict[str, object] = {}

    original = drive.turn_finish

    def finish_after_end(**kwargs):  # the student ends the conversation while the model answers
        ended["conversation"] = clients["alice"].post(f"/api/v1/conversations/{cid}/end/").status_code
        with pytest.raises(summaries.TurnInProgress):
            summaries.conversation_summary_write(conversation_id=cid)
        return original(**kwargs)

    llm.script("chat", {"content": "The reply written while the conversation ended."})
    with mock.patch.object(drive, "turn_finish", side_effect=finish_after_end):
        resp = send(clients["alice"], cid, "one last question", "m1")
    assert ended["conversation"] == 202
    assert resp.status_code == 201, resp.content
    conversation = Conversation.objects.get(pk=cid)
    assert conversation.is_ended and conversation.turn_token == ""
    assert summaries.conversation_summary_write(conversation_id=cid) == summaries.Outcome.STORED
    transcript = llm.calls("summary")[0]["messages"][-1]["content"]
    assert "The reply written while the conversation ended." in transcript
    assert AIMemory.objects.filter(source_conversation_id=cid).count() == 1
    # The ended conversation takes no new message; the answered one still replays.
    assert send(clients["alice"], cid, "another", "m2").status_code == 409
    assert send(clients["alice"], cid, "one last question", "m1").json()["replayed"] is True


def test_database_down_before_the_message_is_stored_is_a_503_that_says_so(clients, llm):
    """The message could not be stored: 503 database_unavailable, 'not stored', nothing kept."""
    cid = start(clients["alice"])
    with mock.patch.object(claim, "_claim", side_effect=OperationalError("connection refused")):
        resp = send(clients["alice"], cid, "hello", "m1")
    assert resp.status_code == 503
    err = resp.json()["error"]
    assert err["code"] == "database_unavailable" and "not stored" in err["message"]
    assert not Message.objects.filter(conversation_id=cid).exists()


def test_database_down_after_the_message_is_stored_is_a_retry_safe_503(clients, llm):
    """The message is stored, the database fails when the reply is: 503 retry_safe with the
    message's id, and the retry completes the turn."""
    cid = start(clients["alice"])
    with mock.patch.object(drive, "turn_finish", side_effect=OperationalError("server closed the connection")):
        resp = send(clients["alice"], cid, "hello", "m1")
    assert resp.status_code == 503
    err = resp.json()["error"]
    assert err["code"] == "database_unavailable" and err["retry_safe"] is True
    stored = Message.objects.get(conversation_id=cid)
    assert err["details"]["student_message_id"] == stored.pk
    # The lease could not be released either: it expires by itself; here, release it as expiry would.
    Conversation.objects.filter(pk=cid).update(turn_expires_at=timezone.now() - timedelta(seconds=1))
    retry = send(clients["alice"], cid, "hello", "m1")
    assert retry.status_code == 201, retry.content
    assert retry.json()["student_message"]["id"] == stored.pk


def test_database_down_on_another_endpoint_is_a_503_envelope(clients, llm):
    """Any endpoint: an unreachable database is 503 in the envelope, with Retry-After."""
    with mock.patch("accounts.apis.UserOutput.to_representation", side_effect=OperationalError("gone")):
        resp = clients["alice"].get("/api/v1/me/")
    assert resp.status_code == 503
    assert resp.json()["error"]["code"] == "database_unavailable"
    assert resp["Retry-After"]
