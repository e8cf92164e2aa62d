"""The summary service, called directly (the worker path is in test_summary_worker.py)."""

from __future__ import annotations

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.db import DataError, IntegrityError, OperationalError, ProgrammingError
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write, pending_summaries_due
from memory.models import AIMemory
from memory.services.records import memory_summary_store
from tests.conftest import client_for
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


def test_a_conversation_whose_only_message_was_never_answered_is_not_summarised(clients, llm):
    """A conversation ended with its one message unanswered (the tutor was down) is skipped: no
    model call, no memory."""
    cid = start(clients["alice"])
    Message.objects.create(
        conversation_id=cid, seq=1, role="student", content="Can you help me?", client_message_id="m1"
    )
    conversation_close(conversation_id=cid)
    assert Conversation.objects.get(pk=cid).summary_status == "pending"
    assert conversation_summary_write(conversation_id=cid) is Outcome.SKIPPED
    assert Conversation.objects.get(pk=cid).summary_status == "skipped"
    assert not AIMemory.objects.filter(source_conversation_id=cid).exists()
    assert not llm.calls("summary")


def test_summary_prompt_holds_the_transcript_and_language(ended, llm, school):
    """The summary model gets the transcript and is asked for JSON in the student's language."""
    school["alice"].language = "fr"
    school["alice"].save()
    conversation_summary_write(conversation_id=ended)
    sent = llm.calls("summary")[0]["messages"]
    assert "French" in sent[0]["content"] and '"title"' in sent[0]["content"]
    assert '<message role="student">Can you help me with fractions?</message>' in sent[1]["content"]


def test_repair_attempt_then_an_honest_fallback(ended, llm):
    """Invalid JSON gets one repair attempt; invalid twice stores a fallback memory written from
    the conversation itself (its subject, date and the student's questions), to be reviewed."""
    llm.script("summary", {"content": "not json"}, {"content": json.dumps({"title": "Too short", "content": "A. B."})})
    assert conversation_summary_write(conversation_id=ended) is Outcome.FALLBACK
    conversation = Conversation.objects.get(pk=ended)
    assert conversation.summary_status == "fallback"
    assert "4 to 10 words" in conversation.summary_error
    repair = llm.calls("summary")[1]["messages"]
    assert repair[-1]["role"] == "user" and "not valid" in repair[-1]["content"]
    memory = AIMemory.objects.get()
    assert memory.needs_review is True and memory.confidence < 0.5 and memory.kind == "summary"
    assert "Can you help me with fractions" in memory.content and conversation.subject in memory.title
    # Settled: a redelivery changes nothing.
    assert conversation_summary_write(conversation_id=ended) is Outcome.ALREADY_DONE


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


def test_the_summary_asks_for_a_json_schema(ended, llm):
    """Structured output: the request carries response_format with the {title, content} schema."""
    conversation_summary_write(conversation_id=ended)
    fmt = llm.calls("summary")[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["required"] == ["title", "content"]


def test_without_json_schema_the_json_object_mode_carries_the_schema(ended, llm):
    """llama-cpp-python takes json_object only, with the schema beside it (its grammar follows it)."""
    llm.refused_formats = {"json_schema"}
    llm.format_refusal_status = 500
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    fmt = llm.calls("summary")[1]["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["required"] == ["title", "content"]


@pytest.mark.parametrize("status", [400, 500])
def test_a_refused_response_format_falls_back_and_is_remembered(ended, llm, school, status):
    """An endpoint that refuses json_schema, then json_object (with a 400, or a 500 naming
    response_format as llama-cpp-python does), is asked in the prompt alone; the choice is
    remembered, so the next summary goes straight to it."""
    llm.refused_formats = {"json_schema", "json_object"}
    llm.format_refusal_status = status
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    kinds = [(c.get("response_format") or {}).get("type") for c in llm.calls("summary")]
    assert kinds == ["json_schema", "json_object", None]
    bob = client_for(school["bob"])
    other = start(bob)
    send(bob, other, "What is a prime number?", "b1")
    conversation_close(conversation_id=other)
    assert conversation_summary_write(conversation_id=other) is Outcome.STORED
    assert [(c.get("response_format") or {}).get("type") for c in llm.calls("summary")][3:] == [None]


def test_a_refusal_of_the_request_is_permanent_and_leaves_a_fallback(ended, llm, settings):
    """A 400 that is not about the format (here, with the format fixed by the setting) is not
    retried as if transient: a fallback memory is stored at once."""
    settings.LLM_SUMMARY_RESPONSE_FORMAT = "json_schema"
    llm.script("summary", {"status": 400, "body": {"error": {"message": "invalid model"}}})
    assert conversation_summary_write(conversation_id=ended) is Outcome.FALLBACK
    assert len(llm.calls("summary")) == 1
    assert AIMemory.objects.get().needs_review is True


def test_a_transcript_longer_than_the_summary_window_is_summarised_in_parts(ended, llm, settings):
    """Map, then reduce: each part of an overlong transcript is summarised on its own, then the
    summary is written from the parts' notes; no request exceeds the window."""
    conversation = Conversation.objects.get(pk=ended)
    for i in range(12):
        Message.objects.create(
            conversation=conversation,
            seq=100 + i,
            role="student" if i % 2 == 0 else "tutor",
            content=f"Part {i}: " + "fractions with unlike denominators " * 60,
            token_count=300,
            client_message_id=f"long-{i}" if i % 2 == 0 else None,
        )
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 2048
    llm.context_window = 2048
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    parts = llm.calls("summary_part")
    assert len(parts) >= 3
    final = llm.calls("summary")[-1]["messages"][-1]["content"]
    assert "Notes on the conversation, part by part" in final and '<notes part="1">' in final


def test_a_teacher_correction_settles_a_fallback(ended, llm, school, clients):
    """A teacher's PATCH of a fallback summary replaces it: no review needed, full confidence."""
    llm.script("summary", {"content": "not json"}, {"content": "still not json"})
    assert conversation_summary_write(conversation_id=ended) is Outcome.FALLBACK
    memory = AIMemory.objects.get()
    resp = clients["teacher_a"].patch(
        f"/api/v1/memories/{memory.pk}/",
        {"content": "Alice practised adding fractions. She needs common denominators next."},
        format="json",
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["needs_review"] is False and resp.json()["confidence"] == 1.0


def test_a_database_error_during_a_summary_is_retried_not_a_failure(ended, llm, settings):
    """The database restarting mid-summary is transient: the task retries (run eagerly here, its
    retries follow at once, up to SUMMARY_MAX_RETRIES), the summary stays pending for the sweep
    and nothing is marked failed."""
    from unittest import mock

    from django.db import OperationalError

    from conversations import summaries
    from conversations.tasks import conversation_summarize

    with mock.patch.object(summaries, "memory_summary_store", side_effect=OperationalError("terminating connection")):
        result = conversation_summarize.apply(args=(ended,))
    assert result.get() == "pending"
    conversation = Conversation.objects.get(pk=ended)
    assert conversation.summary_status == "pending" and "terminating connection" in conversation.summary_error
    assert conversation.summary_attempts == settings.SUMMARY_MAX_RETRIES + 1
    assert not AIMemory.objects.exists()


def _index_row_too_large() -> OperationalError:
    """What Django raises on PostgreSQL for a key too large for its index: an OperationalError
    (psycopg files SQLSTATE class 54, program limit exceeded, there) that no retry can fix."""
    from psycopg.errors import ProgramLimitExceeded

    error = OperationalError("index row size 5040 exceeds btree version 4 maximum 2704")
    error.__cause__ = ProgramLimitExceeded("index row size 5040 exceeds btree version 4 maximum 2704")
    return error


@pytest.mark.parametrize(
    "error",
    [
        DataError("value too long for type character varying(200)"),
        IntegrityError("null value in column violates not-null constraint"),
        ProgrammingError("column does not exist"),
        _index_row_too_large(),
    ],
    ids=["data", "integrity", "programming", "program_limit"],
)
def test_a_permanent_database_error_settles_the_summary_with_a_fallback(ended, llm, settings, caplog, error):
    """A database error that no retry fixes, raised while storing the model's summary, is retried
    SUMMARY_MAX_RETRIES times at most (one model call each), then settled: the fallback memory is
    stored (status fallback, the error kept and logged with its traceback), and the sweep never
    sends it again, so the model is not paid for it again."""
    from conversations import summaries
    from conversations.tasks import conversation_summarize, summaries_sweep

    settings.SUMMARY_MAX_RETRIES = 2
    store = summaries.memory_summary_store

    def store_fails_unless_fallback(**kwargs):
        if kwargs.get("fallback"):
            return store(**kwargs)
        raise error

    with mock.patch.object(summaries, "memory_summary_store", side_effect=store_fails_unless_fallback):
        result = conversation_summarize.apply(args=(ended,))
    assert result.get() == "fallback"
    assert len(llm.calls("summary")) == settings.SUMMARY_MAX_RETRIES + 1
    conversation = Conversation.objects.get(pk=ended)
    assert conversation.summary_status == "fallback" and str(error) in conversation.summary_error
    assert conversation.summary_attempts == settings.SUMMARY_MAX_RETRIES + 1
    memory = AIMemory.objects.get(source_conversation_id=ended)
    assert memory.needs_review is True and "Can you help me with fractions" in memory.content
    [record] = [r for r in caplog.records if r.levelname == "ERROR" and f"conversation {ended}" in r.getMessage()]
    assert record.exc_info is not None

    # Long past the sweep's delay, it is not due again: the model is not called again.
    Conversation.objects.filter(pk=ended).update(summary_requested_at=timezone.now() - timedelta(days=1))
    assert ended not in pending_summaries_due()
    assert summaries_sweep.apply().get() == 0
    assert len(llm.calls("summary")) == settings.SUMMARY_MAX_RETRIES + 1


def test_a_permanent_database_error_that_also_refuses_the_fallback_marks_the_summary_failed(
    ended, llm, settings, caplog
):
    """If even the fallback memory cannot be stored, the summary is marked failed with the error
    (logged with its traceback), never pending again: settled, not silently lost."""
    from conversations import summaries
    from conversations.tasks import conversation_summarize

    settings.SUMMARY_MAX_RETRIES = 1
    with mock.patch.object(summaries, "memory_summary_store", side_effect=DataError("value too long")):
        result = conversation_summarize.apply(args=(ended,))
    assert result.get() == "failed"
    assert len(llm.calls("summary")) == 2
    conversation = Conversation.objects.get(pk=ended)
    assert conversation.summary_status == "failed" and conversation.summary_error == "value too long"
    assert not AIMemory.objects.filter(source_conversation_id=ended).exists()
    assert any(r.levelname == "ERROR" and r.exc_info for r in caplog.records)
    Conversation.objects.filter(pk=ended).update(summary_requested_at=timezone.now() - timedelta(days=1))
    assert ended not in pending_summaries_due()


# --- A small model's near misses: repaired, or asked again once --------------------------------


def _summary_usage(cid):
    from llm.models import LLMUsage

    return list(LLMUsage.objects.filter(purpose="summary", conversation_id=cid))


@pytest.mark.parametrize("words", [11, 29])
def test_a_title_too_long_is_cut_at_a_word_not_a_fallback(ended, llm, words):
    """Under json_object (llama-cpp-python: json_schema refused with a 500) the keys hold but the
    title has 11 or 29 words, in the first answer and in a re-ask: the title is cut at a word to
    at most 10 (no dangling "and"), the summary is the model's, and no fallback is stored."""
    llm.refused_formats = {"json_schema"}
    llm.format_refusal_status = 500
    llm.summary_title_words = words
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    memory = AIMemory.objects.get(source_conversation_id=ended)
    assert memory.needs_review is False and Conversation.objects.get(pk=ended).summary_status == "done"
    assert 4 <= len(memory.title.split()) <= 10
    assert memory.title.startswith("Working through fractions with unlike denominators")
    assert memory.title.split()[-1].lower() not in {"and", "with", "the", "then"}
    assert memory.content.startswith("The student practised adding fractions")


def test_a_summary_too_long_is_cut_at_a_sentence(ended, llm):
    """Six sentences, over 200 words: the content is cut after the last whole sentence that keeps
    it to 4 sentences and 200 words."""
    sentence = "The student worked on " + "fractions with unlike denominators and " * 6 + "checked each answer."
    content = " ".join([sentence] * 6)
    llm.script(
        "summary", {"content": json.dumps({"title": "Fractions with unlike denominators today", "content": content})}
    )
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    memory = AIMemory.objects.get(source_conversation_id=ended)
    assert memory.content == " ".join([sentence] * 4) and len(memory.content.split()) <= 200
    assert len(llm.calls("summary")) == 1


def test_what_a_cut_cannot_repair_is_asked_again_once_with_the_error_and_metered(ended, llm):
    """A one-sentence summary cannot be cut into a valid one: the model is asked again, once,
    with the validation error; its second answer (its title one word too long) is repaired and
    stored. Both calls are metered."""
    first = {"title": "Fractions with unlike denominators today", "content": "Only one sentence here."}
    second = {
        "title": "Adding fractions with unlike denominators using a common denominator of six",
        "content": "The student added 1/2 and 1/3. They found the common denominator 6.",
    }
    llm.script("summary", {"content": json.dumps(first)}, {"content": json.dumps(second)})
    assert conversation_summary_write(conversation_id=ended) is Outcome.STORED
    again = llm.calls("summary")[1]["messages"][-1]["content"]
    assert "2 to 4 sentences (got 1)" in again
    memory = AIMemory.objects.get(source_conversation_id=ended)
    assert memory.title == "Adding fractions with unlike denominators using a common denominator"
    assert memory.content == second["content"]
    usage = _summary_usage(ended)
    assert len(usage) == 2 and all(u.ok for u in usage)
