"""Summaries and the model's name on llama-cpp-python's server, as the README starts it
(the scripted server's `like_llama_cpp_python`): json_schema refused with a 500, raw line breaks
inside the JSON strings its grammar lets through, no window said, an answer cut at its window
without an error, its model named by the GGUF's path."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.summaries import Outcome, conversation_summary_write
from llm import gateway
from llm.models import LLMUsage
from memory.models import AIMemory
from tests.conftest import client_for
from tests.conversations.test_turn import send, start

GGUF_ID = "SmolLM2-135M-Instruct.Q4_1"

SENTENCES = [
    "The student practised adding fractions with unlike denominators and found the common denominator.",
    "They answered three of five quiz questions correctly after checking each step with the tutor.",
    "Next time they should review equivalent fractions before moving on to subtraction with borrowing.",
    "They also asked why dividing by a fraction means multiplying by its reciprocal, and tried two examples.",
]


@pytest.fixture
def llama(llm: Any, settings: Any) -> Any:
    """The scripted server as llama-cpp-python, configured by its base URL alone (as the README
    says): the model's name is asked of its /v1/models."""
    llm.like_llama_cpp_python()
    settings.LLM_MODEL = ""
    settings.LLM_SUMMARY_MODEL = ""
    return llm


def ended_conversation(student: Any, *, turns: int, words: int = 12, subject: str = "Fractions") -> int:
    """An ended conversation of `turns` exchanges, each message about `words` words long."""
    conversation = Conversation.objects.create(
        student=student,
        subject=subject,
        status=Conversation.Status.ENDED,
        last_activity_at=timezone.now(),
        ended_at=timezone.now(),
        summary_status=Conversation.SummaryStatus.PENDING,
        message_count=2 * turns,
    )
    text = " ".join(["fractions"] * words)
    Message.objects.bulk_create(
        Message(
            conversation=conversation,
            seq=seq,
            role="student" if seq % 2 else "tutor",
            content=f"Message {seq} about {text}.",
            client_message_id=f"c{seq}" if seq % 2 else None,
            token_count=words + 4,
        )
        for seq in range(1, 2 * turns + 1)
    )
    return conversation.pk


def test_a_46_word_title_with_raw_line_breaks_is_cut_at_a_word_not_a_fallback(llama, school):
    """The issue's answer: json_schema refused (500), then json_object answered with a 46-word
    title and raw line breaks between the content's sentences (invalid to a strict JSON parser).
    The title is cut at a word to at most 10, the summary is the model's, without a re-ask."""
    llama.summary_title_words = 46
    cid = ended_conversation(school["alice"], turns=3)
    assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    kinds = [(c.get("response_format") or {}).get("type") for c in llama.calls("summary")]
    assert kinds == ["json_schema", "json_object"]
    memory = AIMemory.objects.get(source_conversation_id=cid)
    assert memory.needs_review is False and Conversation.objects.get(pk=cid).summary_status == "done"
    assert memory.title.startswith("Working through fractions with unlike denominators")
    assert 4 <= len(memory.title.split()) <= 10 and memory.title.split()[-1].lower() not in {"and", "with"}
    assert memory.content.startswith("The student practised adding fractions")
    assert set(LLMUsage.objects.filter(conversation_id=cid).values_list("model", flat=True)) == {GGUF_ID}


def test_an_answer_cut_at_the_servers_window_teaches_the_window_and_keeps_its_whole_sentences(llama, school, caplog):
    """The prompt fits the server's 2,048 tokens but the answer's room does not: the server cuts
    the answer there, silently (finish_reason "length", fewer tokens than asked). The window is
    learned from it (the server never says it, and never refused), and the cut answer's whole
    sentences are the summary: its JSON closed, its unfinished sentence dropped."""
    cid = ended_conversation(school["alice"], turns=18)
    content = " ".join(SENTENCES * 6)
    llama.script(
        "summary", {"content": json.dumps({"title": "Adding fractions with unlike denominators", "content": content})}
    )
    profile = gateway.background_profile()
    assert gateway.context_window(profile).source.startswith("default")
    with caplog.at_level(logging.WARNING, logger="llm.windows"):
        assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    refused, answered = llama.calls("summary")
    assert refused["response_format"]["type"] == "json_schema"
    assert llama.prompt_tokens(answered) < 2048 < llama.prompt_tokens(answered) + answered["max_tokens"]
    memory = AIMemory.objects.get(source_conversation_id=cid)
    assert memory.title == "Adding fractions with unlike denominators" and memory.needs_review is False
    kept = memory.content.split("\n")
    assert 2 <= len(kept) <= 4 and kept == SENTENCES[: len(kept)], memory.content
    window = gateway.context_window(profile)
    assert window.source.startswith("learned") and window.stated == 2048
    assert any("the server does not say it" in r.getMessage() for r in caplog.records)


def test_a_prompt_past_the_servers_window_is_summarised_in_parts_not_a_fallback(llama, school):
    """A conversation longer than the server's 2,048 tokens: its refusal ("maximum context
    length is 2048 tokens") teaches the window, and the summary is written again in parts, once,
    rather than settled as a fallback."""
    cid = ended_conversation(school["alice"], turns=60, words=20)
    assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    assert llama.calls("summary_part"), "the transcript was summarised in parts"
    assert not AIMemory.objects.get(source_conversation_id=cid).needs_review
    assert gateway.context_window(gateway.background_profile()).stated == 2048


def test_the_model_is_shown_and_recorded_by_its_id_never_the_servers_path(llama, school):
    """llama-cpp-python names its model by the GGUF's path: every message's `model`, and the
    usage rows, hold the model's id; a row stored with a path before shows no path either."""
    alice = client_for(school["alice"])
    cid = start(alice)
    assert send(alice, cid, "How do I add 1/2 and 1/3?", "m1").status_code == 201
    page = alice.get(f"/api/v1/conversations/{cid}/messages/").json()["results"]
    tutor = next(m for m in page if m["role"] == "tutor")
    assert tutor["model"] == GGUF_ID
    assert set(LLMUsage.objects.values_list("model", flat=True)) == {GGUF_ID}
    Message.objects.filter(pk=tutor["id"]).update(model=llama.models[0])
    shown = alice.get(f"/api/v1/conversations/{cid}/messages/").json()["results"]
    assert {m["model"] for m in shown if m["role"] == "tutor"} == {GGUF_ID}
    assert "/srv/" not in json.dumps(shown)
