"""The demo model (llm.demo_model), which `make run` starts when no model is configured: it tells
the product's prompts apart, and its answers pass the product's own checks, so that a first run
shows a reply, a summary stored from the model (not the fallback), a graded answer and a cited
answer about a student, through the real `openai` SDK over HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conversations.models import Message
from conversations.prompts import COMPRESSION_PROMPT
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from insights.prompts import ASK_PREAMBLE
from learning.models import Quiz
from learning.prompts import GRADING_PROMPT, grading_messages, parse_grading
from llm import demo_model
from memory.lifecycle_prompts import EXTRACTION_PROMPT, MERGE_PROMPT
from memory.models import AIMemory
from memory.prompts import PART_PROMPT, SUMMARY_PROMPT, parse_summary, summary_messages
from memory.validation import sentence_count
from safety.backends import CLASSIFIER_MARKER
from tests.conversations.test_turn import send, start


@pytest.fixture
def demo(settings: Any) -> Iterator[str]:
    """The demo model on a free port, configured as `make run` configures it."""
    httpd = demo_model.server()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    url = f"http://{host!s}:{port}/v1"
    for name in ("LLM_BASE_URL", "LLM_SUMMARY_BASE_URL"):
        setattr(settings, name, url)
    for name in ("LLM_API_KEY", "LLM_SUMMARY_API_KEY", "LLM_MODEL", "LLM_SUMMARY_MODEL"):
        setattr(settings, name, "")
    settings.LLM_CONTEXT_WINDOW = 8192
    settings.LLM_DEMO_MODEL = True
    yield url
    httpd.shutdown()
    httpd.server_close()


def test_each_marker_opens_the_product_prompt_it_names():
    """Each kind is told by the first words of the product's own prompt: a reworded prompt
    fails here, not in a first run."""
    prompts = {
        "summary": SUMMARY_PROMPT,
        "compression": COMPRESSION_PROMPT,
        "summary_part": PART_PROMPT,
        "grading": GRADING_PROMPT,
        "extraction": EXTRACTION_PROMPT,
        "merge": MERGE_PROMPT,
        "safety": CLASSIFIER_MARKER,
        "ask": ASK_PREAMBLE,
    }
    assert set(prompts) == set(demo_model.KIND_MARKERS)
    for kind, prompt in prompts.items():
        assert prompt.startswith(demo_model.KIND_MARKERS[kind]), kind
        assert demo_model.classify({"messages": [{"role": "system", "content": prompt}]}) == kind


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize(
    "first",
    [
        "How do I add 1/2 and 1/3?",
        "ok",
        "",
        "Why? Is it true that 2.5 + 1.5 = 4! I think so... right? " * 10,
    ],
)
def test_the_summary_passes_the_products_checks(language, first):
    """Whatever the student's first message (a word, none, many sentences), the summary has a
    title of 4 to 10 words and 2 sentences, in the student's language."""
    messages = f'<message role="student">{first}</message><message role="tutor">Yes.</message>'
    transcript = f"<transcript>{messages}</transcript>"
    body = {"messages": summary_messages(transcript=transcript, language=language)}
    title, content = parse_summary(demo_model.answer(body))
    assert 4 <= len(title.split()) <= 10 and sentence_count(content) == 2
    assert ("Séance" in title) == (language == "fr")


def test_grading_accepts_the_expected_answer_only():
    """Right when the answer is the expected one, case and punctuation aside; else wrong."""
    for given, correct in (("Paris.", True), ("paris", True), ("Lyon", False)):
        messages = grading_messages(question="Capital of France?", expected="Paris", given=given, language="en")
        body = {"messages": messages}
        assert parse_grading(demo_model.answer(body))[0] is correct


def test_a_reply_says_it_is_the_demo_model_and_names_the_memories_shown():
    """The chat reply says it is the demo model, quotes the student, and names the memories in
    its prompt (or says how one is made), in the student's language."""
    system = 'Tutor. <student_memories><memory date="2026-01-01" source="x">Adding fractions\nDetail.</memory>'
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "What is 1/2?"}]}
    reply = demo_model.answer(body)
    assert reply.startswith("(Demo model:") and "What is 1/2" in reply and "Adding fractions" in reply
    body["messages"][0]["content"] = "The student's language is French (fr): reply in French."
    reply = demo_model.answer(body)
    assert reply.startswith("(Modèle de démonstration") and "terminez cette conversation" in reply


def test_a_turn_and_a_summary_through_the_demo_model(clients, demo):
    """Through the product (the gateway, the `openai` SDK, HTTP): a student's message gets the
    demo model's reply, recorded under its id; the ended conversation's summary is the model's,
    not the fallback."""
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "How do I add 1/2 and 1/3?")
    assert resp.status_code == 201, resp.content
    reply = resp.json()["reply"]
    assert reply["model"] == demo_model.DEMO_MODEL_ID and reply["content"].startswith("(Demo model:")
    assert Message.objects.get(pk=reply["id"]).content == reply["content"]
    conversation_close(conversation_id=cid)
    assert conversation_summary_write(conversation_id=cid) == Outcome.STORED
    summary = AIMemory.objects.get(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY)
    assert summary.title == "Demo session about How do I add 1/2 and" and not summary.needs_review


def test_asked_for_a_quiz_it_creates_one_with_the_tool(clients, demo):
    """A student asking for a quiz gets one: the demo model calls create_quiz (offered to it),
    the quiz is stored for the conversation and sent with the reply, which says it is below."""
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "Can I have a quiz please?")
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["reply"]["content"] == "(Demo model.) Here is a short quiz: answer it below, and it is graded at once."
    quiz = Quiz.objects.get(conversation_id=cid)
    assert quiz.skill == "adding fractions" and quiz.question_count == 2
    assert [q["id"] for q in body["quizzes"]] == [quiz.pk]


def test_the_reply_is_cut_at_max_tokens():
    """A reply longer than max_tokens (4 characters a token) is cut, its finish reason `length`."""
    body = {"messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
    content, finish = demo_model._capped(demo_model.answer(body), body)
    assert len(content) == 20 and finish == "length"
    assert json.loads(demo_model.answer({"messages": [{"role": "system", "content": EXTRACTION_PROMPT}]})) == {
        "facts": [],
        "card": [],
    }
