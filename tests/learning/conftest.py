"""Fixtures for learning: alice's conversation and a five-question quiz the tutor made in it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.utils import timezone

from conversations.models import Conversation
from learning.models import Quiz
from learning.services import quiz_create_from_tool

SKILL = "adding fractions with unlike denominators"

# One question of each kind, two short texts: the tutor's create_quiz arguments.
QUIZ_ARGS: dict[str, Any] = {
    "topic": "Adding fractions",
    "skill": SKILL,
    "questions": [
        {
            "kind": "multiple_choice",
            "prompt": "1/2 + 1/4 = ?",
            "choices": ["3/4", "2/6", "1/6"],
            "answer": "3/4",
            "explanation": "1/2 is 2/4, and 2/4 + 1/4 = 3/4.",
        },
        {
            "kind": "numeric",
            "prompt": "1/2 + 1/3 as a decimal, to two places.",
            "answer": "0.83",
            "tolerance": 0.01,
            "explanation": "1/2 + 1/3 = 5/6, about 0.83.",
        },
        {
            "kind": "short_text",
            "prompt": "What is the bottom number of a fraction called?",
            "answer": "denominator",
            "explanation": "The denominator says into how many parts the whole is cut.",
        },
        {
            "kind": "numeric",
            "prompt": "1/3 + 1/6 = ? (a fraction or a decimal)",
            "answer": "1/2",
            "explanation": "1/3 is 2/6, and 2/6 + 1/6 = 3/6 = 1/2.",
        },
        {
            "kind": "short_text",
            "prompt": "What must two fractions share before you add them?",
            "answer": "a common denominator",
            "explanation": "Only parts of the same size can be counted together.",
        },
    ],
}


def quiz_args(**changes: Any) -> dict[str, Any]:
    args = copy.deepcopy(QUIZ_ARGS)
    args.update(changes)
    return args


def new_conversation(student: Any) -> Conversation:
    return Conversation.objects.create(student=student, subject="Maths", last_activity_at=timezone.now())


def make_quiz(student: Any, conversation: Conversation | None = None, **changes: Any) -> Quiz:
    conversation = conversation or new_conversation(student)
    return quiz_create_from_tool(student_id=student.pk, conversation_id=conversation.pk, arguments=quiz_args(**changes))


def answers_body(quiz: Quiz, given: list[str], attempt: str = "attempt-1") -> dict[str, Any]:
    """The POST body answering each question of `quiz`, in order, with `given`."""
    ids = list(quiz.questions.order_by("position").values_list("pk", flat=True))
    answers = [{"question": q, "answer": a} for q, a in zip(ids, given, strict=True)]
    return {"client_attempt_id": attempt, "answers": answers}


# Right, right (a decimal comma), right (accent, case, punctuation folded), wrong, skipped: 3/5,
# all decided without the model.
THREE_OF_FIVE = ["3/4", "0,83", " Dénominator. ", "1/3", ""]
ALL_RIGHT = ["3/4", "0.835", "DENOMINATOR!", "0.5", "A common denominator."]


@pytest.fixture
def quiz(school: dict[str, Any]) -> Quiz:
    """Alice's quiz, made by the tutor in one of her conversations."""
    return make_quiz(school["alice"])
