"""The LTI services on a class linked to an LMS course (POST/GET /classrooms/{id}/lti-sync/,
GET /classrooms/{id}/lti-scores/): its teachers, its school's administrator and staff sync it
and read its scores; a teacher of another class, another school's people and students get 404
and queue nothing; a class linked to no course is a 409."""

from __future__ import annotations

from typing import Any

import pytest
from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration, LtiResourceLink, LtiUser

from accounts.models import User
from conversations.services import conversation_create
from learning.services import quiz_create_from_tool
from lti.models import ContextClassroom, LaunchedConversation, Platform, RosterSync, ScoreSubmission
from tests.conftest import client_for, make_user
from tests.learning.conftest import QUIZ_ARGS
from tests.lti.test_grades import answer


def link_and_grade(schools: dict[str, Any], *, lms_active: bool = True) -> None:
    """5A linked to a course of an LMS of school A (as a launch leaves it), and alice's quiz
    graded in a conversation launched from it."""
    registration = LtiRegistration.objects.create(
        is_active=lms_active,
        name="LMS",
        issuer="https://lms.test",
        client_id="tool",
        auth_url="https://lms.test/auth",
        token_url="https://lms.test/token",
        keyset_url="https://lms.test/jwks",
    )
    deployment = LtiDeployment.objects.create(registration=registration, deployment_id="1", is_active=True)
    Platform.objects.create(registration=registration, school=schools["school"])
    context = LtiContext.objects.create(
        deployment=deployment,
        id_on_platform="course-1",
        title="Maths 5A",
        memberships_url="https://lms.test/memberships",
        lineitems_url="https://lms.test/lineitems",
        can_manage_lineitems=True,
        can_publish_scores=True,
    )
    ContextClassroom.objects.create(context=context, classroom=schools["class_a"])
    link = LtiResourceLink.objects.create(context=context, id_on_platform="link-1")
    alice = schools["alice"]
    LtiUser.objects.create(registration=registration, sub="lms-alice", auth_user=alice)
    conversation = conversation_create(user=alice, subject="Fractions")
    LaunchedConversation.objects.create(conversation=conversation, resource_link=link)
    answer(alice, quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=QUIZ_ARGS))


@pytest.fixture
def linked(schools: dict[str, Any]) -> dict[str, Any]:
    """The `schools` fixture, `link_and_grade`d: alice's score pending."""
    link_and_grade(schools)
    return schools


def test_an_lms_turned_off_gets_no_score(schools):
    """A quiz graded while its LMS's registration is turned off records nothing to send."""
    link_and_grade(schools, lms_active=False)
    assert not ScoreSubmission.objects.exists()


@pytest.mark.parametrize("intruder", ["teacher_b", "admin_b", "teacher_c", "alice", "bob"])
def test_another_class_or_school_or_a_student_gets_404(linked, intruder):
    """Nothing is queued, no score is shown."""
    client = client_for(linked[intruder])
    base = f"/api/v1/classrooms/{linked['class_a'].pk}"
    for method, path in (("post", "lti-sync/"), ("get", "lti-sync/"), ("get", "lti-scores/")):
        resp = getattr(client, method)(f"{base}/{path}")
        assert resp.status_code == 404, (intruder, method, path, resp.content)
        assert resp.json()["error"]["code"] == "not_found"
    assert not RosterSync.objects.exists()


@pytest.mark.parametrize("educator", ["teacher_a", "admin_a", "staff"])
def test_the_class_educators_and_staff_sync_and_read_scores(linked, educator):
    """202 with the queued sync; the class's syncs and alice's score (4 of 5, pending) listed."""
    user = make_user("ops", User.Role.STAFF, is_staff=True) if educator == "staff" else linked[educator]
    client = client_for(user)
    base = f"/api/v1/classrooms/{linked['class_a'].pk}"
    resp = client.post(f"{base}/lti-sync/")
    assert resp.status_code == 202, resp.content
    [sync] = resp.json()["syncs"]
    assert sync["status"] == "queued" and RosterSync.objects.get().requested_by == user
    assert [s["id"] for s in client.get(f"{base}/lti-sync/").json()["syncs"]] == [sync["id"]]
    [score] = client.get(f"{base}/lti-scores/").json()["results"]
    submission = ScoreSubmission.objects.get()
    assert (score["id"], score["student"], score["score_given"], score["score_maximum"], score["status"]) == (
        submission.pk,
        linked["alice"].pk,
        4,
        5,
        "pending",
    )
    assert score["course_title"] == "Maths 5A" and score["line_item"] is None


def test_a_teacher_sees_no_score_of_a_student_who_left_the_class(linked):
    """alice's enrolment in 5A ended: her score is no longer in its teacher's list."""
    linked["alice"].enrollments.update(active=False)
    resp = client_for(linked["teacher_a"]).get(f"/api/v1/classrooms/{linked['class_a'].pk}/lti-scores/")
    assert resp.status_code == 200 and resp.json()["results"] == []


def test_a_class_linked_to_no_course_is_a_conflict(schools):
    """5B has no LMS course: 409 with the error envelope, nothing queued."""
    resp = client_for(schools["teacher_b"]).post(f"/api/v1/classrooms/{schools['class_b'].pk}/lti-sync/")
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "conflict"
    assert not RosterSync.objects.exists()
