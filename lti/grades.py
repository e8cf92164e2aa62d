"""Grades: a graded quiz's score sent to the LMS course the student launched the tutor from, with
LTI Assignment and Grade Services (AGS 2.0) (docs/lti.md, "Grades (AGS)").

`event_receive` is core.events' durable sink for `quiz.graded`: in the grading's transaction, if
the quiz's conversation was launched from a resource link (lti.LaunchedConversation) whose course
lets the tool post scores, it stores one `ScoreSubmission` for (attempt, resource link), with the
score and its timestamp fixed once, and sends it by its own task after commit.

`score_send` sends one: it claims the row with one conditional update (pending, or sending for
longer than CLAIM_SECONDS: a worker that died mid-send), finds or makes the quiz's line item in
the course (`resourceId` the quiz's id, `resourceLinkId` the launch's link; found on the platform
first, so a line item made by a try that died is not made twice), posts the score with pylti1p3's
AGS client, and marks the row sent. A transient failure (network, a 5xx or 429) releases the
claim and raises `ScoreFailed` for the task to retry; any other refusal settles the row failed.

Never twice in normal operation: only the claimant sends, and a sent row is never claimed again.
A try that died after the platform kept the score but before the row was marked sent is sent
again by the sweep, the same score with the same timestamp, which the platform keeps as the same
result. Only the score and ids go to the platform: no message, answer or name.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from lti_tool.models import LtiContext, LtiLineItem, LtiUser
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem

from accounts.models import Classroom
from accounts.selectors import is_staff_account, students_visible_to
from core import background, events, signed_post
from core.events import Event
from learning.models import Quiz
from lti.connector import TIMEOUT_SECONDS, service_connector
from lti.models import LaunchedConversation, ScoreSubmission

logger = logging.getLogger(__name__)

SEND_TASK = "lti.tasks.score_send"
# A claim older than this belongs to a worker that died mid-send: the sweep may claim it again.
CLAIM_SECONDS = 300

AGS_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
AGS_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
AGS_LINEITEM_READ = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"


class ScoreFailed(Exception):
    """A transient failure (network, a 5xx or 429 answer): the task retries. `attempts` counts
    the submission's tries so far, all tasks together."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


# --- Recording a score --------------------------------------------------------------------------


def event_receive(event: Event) -> None:
    """core.events' durable sink: in the grading's transaction, a `quiz.graded` of a quiz
    launched from an LMS becomes a pending submission, sent once it commits (a process that dies
    in between leaves it to the sweep). One query for any other quiz."""
    if event.type != events.QUIZ_GRADED:
        return
    quiz_id, attempt_id = event.data["quiz_id"], event.data["attempt_id"]
    launched = (
        LaunchedConversation.objects.filter(conversation__quizzes=quiz_id)
        .select_related("resource_link__context__deployment__registration")
        .first()
    )
    if launched is None:
        return
    link = launched.resource_link
    context = link.context
    if not (context.lineitems_url and context.can_publish_scores and context.deployment.registration.is_active):
        logger.info("quiz %s: the course %s takes no scores from the tool", quiz_id, context.pk)
        return
    sub = (
        LtiUser.objects.filter(registration_id=context.deployment.registration_id, auth_user_id=event.student_id)
        .values_list("sub", flat=True)
        .first()
    )
    if sub is None:
        logger.warning("quiz %s: its student has no LTI user on the platform; no score sent", quiz_id)
        return
    submission, created = ScoreSubmission.objects.get_or_create(
        attempt_id=attempt_id,
        resource_link=link,
        defaults={
            "user_sub": sub,
            "score_given": event.data["correct"],
            "score_maximum": event.data["total"],
            "timestamp": event.timestamp,
        },
    )
    if created:
        background.enqueue(SEND_TASK, submission.pk)


# --- Sending one ------------------------------------------------------------------------------


def score_send(*, submission_id: int) -> str:
    """Send one submission: "sent", "done" (not claimable: sent already, or being sent by
    another try) or "failed" (refused for good). Raises ScoreFailed on a transient failure,
    with the claim released."""
    now = timezone.now()
    claimable = Q(status=ScoreSubmission.Status.PENDING) | Q(
        status=ScoreSubmission.Status.SENDING, claimed_at__lt=now - timedelta(seconds=CLAIM_SECONDS)
    )
    claimed = ScoreSubmission.objects.filter(claimable, pk=submission_id).update(
        status=ScoreSubmission.Status.SENDING, claimed_at=now, attempts=F("attempts") + 1
    )
    if not claimed:
        return "done"
    submission = ScoreSubmission.objects.select_related(
        "attempt__quiz", "resource_link__context__deployment__registration", "line_item"
    ).get(pk=submission_id)
    context = submission.resource_link.context
    if not context.deployment.registration.is_active:
        return _fail(submission, "the platform is turned off", None)
    try:
        service = _service(context)
        line_item = submission.line_item or _line_item(service, submission)
        service.put_grade(_grade(submission), LineItem({"id": line_item.url}))
    except LtiServiceException as exc:
        code = _status_of(exc)
        if code is None or code >= 500 or code == 429:
            raise _release(submission, f"the platform answered {code}: {exc}", code) from exc
        return _fail(submission, f"the platform refused the score ({code}): {exc}", code)
    except requests.RequestException as exc:
        raise _release(submission, f"the platform could not be reached: {exc}", None) from exc
    except LtiException as exc:
        return _fail(submission, f"the course takes no score from the tool: {exc}", None)
    ScoreSubmission.objects.filter(pk=submission_id, status=ScoreSubmission.Status.SENDING).update(
        status=ScoreSubmission.Status.SENT, sent_at=timezone.now(), last_error="", response_code=None
    )
    logger.info("quiz attempt %s: score sent to line item %s", submission.attempt_id, line_item.pk)
    return "sent"


def score_fail(*, submission_id: int, error: str) -> None:
    """Settle a submission failed after its last try (it is not sent again)."""
    ScoreSubmission.objects.filter(pk=submission_id).exclude(status=ScoreSubmission.Status.SENT).update(
        status=ScoreSubmission.Status.FAILED, last_error=error[:2000]
    )
    logger.warning("LTI score submission %s failed: %s", submission_id, error)


def _service(context: LtiContext) -> AssignmentsGradesService:
    scopes = [AGS_SCORE]
    if context.can_manage_lineitems:
        scopes.append(AGS_LINEITEM)
    elif context.can_query_lineitems:
        scopes.append(AGS_LINEITEM_READ)
    connector = service_connector(context.deployment.registration)
    return AssignmentsGradesService(connector, {"scope": scopes, "lineitems": context.lineitems_url})  # type: ignore[typeddict-item]


def _line_item(service: AssignmentsGradesService, submission: ScoreSubmission) -> LtiLineItem:
    """The quiz's line item in the course: ours if a try stored it, else the platform's (by
    `resourceId`), else made there; stored and linked to the submission."""
    quiz: Quiz = submission.attempt.quiz
    link = submission.resource_link
    stored = LtiLineItem.objects.filter(context=link.context, resource_id=str(quiz.pk)).first()
    if stored is None:
        wanted = (
            LineItem()
            .set_label(_label(quiz))
            .set_score_maximum(submission.score_maximum)
            .set_resource_id(str(quiz.pk))
            .set_resource_link_id(link.id_on_platform)
        )
        found = service.find_or_create_lineitem(wanted, find_by="resource_id")
        stored, _ = LtiLineItem.objects.get_or_create(
            url=found.get_id(),
            defaults={
                "context": link.context,
                "maximum_score": found.get_score_maximum() or submission.score_maximum,
                "label": (found.get_label() or _label(quiz))[:255],
                "resource_id": str(quiz.pk),
                "resource_link": link,
            },
        )
    ScoreSubmission.objects.filter(pk=submission.pk).update(line_item=stored)
    return stored


def _label(quiz: Quiz) -> str:
    """The gradebook column's name: the quiz's skill and topic, as the tutor labelled them."""
    label = f"Quiz: {quiz.skill}" if quiz.topic in ("", quiz.skill) else f"Quiz: {quiz.skill} ({quiz.topic})"
    return label[:255]


def _grade(submission: ScoreSubmission) -> Grade:
    return (
        Grade()
        .set_score_given(submission.score_given)
        .set_score_maximum(submission.score_maximum)
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_timestamp(_iso(submission.timestamp))
        .set_user_id(submission.user_sub)
    )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _status_of(exc: LtiServiceException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def _release(submission: ScoreSubmission, error: str, code: int | None) -> ScoreFailed:
    ScoreSubmission.objects.filter(pk=submission.pk, status=ScoreSubmission.Status.SENDING).update(
        status=ScoreSubmission.Status.PENDING, last_error=error[:2000], response_code=code
    )
    return ScoreFailed(error, attempts=submission.attempts)


def _fail(submission: ScoreSubmission, error: str, code: int | None) -> str:
    ScoreSubmission.objects.filter(pk=submission.pk).update(
        status=ScoreSubmission.Status.FAILED, last_error=error[:2000], response_code=code
    )
    logger.warning("LTI score submission %s failed: %s", submission.pk, error)
    return "failed"


# --- Reading ---------------------------------------------------------------------------------


def classroom_scores(*, user: Any, classroom: Classroom) -> QuerySet[ScoreSubmission]:
    """The scores sent (or to send) to `classroom`'s LMS courses, the newest first: of the
    students `user` sees (accounts.selectors.students_visible_to), every one for staff."""
    scores = ScoreSubmission.objects.filter(resource_link__context__classroom_link__classroom=classroom)
    if not is_staff_account(user):
        scores = scores.filter(attempt__quiz__student__in=students_visible_to(user).values("pk"))
    return scores.select_related("attempt__quiz", "line_item", "resource_link__context").order_by("-created_at", "-pk")


# --- The sweep --------------------------------------------------------------------------------


def submissions_due(*, now: datetime | None = None) -> list[int]:
    """The submissions whose task was lost: pending and never tried, or pending after every
    retry could have run (core.signed_post.lost_deliveries), or claimed by a worker that died
    mid-send (CLAIM_SECONDS ago). Oldest first."""
    now = now or timezone.now()
    budget = signed_post.retry_budget(
        retries=settings.LTI_SCORE_MAX_RETRIES,
        backoff_seconds=settings.LTI_SCORE_BACKOFF_SECONDS,
        try_seconds=TIMEOUT_SECONDS * 4,  # a token, the line items, a new one, the score
    )
    pending = ScoreSubmission.objects.filter(status=ScoreSubmission.Status.PENDING)
    abandoned = ScoreSubmission.objects.filter(
        status=ScoreSubmission.Status.SENDING, claimed_at__lt=now - timedelta(seconds=CLAIM_SECONDS)
    )
    lost = signed_post.lost_deliveries(pending, budget=budget, now=now)
    return lost + list(abandoned.order_by("claimed_at").values_list("pk", flat=True)[:500])
