"""The design article's story, end to end through the API and a real Celery worker.

Monday: the student says he struggles with fractions; the tutor explains, saves a note and gives
a quiz; he gets 3 of 5 right; his teacher assigns homework; the conversation ends and the worker
writes its summary. Wednesday: the first prompt of a new conversation holds the summary, the 3/5
result, the weak skill and the open task, so the tutor can say "last time you struggled with
multiplying fractions", because the data says so.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from learning.models import Quiz
from memory.models import AIMemory
from tests.conftest import Worker, wait_for
from tests.conversations.test_save_memory_tool import tool_step
from tests.conversations.test_summary_worker import end, wait_summary
from tests.conversations.test_turn import send, start
from tests.learning.conftest import answers_body, quiz_args

pytestmark = pytest.mark.worker

SKILL = "multiplying fractions"
# Right, right, wrong, right, and a short text the worker has the model grade (wrong): 3 of 5.
QUESTIONS = [
    {"kind": "numeric", "prompt": "1/2 x 1/3 = ?", "answer": "1/6", "explanation": "Multiply across."},
    {"kind": "numeric", "prompt": "2/3 x 3/4 = ?", "answer": "1/2", "explanation": "6/12 = 1/2."},
    {"kind": "numeric", "prompt": "3/5 x 5/6 = ?", "answer": "1/2", "explanation": "15/30 = 1/2."},
    {
        "kind": "multiple_choice",
        "prompt": "To multiply fractions you multiply...",
        "choices": ["numerators and denominators", "only numerators", "crosswise"],
        "answer": "numerators and denominators",
        "explanation": "Top times top, bottom times bottom.",
    },
    {"kind": "short_text", "prompt": "What is 1/4 of 1/2 as a fraction?", "answer": "1/8", "explanation": "1/8."},
]
GIVEN = ["1/6", "0.5", "2/3", "numerators and denominators", "1/6"]
SUMMARY = {
    "title": "Struggled with multiplying fractions, quiz three of five",
    "content": "The student found multiplying fractions hard. After a worked example he scored 3 of 5 on a quiz.",
}


def test_monday_quiz_then_wednesday_the_tutor_knows(worker: Worker, clients, llm, school):
    alice, alice_client = school["alice"], clients["alice"]
    # Monday.
    llm.script(
        "chat",
        tool_step(
            ("save_memory", json.dumps({"title": "Struggles with multiplying fractions", "content": "Said so."})),
            ("create_quiz", json.dumps(quiz_args(topic="Multiplying fractions", skill=SKILL, questions=QUESTIONS))),
        ),
        {"content": "Multiply the tops and the bottoms. Try this quiz."},
    )
    llm.script("summary", {"content": json.dumps(SUMMARY)})
    llm.script("grading", {"content": json.dumps({"correct": False, "feedback": "1/4 of 1/2 is 1/8."})})
    monday = start(alice_client)
    turn = send(alice_client, monday, "I struggle with multiplying fractions.", "mon-1")
    assert turn.status_code == 201, turn.content
    quiz = Quiz.objects.get(pk=turn.json()["quizzes"][0]["id"])
    graded = alice_client.post(f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, GIVEN), format="json")
    assert graded.status_code == 201, graded.content
    assert graded.json()["quiz"]["status"] == "grading"
    wait_for(lambda: Quiz.objects.filter(pk=quiz.pk, status="graded").exists())
    shown = alice_client.get(f"/api/v1/quizzes/{quiz.pk}/").json()
    assert shown["correct"] == 3 and shown["answers"][4]["model_graded"] is True
    due = timezone.now() + timedelta(days=4)
    task = clients["teacher_a"].post(
        "/api/v1/tasks/",
        {
            "classroom": school["class_a"].pk,
            "title": "Multiplying fractions: exercises 1 to 10",
            "instructions": "Page 42.",
            "subject": "Maths",
            "due_at": due.isoformat(),
        },
        format="json",
    )
    assert task.status_code == 201, task.content
    end(alice_client, monday)
    wait_summary(monday)

    # Wednesday: a new conversation; its first prompt.
    llm.script("chat", {"content": "Last time you struggled with multiplying fractions: shall we go on?"})
    wednesday = start(alice_client)
    reply = send(alice_client, wednesday, "Hi! What should we do today?", "wed-1")
    assert reply.status_code == 201, reply.content
    prompt = llm.calls("chat")[-1]["messages"]
    memories = next(str(m["content"]) for m in prompt if str(m["content"]).startswith("<student_memories>"))
    record = next(str(m["content"]) for m in prompt if str(m["content"]).startswith("<learning_record>"))
    assert SUMMARY["title"] in memories and "Struggles with multiplying fractions" in memories
    assert f"task {task.json()['id']} [Maths]: Multiplying fractions: exercises 1 to 10" in record
    assert "; todo)" in record
    weakest = record.split("Weakest skills:\n", 1)[1]
    assert weakest.startswith(f"- {SKILL}: last quiz 3/5 on {timezone.now().date().isoformat()}")
    # The result is also a memory recall finds, with its provenance.
    result = AIMemory.objects.get(student=alice, kind="quiz_result")
    assert result.source_conversation_id == monday and "3 of 5 answers right" in result.content
    found = alice_client.get("/api/v1/memories/", {"q": "multiplying fractions quiz"})
    assert found.status_code == 200, found.content
    assert result.pk in [m["id"] for m in found.json()["results"]]
