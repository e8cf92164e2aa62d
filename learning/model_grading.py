"""Grading short-text answers with the background (summary) model, for learning.tasks.

Only answers the normalised match could not decide reach the model; each verdict is stored as
soon as it comes (learning.services.answer_grade_store), so a retry asks only about the answers
still pending.
"""

from __future__ import annotations

import logging

from learning.models import Answer
from learning.prompts import GRADING_SCHEMA, grading_messages, parse_grading
from learning.services import answer_grade_store
from llm import gateway, structured

logger = logging.getLogger(__name__)

# Metered under its own purpose. LLMUsage.Purpose (llm/) does not list it yet; the column takes
# any short text, and the admin shows the raw value until the choice is added there.
GRADING_PURPOSE = "grading"
# The verdict is one boolean and a sentence.
GRADING_MAX_TOKENS = 200


class InvalidVerdict(gateway.LLMBadResponse):
    """The model answered something that is not a verdict: asked again later (transient)."""


def attempt_grade_pending(*, attempt_id: int) -> int:
    """Grade the pending answers of an attempt, in question order; returns how many were stored.

    A refusal of the endpoint (a 4xx: the same request will be refused again) stores that
    answer as `ungraded`. Raises gateway.LLMError for the task to retry: the model unreachable,
    not configured, or an answer that is not a verdict (InvalidVerdict).
    """
    pending = list(
        Answer.objects.filter(attempt_id=attempt_id, result=Answer.Result.PENDING)
        .select_related("question", "attempt__quiz__student")
        .order_by("question__position")
    )
    profile = gateway.background_profile()
    stored = 0
    for answer in pending:
        quiz = answer.attempt.quiz
        messages = grading_messages(
            question=answer.question.prompt,
            expected=answer.question.expected_answer,
            given=answer.given,
            language=quiz.student.language,
        )
        try:
            reply = structured.complete_structured(
                messages=messages,
                schema=GRADING_SCHEMA,
                name="answer_grade",
                purpose=GRADING_PURPOSE,
                profile=profile,
                student_id=quiz.student_id,
                conversation_id=quiz.conversation_id,
                max_tokens=GRADING_MAX_TOKENS,
            )
        except gateway.LLMRefused as exc:
            logger.error("grading: answer %s refused by the model endpoint (%s); ungraded", answer.pk, exc)
            stored += answer_grade_store(answer_id=answer.pk, result=Answer.Result.UNGRADED)
            continue
        try:
            correct, feedback = parse_grading(reply.content)
        except ValueError as exc:
            raise InvalidVerdict(f"answer {answer.pk}: {exc}") from exc
        result = Answer.Result.CORRECT if correct else Answer.Result.INCORRECT
        stored += answer_grade_store(answer_id=answer.pk, result=result, feedback=feedback)
    return stored


def attempt_grading_abandon(*, attempt_id: int) -> int:
    """After the last retry: the answers still pending are stored as `ungraded` (counted neither
    way, left for the teacher), so the quiz is settled; returns how many."""
    pending = Answer.objects.filter(attempt_id=attempt_id, result=Answer.Result.PENDING).values_list("pk", flat=True)
    return sum(answer_grade_store(answer_id=pk, result=Answer.Result.UNGRADED) for pk in list(pending))
