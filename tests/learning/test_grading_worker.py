"""Grading short-text answers with the model, through a real Celery worker consuming from the
real broker and calling the scripted model server (nothing runs eagerly).

Where a test asserts that something did not happen (no second model call), it first waits for
the worker's log to show that the task in question finished.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from learning.models import Answer, Quiz, QuizAttempt, SkillMastery
from learning.tasks import quiz_attempt_grade
from llm.models import LLMUsage
from tests.conftest import Worker, wait_for
from tests.learning.conftest import answers_body, make_quiz

pytestmark = pytest.mark.worker

GRADE = "learning.tasks.quiz_attempt_grade"
# Right (MC), right (numeric), for the model, wrong (numeric), for the model.
TWO_FOR_THE_MODEL = ["3/4", "0.83", "the number under the line", "1/3", "the same bottom number"]


def verdict(correct: bool, feedback: str = "") -> dict[str, Any]:
    return {"content": json.dumps({"correct": correct, "feedback": feedback or ("Yes." if correct else "No.")})}


@pytest.fixture
def grading_worker(worker_env: dict[str, str], llm: Any) -> Iterator[Worker]:
    """A worker retrying grading quickly: backoff 0.3 s, at most two retries."""
    env = {**worker_env, "GRADING_RETRY_BACKOFF_SECONDS": "0.3", "GRADING_MAX_RETRIES": "2"}
    worker = Worker(llm, env["CELERY_QUEUE"], env).start()
    yield worker
    worker.stop()


def submit(clients: dict[str, Any], quiz: Quiz, given: list[str]) -> dict[str, Any]:
    resp = clients["alice"].post(f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, given), format="json")
    assert resp.status_code == 201, resp.content
    body: dict[str, Any] = resp.json()["quiz"]
    return body


def graded(quiz: Quiz) -> Quiz:
    return wait_for(lambda: Quiz.objects.filter(pk=quiz.pk, status=Quiz.Status.GRADED).first())


def test_the_model_grades_what_the_normalised_match_cannot(clients, school, llm, grading_worker):
    """The submission answers at once with two short texts pending; the worker asks the model
    about each, stores its verdicts (model_graded, with feedback), then scores the quiz and
    updates the skill, once. Each call is metered."""
    llm.script("grading", verdict(True, "Right: the denominator."), verdict(False, "Not quite."))
    quiz = make_quiz(school["alice"])
    body = submit(clients, quiz, TWO_FOR_THE_MODEL)
    assert (body["status"], body["correct"]) == ("grading", None)
    assert [a["result"] for a in body["answers"]] == ["correct", "correct", "pending", "incorrect", "pending"]

    graded(quiz)
    answers = list(Answer.objects.order_by("question__position"))
    assert [(a.result, a.model_graded) for a in answers] == [
        ("correct", False),
        ("correct", False),
        ("correct", True),
        ("incorrect", False),
        ("incorrect", True),
    ]
    assert (answers[2].feedback, answers[4].feedback) == ("Right: the denominator.", "Not quite.")
    assert QuizAttempt.objects.get(quiz=quiz).correct == 3
    assert SkillMastery.objects.get(student=school["alice"]).attempts == 5
    calls = llm.calls("grading")
    assert len(calls) == 2
    assert "the number under the line" in calls[0]["messages"][1]["content"]
    # (The quiz result's memory then has its facts extracted, metered apart as "extraction".)
    grading = LLMUsage.objects.filter(purpose="grading")
    assert list(grading.values_list("purpose", "ok")) == [("grading", True)] * 2

    shown = clients["alice"].get(f"/api/v1/quizzes/{quiz.pk}/").json()
    assert (shown["status"], shown["correct"]) == ("graded", 3)
    assert [a["model_graded"] for a in shown["answers"]] == [False, False, True, False, True]


def test_a_transient_failure_is_retried(clients, school, llm, grading_worker):
    """The model unreachable (503), then not answering a verdict: retried with backoff until it does."""
    outage = {"status": 503, "body": {"error": {"message": "overloaded", "type": "server_error"}}}
    llm.script("grading", outage, {"content": "I think so"}, verdict(True))
    quiz = make_quiz(school["alice"])
    submit(clients, quiz, ["3/4", "0.83", "bottom number", "0.5", "A common denominator"])
    graded(quiz)
    assert Answer.objects.get(result="correct", model_graded=True)
    assert QuizAttempt.objects.get(quiz=quiz).correct == 5
    assert len(llm.calls("grading")) == 3
    grading_worker.wait_for_log(f"Task {GRADE}", count=1)


def test_a_refusal_or_the_last_retry_leaves_the_answer_ungraded(clients, school, llm, grading_worker):
    """The endpoint refuses (a 4xx: the same request would be refused again): that answer is
    ungraded, counted neither way. The other fails past the last retry: ungraded too. The quiz is
    settled; mastery counts the graded answers only."""
    refused = {"status": 400, "body": {"error": {"message": "bad request", "type": "invalid_request_error"}}}
    outage = {"status": 503, "body": {"error": {"message": "overloaded", "type": "server_error"}}}
    llm.script("grading", refused, outage, outage, outage)
    quiz = make_quiz(school["alice"])
    submit(clients, quiz, TWO_FOR_THE_MODEL)
    graded(quiz)
    assert list(Answer.objects.filter(result="ungraded").values_list("model_graded", flat=True)) == [False, False]
    assert QuizAttempt.objects.get(quiz=quiz).correct == 2
    mastery = SkillMastery.objects.get(student=school["alice"])
    assert (mastery.attempts, mastery.correct, mastery.latest_total) == (3, 2, 3)
    grading_worker.wait_for_log("gave up after 3 tries")


def test_a_second_delivery_changes_nothing(clients, school, llm, grading_worker):
    """The task delivered again after grading (a redelivery, the sweep): no model call, the
    verdicts, the score and the mastery stay as they were."""
    quiz = make_quiz(school["alice"])
    submit(clients, quiz, TWO_FOR_THE_MODEL)
    graded(quiz)
    before = (list(Answer.objects.values_list("result", "graded_at")), SkillMastery.objects.get().attempts)
    quiz_attempt_grade.delay(QuizAttempt.objects.get(quiz=quiz).pk)
    grading_worker.wait_for_log(f"Task {GRADE}", count=4)  # received and succeeded, twice
    assert len(llm.calls("grading")) == 2
    assert (list(Answer.objects.values_list("result", "graded_at")), SkillMastery.objects.get().attempts) == before
