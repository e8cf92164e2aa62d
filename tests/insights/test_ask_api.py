"""Asking about a student, through the API with the scripted model: the answer cites evidence the
student owns, a forged ref is dropped, a student never gets a teacher-only note, another class's
teacher gets 404, a French teacher gets French, the log and its access log are stored, the call
is metered and within the budgets."""

from __future__ import annotations

from decimal import Decimal

import pytest

from conversations.models import ConversationFile
from insights.models import AskLog, AskMemory
from learning.models import Quiz, Task
from llm.models import LLMUsage
from memory.models import AIMemory
from tests.conversations.test_turn import send, start
from tests.insights.conftest import ask, prompt_of

QUESTION = "Why is alice stuck on fractions?"


def owner_of(citation: dict) -> int:
    """The student who owns the record a citation points at, read from the database."""
    kind, pk = citation["kind"], citation["id"]
    if kind == "memory":
        return AIMemory.objects.get(pk=pk).student_id
    if kind == "quiz":
        return Quiz.objects.get(pk=pk).student_id
    if kind == "task":
        task = Task.objects.get(pk=pk)
        assert task.student_id is not None
        return task.student_id
    if kind == "file":
        return ConversationFile.objects.get(pk=pk).conversation.student_id
    return citation["student"]


def test_teacher_gets_an_answer_citing_only_the_students_evidence(school, clients, llm, record):
    """Every citation points at a record alice owns and was shown; each claim cites; nothing dropped."""
    resp = ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["question"] == QUESTION and body["language"] == "en"
    assert body["citations"] and body["dropped"] == [] and body["insufficient"] is False
    assert body["students"] == []
    for citation in body["citations"]:
        assert citation["student"] == school["alice"].pk
        assert owner_of(citation) == school["alice"].pk
        assert f"[{citation['ref']}]" in body["answer"]
        assert citation["title"] and citation["excerpt"]
    assert body["claims"] and all(claim["supported"] for claim in body["claims"])
    cited = {c["ref"] for c in body["citations"]}
    assert {ref for claim in body["claims"] for ref in claim["refs"]} == cited
    # The evidence of every kind was shown to the model, the teacher-only note included for a teacher.
    prompt = prompt_of(llm)
    for ref in (f"m{record.fact}", f"m{record.approach}", f"m{record.teacher_only}", f"quiz {record.quiz}"):
        assert f'ref="{ref}"' in prompt, ref
    assert f'ref="task {record.task}"' in prompt and f'ref="file {record.file}"' in prompt
    assert 'ref="skill adding fractions with unlike denominators"' in prompt
    assert "Write in English" in prompt


def test_the_log_and_the_memories_it_used_are_stored(school, clients, llm, record):
    """One AskLog with the checked answer, and one AskMemory per memory shown, in prompt order."""
    body = ask(clients["teacher_a"], school["alice"].pk, QUESTION).json()
    log = AskLog.objects.get()
    assert log.pk == body["id"] and log.asker == school["teacher_a"] and log.student == school["alice"]
    assert log.classroom is None and log.answer == body["answer"] and log.citations == body["citations"]
    assert list(log.subjects.all()) == [school["alice"]]
    assert log.model == "scripted-tutor" and log.prompt_tokens > 0 and log.completion_tokens > 0
    accesses = list(AskMemory.objects.filter(ask=log).order_by("rank"))
    assert [a.rank for a in accesses] == list(range(1, len(accesses) + 1))
    used = {a.memory_id for a in accesses}
    assert {record.fact, record.approach, record.teacher_only, record.shared_note} <= used
    cited = {c["id"] for c in body["citations"] if c["kind"] == "memory"}
    assert {a.memory_id for a in accesses if a.signals["cited"]} == cited
    assert all(AIMemory.objects.get(pk=m).student == school["alice"] for m in used)


def test_the_call_is_metered_to_the_asker(school, clients, llm, record):
    """The model call is one LLMUsage row, purpose ask, on the teacher's account, not alice's;
    alice's own question about herself is hers."""
    ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    (row,) = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.ASK)
    assert (row.asker, row.student, row.classroom) == (school["teacher_a"], None, None)
    assert row.ok and row.prompt_tokens > 0
    assert ask(clients["alice"], school["alice"].pk, QUESTION).status_code == 200
    own = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.ASK).exclude(pk=row.pk).get()
    assert (own.asker, own.student) == (school["alice"], school["alice"])


def test_a_forged_citation_is_dropped(school, clients, llm, record):
    """A ref the prompt never showed (bob's memory) is removed from the text and listed; the
    claim that cited it alone is unsupported."""
    llm.ask_forged_ref = f"m{record.bob_memory}"
    body = ask(clients["teacher_a"], school["alice"].pk, QUESTION).json()
    assert body["dropped"] == [f"m{record.bob_memory}"]
    assert f"m{record.bob_memory}" not in body["answer"]
    assert all(c["student"] == school["alice"].pk for c in body["citations"])
    assert body["claims"][-1] == {"text": "It is also noted here.", "refs": [], "supported": False}
    assert AskLog.objects.get().dropped == [f"m{record.bob_memory}"]


def test_a_students_own_question_never_shows_nor_cites_a_teacher_only_note(school, clients, llm, record):
    """alice asking about herself: the teacher-only note is not in the prompt, and a model citing
    it anyway has the ref dropped."""
    llm.script(
        "ask",
        {"content": f"Your parents worry about tests [m{record.teacher_only}]. You use pizza [m{record.approach}]."},
    )
    resp = ask(clients["alice"], school["alice"].pk, "What do you know about me?")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    prompt = prompt_of(llm)
    assert f'ref="m{record.teacher_only}"' not in prompt and "anxiety" not in prompt
    assert f'ref="m{record.shared_note}"' in prompt
    assert body["dropped"] == [f"m{record.teacher_only}"]
    assert [c["ref"] for c in body["citations"]] == [f"m{record.approach}"]
    assert "themself" in prompt


def test_the_default_answer_to_a_student_cites_nothing_teacher_only(school, clients, llm, record):
    """With the model citing whatever it was shown, no citation of alice's own answer is a
    teacher-only note, and no AskMemory row of hers points at one."""
    body = ask(clients["alice"], school["alice"].pk, "Why do fractions make me anxious?").json()
    for citation in body["citations"]:
        if citation["kind"] == "memory":
            assert AIMemory.objects.get(pk=citation["id"]).visibility == AIMemory.Visibility.STUDENT
    assert not AskMemory.objects.filter(memory__visibility=AIMemory.Visibility.TEACHER_ONLY).exists()


def test_a_french_teacher_gets_french(school, clients, llm, record):
    """The answer is in the asker's language: the prompt asks for French, the log says fr."""
    school["teacher_a"].language = "fr"
    school["teacher_a"].save(update_fields=["language"])
    body = ask(clients["teacher_a"], school["alice"].pk, "Pourquoi Alice bloque-t-elle sur les fractions ?").json()
    assert body["language"] == "fr"
    assert "Write in French" in prompt_of(llm)
    assert body["answer"].startswith("D'après les éléments")
    assert body["citations"]


@pytest.mark.parametrize("intruder", ["teacher_b", "bob", "carol"])
def test_another_class_teacher_or_another_student_gets_404(school, clients, llm, record, intruder):
    """teacher_b (another class), bob (same class) and carol get 404; the model is not asked."""
    resp = ask(clients[intruder], school["alice"].pk, QUESTION)
    assert resp.status_code == 404, resp.content
    assert resp.json()["error"]["code"] == "not_found"
    assert llm.calls("ask") == [] and not AskLog.objects.exists()


def test_staff_may_ask_about_any_student(school, clients, llm, record):
    """An active staff account asks about alice and sees the teacher-only evidence too."""
    from tests.conftest import client_for, make_user

    staff = make_user("ops", "staff", is_staff=True)
    resp = ask(client_for(staff), school["alice"].pk, QUESTION)
    assert resp.status_code == 200, resp.content
    assert f'ref="m{record.teacher_only}"' in prompt_of(llm)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": ""}, "question"),
        ({"question": "   "}, "question"),
        ({"question": "x" * 1001}, "question"),
        ({}, "question"),
        ({"question": 12}, "question"),
    ],
)
def test_bad_questions_are_400(school, clients, llm, body, field):
    """Empty, blank, too long, missing or not text: 400 `invalid` naming the field, no model call."""
    resp = clients["teacher_a"].post(f"/api/v1/students/{school['alice'].pk}/ask/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid" and field in resp.json()["error"]["details"]
    assert llm.calls("ask") == []


def test_no_evidence_says_so_without_asking_the_model(school, clients, llm):
    """carol has no record: the answer says the evidence does not answer, insufficient, no call."""
    body = ask(clients["teacher_b"], school["carol"].pk, "What does carol struggle with?").json()
    assert body["insufficient"] is True and body["citations"] == []
    assert body["answer"] == "The evidence does not answer this question."
    assert llm.calls("ask") == [] and not LLMUsage.objects.filter(purpose="ask").exists()
    assert AskLog.objects.get().evidence_count == 0


def test_the_model_saying_the_evidence_does_not_answer_is_insufficient(school, clients, llm, record):
    llm.script("ask", {"content": "The evidence does not answer this question."})
    body = ask(clients["teacher_a"], school["alice"].pk, "What is her favourite colour?").json()
    assert body["insufficient"] is True and body["claims"][0]["supported"] is False


def test_past_the_budget_the_question_is_refused_like_a_chat_message(school, clients, llm, record, settings):
    """alice's daily budget spent: her own question is refused, 429 budget_exceeded with
    Retry-After and no call; her teacher's question about her is not (it is the teacher's)."""
    settings.BUDGET_STUDENT_DAILY = Decimal("0.5")
    LLMUsage.objects.create(purpose="chat", model="x", student=school["alice"], cost=Decimal("1"))
    resp = ask(clients["alice"], school["alice"].pk, QUESTION)
    assert resp.status_code == 429, resp.content
    assert resp.json()["error"]["code"] == "budget_exceeded" and resp["Retry-After"]
    assert resp.json()["error"]["details"]["budget"] == "student_daily"
    assert llm.calls("ask") == []
    assert ask(clients["teacher_a"], school["alice"].pk, QUESTION).status_code == 200


def test_a_teachers_questions_never_lock_the_student_out(school, clients, llm, record, settings):
    """Questions about alice, as dear as a day of her budget each, are the teacher's spend: alice
    still sends; the teacher, past their own asker budget, gets a 429 that speaks to them."""
    # Room for one turn (at most 3.072 USD with this window and no tool round) and no more.
    settings.BUDGET_STUDENT_DAILY = Decimal("3.10")
    settings.BUDGET_CLASSROOM_DAILY = Decimal("3.10")
    settings.BUDGET_ASKER_DAILY = Decimal("0.05")
    settings.LLM_PRICES = {"scripted-tutor": (Decimal("1000"), Decimal("3000"))}
    settings.LLM_CONTEXT_WINDOW = 2048
    settings.MAX_TOOL_ROUNDS = 0
    assert ask(clients["teacher_a"], school["alice"].pk, QUESTION).status_code == 200
    assert LLMUsage.objects.get(purpose="ask").cost > Decimal("0.05")
    refused = ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["details"]["budget"] == "asker_daily"
    assert error["message"].startswith("Your daily budget for questions")
    conversation = clients["alice"].post("/api/v1/conversations/", {"subject": "Fractions"}, format="json").json()
    sent = clients["alice"].post(
        f"/api/v1/conversations/{conversation['id']}/messages/",
        {"content": "What is 1/2 + 1/4?", "client_message_id": "m1"},
        format="json",
    )
    assert sent.status_code == 201, sent.content


def test_no_model_configured_is_503(school, clients, record, no_llm):
    """No model endpoint: 503 model_not_configured before anything is streamed or stored; the
    teacher is told the real reason (which variables to set)."""
    resp = ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "model_not_configured"
    message = resp.json()["error"]["message"]
    assert "LLM_API_KEY" in message and "LLM_BASE_URL" in message and "Ollama" in message


def test_a_teacher_is_told_the_real_reason_and_a_student_is_not(school, clients, record, llm, settings):
    """The same configuration error (a server listing several models, none chosen): a teacher's
    question answers 503 model_not_configured naming the models and LLM_MODEL; a student's
    message answers the same code in a student's words, with no variable or server address."""
    llm.models = ["llama3.1:8b", "qwen2.5:7b"]
    settings.LLM_MODEL = ""
    resp = ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    assert resp.status_code == 503, resp.content
    error = resp.json()["error"]
    assert error["code"] == "model_not_configured"
    assert "llama3.1:8b, qwen2.5:7b" in error["message"] and "LLM_MODEL" in error["message"]
    cid = start(clients["alice"])
    error = send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1").json()["error"]
    assert error["code"] == "model_not_configured"
    assert "LLM_MODEL" not in error["message"] and llm.base_url not in error["message"]


def test_a_failing_model_is_503_and_its_call_is_metered(school, clients, llm, record):
    """The model answers 500: 503 model_unavailable, retry_safe; the failed call is metered, no log."""
    llm.script("ask", {"status": 500})
    resp = ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    assert resp.status_code == 503, resp.content
    assert resp.json()["error"]["code"] == "model_unavailable" and resp.json()["error"]["retry_safe"]
    assert not AskLog.objects.exists()
    row = LLMUsage.objects.get(purpose="ask")
    assert row.ok is False and (row.asker, row.student) == (school["teacher_a"], None)


def test_the_log_of_questions(school, clients, llm, record):
    """GET /students/{id}/asks/: the teachers see every question about alice, alice her own,
    bob and teacher_b get 404."""
    ask(clients["teacher_a"], school["alice"].pk, QUESTION)
    ask(clients["alice"], school["alice"].pk, "What do you know about me?")
    url = f"/api/v1/students/{school['alice'].pk}/asks/"
    teacher = clients["teacher_a"].get(url).json()
    assert [a["question"] for a in teacher["results"]] == ["What do you know about me?", QUESTION]
    own = clients["alice"].get(url).json()
    assert [a["question"] for a in own["results"]] == ["What do you know about me?"]
    for intruder in ("bob", "teacher_b"):
        assert clients[intruder].get(url).status_code == 404


def test_the_student_card_is_evidence(school, clients, llm, record):
    """The card comes first in the evidence, cited as [card]."""
    from django.apps import apps

    card_model = apps.get_model("memory", "StudentCard")
    card = card_model.objects.create(
        student=school["alice"], goals=["Brevet in June"], accommodations=["Dyslexia: extra time"], level="4e"
    )
    llm.script("ask", {"content": "She has extra time for dyslexia [card]."})
    body = ask(clients["teacher_a"], school["alice"].pk, "What accommodations does she need?").json()
    prompt = prompt_of(llm)
    assert prompt.index('ref="card"') < prompt.index(f'ref="m{record.fact}"')
    assert "Accommodations: Dyslexia: extra time" in prompt
    (citation,) = body["citations"]
    assert citation["kind"] == "card" and citation["id"] == card.pk and citation["student"] == school["alice"].pk
