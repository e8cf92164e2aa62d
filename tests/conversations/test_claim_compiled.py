"""The claim statement compiled once (conversations.turns._claim_compiled) is the statement the
ORM compiles for each student and conversation, with the same parameters in the same places."""

from __future__ import annotations

from django.db import connection

from conversations import turns
from conversations.models import Conversation
from tests.conversations.test_turn import send, start


def test_the_compiled_claim_is_the_orm_s_for_every_student(school):
    statement, spec = turns._claim_compiled()
    for name in ("alice", "bob", "carol"):
        user = school[name]
        conversation = Conversation.objects.create(student=user, last_activity_at="2026-12-03T08:00:00Z")
        slots = {
            turns._CLAIM_TOKENS: 7,
            turns._CLAIM_NOW: "now",
            turns._CLAIM_TOKEN: "token",
            turns._CLAIM_EXPIRES: "expires",
            turns._CLAIM_CLIENT_ID: "cmid",
            turns._CLAIM_CONTENT: "content",
        }
        fresh, params = turns._claim_compile(user=user, pk=conversation.pk, slots=slots)
        filled = {**slots, turns._CLAIM_PK: conversation.pk, turns._CLAIM_USER: user.pk}
        assert statement == fresh
        assert [filled[p] if isinstance(p, turns._Slot) else p for p in spec] == params
        assert conversation.pk in params and user.pk in params
    assert turns._claim_compiled() is turns._claim_compiled()  # compiled once


def test_two_students_claim_their_own_conversations_with_the_cached_statement(clients, llm, school):
    """The cached statement claims each student's own conversation only: another student's
    conversation id is a 404 and stores nothing."""
    llm.script("chat", {"content": "One."}, {"content": "Two."})
    alice_cid = start(clients["alice"])
    bob_cid = start(clients["bob"])
    assert send(clients["alice"], alice_cid, cmid="a1").status_code == 201
    assert send(clients["bob"], bob_cid, cmid="b1").status_code == 201
    assert send(clients["alice"], bob_cid, cmid="a2").status_code == 404
    assert Conversation.objects.get(pk=alice_cid).message_count == 2
    assert Conversation.objects.get(pk=bob_cid).message_count == 2
    if connection.vendor == "postgresql":
        assert connection.alias in turns._claim_cache
