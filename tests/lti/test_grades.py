"""Grades (AGS) against the real test LMS (lti1p3platform's line item and score services in its
own process): a quiz graded in the conversation a learner's launch opened goes to the course's
gradebook, once; a score the LMS first answers with a 500 is retried by a real worker and still
arrives once; a refused one is settled failed; a lost one is swept; a quiz not launched from an
LMS sends nothing; only the score and ids go to the LMS (docs/lti.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from lti_tool.models import LtiLineItem

from accounts.models import User
from conversations.services import conversation_create
from learning.models import Quiz
from learning.services import quiz_answers_submit, quiz_create_from_tool
from lti import grades
from lti.models import ScoreSubmission
from tests.conftest import Worker, wait_for
from tests.learning.conftest import QUIZ_ARGS
from tests.llm_server import ScriptedLLM
from tests.lti.conftest import LaunchFlow, LtiPlatform
from tests.lti.lms_services import COURSE, LEARNER, launched, lineitems, redeem, scores, scores_fail

# The first answer wrong, the four others right: 4 of 5.
ANSWERS = ["2/6", "0.83", "denominator", "1/2", "a common denominator"]


@pytest.fixture
def course(lti_platform: LtiPlatform, school: dict[str, Any]) -> LtiPlatform:
    """The LMS registered for the test school, alice a learner of its course, and a link."""
    User.objects.filter(pk=school["alice"].pk).update(external_id="sis-alice")
    lti_platform.register(school["school"])
    lti_platform.course(COURSE, title="Maths 5A")
    lti_platform.member(
        COURSE, "lms-alice", roles=[LEARNER], given_name="Alice", family_name="A", sourcedid="sis-alice"
    )
    lti_platform.link(COURSE, "link-1", title="Fractions tutor", custom={"topic": "Fractions"})
    return lti_platform


def launched_quiz(server: str, flow: LaunchFlow, student: Any) -> Quiz:
    """A quiz the tutor made in the conversation `student`'s launch of the link opened."""
    conversation_id = redeem(server, launched(flow, "lms-alice"), "/app/")["conversation"]
    return quiz_create_from_tool(student_id=student.pk, conversation_id=conversation_id, arguments=QUIZ_ARGS)


def answer(student: Any, quiz: Quiz) -> None:
    questions = list(quiz.questions.order_by("position"))
    answers = [{"question": q.pk, "answer": a} for q, a in zip(questions, ANSWERS, strict=True)]
    quiz_answers_submit(user=student, quiz_id=quiz.pk, client_attempt_id="a1", answers=answers)


def test_a_graded_quiz_is_one_score_in_the_course_gradebook(server, course, launch_flow, school):
    """Grading records one pending submission; sending it makes the quiz's line item in the
    course (resourceId the quiz, resourceLinkId the launched link, scoreMaximum its questions)
    and posts the score for the student's LTI user, Completed and FullyGraded, with the
    grading's time; sending it again sends nothing. Only ids and the score reach the LMS."""
    alice = school["alice"]
    quiz = launched_quiz(server, launch_flow, alice)
    answer(alice, quiz)
    submission = ScoreSubmission.objects.get()
    assert (submission.status, submission.score_given, submission.score_maximum) == ("pending", 4, 5)
    assert (submission.user_sub, submission.resource_link.id_on_platform) == ("lms-alice", "link-1")

    assert grades.score_send(submission_id=submission.pk) == "sent"
    assert grades.score_send(submission_id=submission.pk) == "done"

    [item] = lineitems(course)
    assert (item["resourceId"], item["resourceLinkId"], item["scoreMaximum"]) == (str(quiz.pk), "link-1", 5)
    assert item["label"] == f"Quiz: {quiz.skill} ({quiz.topic})"
    received = scores(course)
    assert received["failed"] == []
    [score] = received["scores"]
    assert score["lineitem"] == item["id"]
    assert (score["userId"], score["scoreGiven"], score["scoreMaximum"]) == ("lms-alice", 4, 5)
    assert (score["activityProgress"], score["gradingProgress"]) == ("Completed", "FullyGraded")
    assert set(score) == {
        "userId",
        "scoreGiven",
        "scoreMaximum",
        "activityProgress",
        "gradingProgress",
        "timestamp",
        "lineitem",
    }
    submission.refresh_from_db()
    assert (submission.status, submission.attempts) == ("sent", 1)
    assert submission.line_item is not None and submission.line_item.url == item["id"]
    assert submission.timestamp.isoformat(timespec="milliseconds").replace("+00:00", "Z") == score["timestamp"]


def test_a_refused_score_is_settled_failed_and_a_lost_one_swept(server, course, launch_flow, school):
    """The sweep finds a submission whose task was lost, and one a dead worker claimed, not one
    being sent. A score the LMS refuses (its line item deleted there since: 404) is settled
    failed with the reason, and not sent again."""
    alice = school["alice"]
    answer(alice, launched_quiz(server, launch_flow, alice))
    submission = ScoreSubmission.objects.select_related("attempt").get()
    LtiLineItem.objects.create(
        context=submission.resource_link.context,
        url=f"{course.url}/contexts/{COURSE}/lineitems/99",
        maximum_score=5,
        label="Quiz",
        resource_id=str(submission.attempt.quiz_id),
    )
    old = timezone.now() - timedelta(hours=1)
    ScoreSubmission.objects.filter(pk=submission.pk).update(created_at=old)
    assert grades.submissions_due() == [submission.pk]
    ScoreSubmission.objects.filter(pk=submission.pk).update(status="sending", claimed_at=timezone.now())
    assert grades.submissions_due() == []
    assert grades.score_send(submission_id=submission.pk) == "done"  # another try holds it
    ScoreSubmission.objects.filter(pk=submission.pk).update(claimed_at=old)
    assert grades.submissions_due() == [submission.pk]

    assert grades.score_send(submission_id=submission.pk) == "failed"
    submission.refresh_from_db()
    assert submission.status == "failed" and submission.response_code == 404
    assert "refused the score (404)" in submission.last_error
    assert grades.submissions_due() == []
    assert scores(course) == {"scores": [], "failed": []}


def test_a_quiz_not_launched_from_an_lms_sends_nothing(school):
    """A quiz of a conversation the student opened in the app stays in the app."""
    alice = school["alice"]
    conversation = conversation_create(user=alice, subject="Fractions")
    answer(alice, quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=QUIZ_ARGS))
    assert not ScoreSubmission.objects.exists()


@pytest.fixture
def fast_worker(worker_env: dict[str, str], llm: ScriptedLLM) -> Iterator[Worker]:
    """A real worker whose score retries wait 0.3 s (then 0.6, 1.2...)."""
    worker_env["LTI_SCORE_BACKOFF_SECONDS"] = "0.3"
    worker = Worker(llm, worker_env["CELERY_QUEUE"], worker_env).start()
    yield worker
    worker.stop()


@pytest.mark.worker
def test_a_score_the_lms_first_answers_with_500_arrives_once(fast_worker, server, course, launch_flow, school):
    """A real worker sends the score; the LMS answers the first post 500; the task retries after
    its backoff and the LMS keeps exactly one score, with the first try's timestamp."""
    alice = school["alice"]
    quiz = launched_quiz(server, launch_flow, alice)
    scores_fail(course, 1)
    answer(alice, quiz)
    wait_for(lambda: ScoreSubmission.objects.filter(status="sent").exists(), timeout=60)
    fast_worker.wait_for_log("lti.tasks.score_send", count=2)
    received = scores(course)
    assert len(received["failed"]) == 1
    assert [(s["userId"], s["scoreGiven"]) for s in received["scores"]] == [("lms-alice", 4)]
    assert received["failed"][0]["timestamp"] == received["scores"][0]["timestamp"]
    submission = ScoreSubmission.objects.get()
    assert (submission.attempts, submission.status, submission.last_error) == (2, "sent", "")
