"""Fixtures for questions about a student or a class: alice with a bit of everything, bob with a
little, and the request helpers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from conversations import file_extraction
from learning.models import Quiz, SkillMastery, Task
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from memory.services.writing import memory_create
from tests.conversations.test_files import upload
from tests.conversations.test_turn import start
from tests.learning.conftest import THREE_OF_FIVE, answers_body, make_quiz


@dataclass
class Record:
    fact: int
    approach: int
    teacher_only: int
    shared_note: int
    quiz: int
    task: int
    file: int
    bob_memory: int


def ask(client: Any, student_id: int, question: str, **headers: Any) -> Any:
    return client.post(f"/api/v1/students/{student_id}/ask/", {"question": question}, format="json", **headers)


def ask_class(client: Any, classroom_id: int, question: str) -> Any:
    return client.post(f"/api/v1/classrooms/{classroom_id}/ask/", {"question": question}, format="json")


def prompt_of(llm: Any) -> str:
    """The system message of the last question the model was asked."""
    calls = llm.calls("ask")
    assert calls, "the model was not asked"
    return str(calls[-1]["messages"][0]["content"])


@pytest.fixture
def record(school: dict[str, Any], clients: dict[str, Any], llm: Any) -> Record:
    """alice: a fact, an approach, a teacher-only note, a note she sees, a graded quiz on adding
    fractions (3 of 5: mastery and a quiz-result memory), a task, an uploaded file. bob: a memory
    about perimeter and area, and a weak skill on it."""
    alice, bob, teacher = school["alice"], school["bob"], school["teacher_a"]
    fact = memory_create(
        student=alice,
        kind=AIMemory.Kind.FACT,
        source=AIMemory.Source.EXTRACTION,
        title="Confuses numerator and denominator in fractions",
        content="When adding fractions she adds the denominators too.",
        confidence=0.8,
    )
    approach = memory_create(
        student=alice,
        kind=AIMemory.Kind.APPROACH,
        source=AIMemory.Source.EXTRACTION,
        title="Pizza slices make fractions concrete for her",
        content="Drawing fractions as pizza slices helped her see common denominators.",
        confidence=0.7,
    )
    teacher_only = teacher_note_create(
        teacher=teacher,
        student_id=alice.pk,
        title="Parents report anxiety before fraction tests",
        content="Her parents say she panics before every fraction test; keep it private.",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    shared = teacher_note_create(
        teacher=teacher,
        student_id=alice.pk,
        title="Works well with fraction strips in class",
        content="She lines up fraction strips to compare fractions.",
    )
    quiz: Quiz = make_quiz(alice)
    resp = clients["alice"].post(
        f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, THREE_OF_FIVE), format="json"
    )
    assert resp.status_code == 201, resp.content
    task = Task.objects.create(teacher=teacher, student=alice, title="Fractions worksheet 3", subject="maths")
    cid = start(clients["alice"])
    resp = upload(clients["alice"], cid, "fractions.txt", b"My notes on fractions: find a common denominator first.\n")
    assert resp.status_code == 201, resp.content
    file_extraction.file_extract(file_id=resp.json()["id"])
    bob_memory = memory_create(
        student=bob,
        kind=AIMemory.Kind.FACT,
        source=AIMemory.Source.EXTRACTION,
        title="Mixes up perimeter and area of rectangles",
        content="He multiplies the sides when asked for the perimeter.",
        confidence=0.9,
    )
    SkillMastery.objects.create(
        student=bob,
        skill="perimeter and area",
        skill_key="perimeter and area",
        attempts=5,
        correct=1,
        estimate=0.2,
        estimated_at=timezone.now() - timedelta(days=1),
    )
    return Record(
        fact=fact.pk,
        approach=approach.pk,
        teacher_only=teacher_only.pk,
        shared_note=shared.pk,
        quiz=quiz.pk,
        task=task.pk,
        file=resp.json()["id"],
        bob_memory=bob_memory.pk,
    )
