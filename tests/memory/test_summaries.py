"""The summary service, called directly (the worker path is in test_summary_worker.py)."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError

from conversations.models import Conversation
from conversations.services import conversation_close
from memory.models import AIMemory
from memory.services import memory_summary_store
from memory.summaries import Outcome, conversation_summary_write
from tests.conversations.test_turn import send, start


@pytest.fixture
def ended(clients, llm):
    cid = start(clients["alice"])
    send(clients["alice"], cid, "Can you help me with fractions?", "m1")
    conversation_close(conversation_id=cid)
    return cid


def test_summary_is_stored_once(ended, llm, school):
    """One AIMemory per conversation; a second run stores nothing and calls no model."""
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    memory = AIMemory.objects.get(source_conversation_id=ended)
    assert memory.kind == "summary" and memory.source == "summary_task" and memory.student == school["alice"]
    assert Conversation.objects.get(pk=ended).summary_status == "done"
    calls = len(llm.calls("summary"))
    assert conversation_summary_write(conversation_id=ended) is Outcome.ALREADY_DONE
    assert len(llm.calls("summary")) == calls
    assert AIMemory.objects.filter(source_conversation_id=ended).count() == 1


def test_summary_prompt_holds_the_transcript_and_language(ended, llm, school):
    """The summary model gets the transcript and is asked for JSON in the student's language."""
    school["alice"].language = "fr"
    school["alice"].save()
    conversation_summary_write(conversation_id=ended)
    sent = llm.calls("summary")[0]["messages"]
    assert "French" in sent[0]["content"] and '"title"' in sent[0]["content"]
    assert '<message role="student">Can you help me with fractions?</message>' in sent[1]["content"]


def test_repair_attempt_then_permanent_failure(ended, llm):
    """Invalid JSON gets one repair attempt; invalid twice marks the conversation failed, no memory."""
    llm.script("summary", {"content": "not json"}, {"content": json.dumps({"title": "Too short", "content": "A. B."})})
    assert conversation_summary_write(conversation_id=ended) is Outcome.FAILED
    conversation = Conversation.objects.get(pk=ended)
    assert conversation.summary_status == "failed"
    assert "4 to 10 words" in conversation.summary_error
    repair = llm.calls("summary")[1]["messages"]
    assert repair[-1]["role"] == "user" and "not valid" in repair[-1]["content"]
    assert not AIMemory.objects.exists()


def test_unique_constraint_backs_idempotency(ended, school):
    """Even bypassing the service, the database refuses a second summary for one conversation."""
    memory_summary_store(
        student_id=school["alice"].pk, conversation_id=ended, title="Fractions practice with the tutor", content="A. B."
    )
    _, created = memory_summary_store(
        student_id=school["alice"].pk, conversation_id=ended, title="Another title for the same", content="C. D."
    )
    assert created is False
    with pytest.raises(IntegrityError):
        AIMemory.objects.create(
            student=school["alice"],
            kind="summary",
            source="summary_task",
            source_conversation_id=ended,
            title="Direct insert of a duplicate",
            content="E. F.",
            created_at=AIMemory.objects.get().created_at,
        )


def test_model_down_raises_transient_error_and_keeps_pending(ended, llm):
    from llm.gateway import LLMUnavailable

    llm.script("summary", {"status": 503})
    with pytest.raises(LLMUnavailable):
        conversation_summary_write(conversation_id=ended)
    assert Conversation.objects.get(pk=ended).summary_status == "pending"
