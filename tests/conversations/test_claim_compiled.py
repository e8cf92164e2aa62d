"""The claim statement compiled once (conversations.claim._claim_compiled) is the statement the
ORM compiles for each student and conversation, with the same parameters in the same places."""

from __future__ import annotations

from django.db import connection

from conversations.models import Conversation
from conversations.turn import claim
from tests.conversations.test_turn import send, start


def test_the_compiled_claim_is_the_orm_s_for_every_student(school):
    statement, spec = claim._claim_compiled()
    for name in ("alice", "bob", "carol"):
        user = school[name]
        conversation = Conversation.objects.create(student=user, last_activity_at="2026-12-03T08:00:00Z")
        slots = {
            claim._CLAIM_TOKENS: 7,
            claim._CLAIM_NOW: "now",
            claim._CLAIM_TOKEN: "token",
            claim._CLAIM_EXPIRES: "expires",
            claim._CLAIM_CLIENT_ID: "cmid",
            claim._CLAIM_CONTENT: "content",
        }
        fresh, params = claim._claim_compile(user=user, pk=conversation.pk, slots=slots)
        filled = {**slots, claim._CLAIM_PK: conversation.pk, claim._CLAIM_USER: user.pk}
        assert statement == fresh
        assert [filled[p] if isinstance(p, claim._Slot) else p for p in spec] == params
        assert conversation.pk in params and user.pk in params
    assert claim._claim_compiled() is claim._claim_compiled()  # compiled once


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
        assert connection.alias in claim._claim_cache
