"""LTI 1.3 launches from a real platform (tests/lti_platform, on lti1p3platform, its own
process), driven without a browser: who a launch signs in, the class its course maps to, the
conversation a student's launch opens, and the refusals (docs/lti.md)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from lti_tool.models import LtiContext, LtiUser

from accounts.models import Classroom, Enrollment, TeacherEnrollment, User
from conversations.models import Conversation
from lti.models import ContextClassroom, LaunchedConversation
from tests.lti.conftest import INSTRUCTOR, LEARNER, MENTOR, LaunchFlow, LtiPlatform

COURSE = "course-1"


@pytest.fixture
def course(lti_platform: LtiPlatform, school: dict[str, Any]) -> LtiPlatform:
    """The LMS registered for the test school, with a course: Ada (a learner the tool does not
    know), Alice (the roster's alice, by sourcedId), Mr Turing (an instructor), and a link with
    a topic."""
    lti_platform.register(school["school"])
    lti_platform.course(COURSE, title="Maths 5A", label="M5A")
    lti_platform.member(COURSE, "u-ada", roles=[LEARNER], given_name="Ada", family_name="Lovelace", email="ada@x.org")
    lti_platform.member(COURSE, "u-alice", roles=[LEARNER], given_name="Alice", family_name="A", sourcedid="sis-alice")
    lti_platform.member(COURSE, "u-turing", roles=[INSTRUCTOR], given_name="Alan", family_name="Turing")
    lti_platform.member(COURSE, "u-mentor", roles=[MENTOR], given_name="Menna", family_name="Tor")
    lti_platform.link(COURSE, "link-1", title="Fractions tutor", custom={"topic": "Fractions"})
    return lti_platform


def launched(flow: LaunchFlow, user_id: str, **query: Any) -> httpx2.Response:
    return flow.post(flow.form(flow.platform.course_url(COURSE, user_id, link="link-1", **query)))


def redeem(server: str, response: httpx2.Response, page: str) -> dict[str, Any]:
    """The launch's redirect to `page` with its code, exchanged for the token."""
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(f"{page}#lti="), location
    answer = httpx2.post(f"{server}/api/v1/lti/token/", json={"code": location.split("#lti=")[1]})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_learners_launch_opens_a_conversation_on_the_links_topic(server, course, launch_flow, school):
    """An unknown learner is created in the platform's school as a student, enrolled in a new
    class named after the course, and gets the link's conversation on its topic, recorded as
    launched from the link; the one-time code gives the student's token once; a second launch of
    the link reuses the open conversation."""
    answer = redeem(server, launched(launch_flow, "u-ada"), "/app/")
    ada = User.objects.get(pk=answer["user"]["id"])
    assert (ada.role, ada.school, ada.first_name, ada.email) == ("student", school["school"], "Ada", "ada@x.org")
    assert not ada.has_usable_password()
    classroom = Classroom.objects.get(pk=answer["classroom"])
    assert (classroom.name, classroom.school) == ("Maths 5A", school["school"])
    assert Enrollment.objects.get(student=ada, classroom=classroom).active
    conversation = Conversation.objects.get(pk=answer["conversation"])
    assert (conversation.student, conversation.subject, conversation.status) == (ada, "Fractions", "active")
    launch = LaunchedConversation.objects.get(conversation=conversation)
    assert (launch.resource_link.id_on_platform, launch.resource_link.context.id_on_platform) == ("link-1", COURSE)
    assert LtiUser.objects.get(sub="u-ada").auth_user == ada
    me = httpx2.get(f"{server}/api/v1/me/", headers={"Authorization": f"Token {answer['token']}"})
    assert me.json()["id"] == ada.pk

    again = launched(launch_flow, "u-ada")
    assert redeem(server, again, "/app/")["conversation"] == conversation.pk
    used = httpx2.post(f"{server}/api/v1/lti/token/", json={"code": again.headers["location"].split("#lti=")[1]})
    assert used.status_code == 400
    assert used.json()["error"]["details"]["code"]
    assert User.objects.filter(first_name="Ada").count() == 1


def test_the_rosters_person_and_class_are_found(server, course, launch_flow, school):
    """A learner whose sourcedId is a person's external_id is that person; a course whose section
    sourcedId is a class's external_id is that class, and later launches keep to it."""
    alice, class_a = school["alice"], school["class_a"]
    User.objects.filter(pk=alice.pk).update(external_id="sis-alice")
    Classroom.objects.filter(pk=class_a.pk).update(external_id="sec-5a")
    course.course(COURSE, title="Maths 5A", label="M5A", section_sourcedid="sec-5a")
    answer = redeem(server, launched(launch_flow, "u-alice"), "/app/")
    assert (answer["user"]["id"], answer["classroom"]) == (alice.pk, class_a.pk)
    assert ContextClassroom.objects.get(context__id_on_platform=COURSE).classroom == class_a
    course.course(COURSE, title="Maths 5A", label="M5A", section_sourcedid="")
    assert redeem(server, launched(launch_flow, "u-alice"), "/app/")["classroom"] == class_a.pk


def test_an_instructors_launch_opens_the_class_in_the_teacher_workspace(server, course, launch_flow, school):
    """An instructor is created as a teacher of the platform's school, teaching the course's
    class, and lands on the teacher workspace with that class named; no conversation is made."""
    answer = redeem(server, launched(launch_flow, "u-turing"), "/app/teacher/")
    turing = User.objects.get(pk=answer["user"]["id"])
    assert (turing.role, turing.school, answer["conversation"]) == ("teacher", school["school"], None)
    assert TeacherEnrollment.objects.get(teacher=turing, classroom_id=answer["classroom"]).active
    assert not Conversation.objects.filter(student=turing).exists()
    context = LtiContext.objects.get(id_on_platform=COURSE)
    assert context.title == "Maths 5A"


def _nothing_made() -> None:
    assert not User.objects.filter(first_name__in=["Ada", "Menna"]).exists()
    assert not LtiContext.objects.exists()
    assert not Conversation.objects.exists()


def test_a_role_other_than_learner_or_instructor_is_refused(server, course, launch_flow):
    """A mentor's launch is a clear 403 page, with a link back to the course, and makes nothing."""
    resp = launched(launch_flow, "u-mentor")
    assert resp.status_code == 403
    assert "learners and instructors" in resp.text
    assert "Back to the course" in resp.text
    _nothing_made()


def test_a_deactivated_person_is_refused(server, course, launch_flow, school):
    """The roster's deactivated person cannot launch."""
    User.objects.filter(pk=school["alice"].pk).update(external_id="sis-alice", is_active=False)
    resp = launched(launch_flow, "u-alice")
    assert resp.status_code == 403
    assert "deactivated" in resp.text
    assert not LtiUser.objects.exists()


def test_a_person_of_another_school_is_never_matched(server, course, launch_flow, schools):
    """Ada's email is dave's, of school B: the launch makes a new student of the platform's
    school rather than signing dave in."""
    User.objects.filter(pk=schools["dave"].pk).update(email="ada@x.org")
    answer = redeem(server, launched(launch_flow, "u-ada"), "/app/")
    assert answer["user"]["id"] != schools["dave"].pk
    assert User.objects.get(pk=answer["user"]["id"]).school == schools["school"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"state": None}, "Missing state"),
        ({"id_token": None}, "id_token"),
        ({"id_token": "not.a-jwt"}, "JWT"),
        ({"id_token": "a.b"}, "3 parts"),
    ],
)
def test_a_launch_missing_its_parts_is_a_clear_400(server, course, launch_flow, change, reason):
    """A post without its state or id_token, or with a malformed id_token: a 400 page naming
    what is wrong, and nothing made."""
    resp = launch_flow.post(launch_flow.form(course.course_url(COURSE, "u-ada", link="link-1")), **change)
    assert resp.status_code == 400, resp.text
    assert reason in resp.text
    _nothing_made()


def test_a_tampered_expired_or_replayed_launch_is_refused(server, course, launch_flow):
    """A changed claim breaks the signature; an expired id_token is refused; the same form
    posted twice works once; another browser's state cookie does not fit."""
    posted = launch_flow.form(course.course_url(COURSE, "u-ada", link="link-1"))
    header, body, signature = posted.fields["id_token"].split(".")
    tampered = launch_flow.post(posted, id_token=".".join([header, body[:-4] + "AAAA", signature]))
    assert tampered.status_code == 400
    expired = launch_flow.post(launch_flow.form(course.course_url(COURSE, "u-ada", link="link-1", ttl=-120)))
    assert expired.status_code == 400
    assert "expired" in expired.text
    other = launch_flow.form(course.course_url(COURSE, "u-ada", link="link-1"))
    assert launch_flow.post(posted, state=other.fields["state"]).status_code == 400
    _nothing_made()
    assert launch_flow.post(posted).status_code == 302
    replayed = launch_flow.post(posted)
    assert replayed.status_code == 400
    assert "already used" in replayed.text


def test_an_unknown_platform_client_or_deployment_is_refused(server, course, launch_flow):
    """A login initiation from an unregistered issuer or client id, and a launch through a
    deployment the administrator did not register: clear 400 pages."""
    preflight = launch_flow.preflight(course.course_url(COURSE, "u-ada", link="link-1"))
    login, _, query = preflight.partition("?")
    for change in ({"iss": "https://unknown.example"}, {"client_id": "another-client"}, {"login_hint": ""}):
        params = dict(p.split("=", 1) for p in query.split("&"))
        resp = launch_flow.login(f"{login}?{urlencode({**params, **change})}")
        assert resp.status_code == 400, (change, resp.text)
        assert "not set up for the tutor" in resp.text
    resp = launch_flow.post(launch_flow.form(course.course_url(COURSE, "u-ada", link="link-1", deployment="other")))
    assert resp.status_code == 400
    assert "deployment" in resp.text
    _nothing_made()


def test_the_jwks_serves_one_stable_key(server, course):
    """The tool's key exists without a manual step and is the same from one request to the next."""
    first = httpx2.get(f"{server}/lti/jwks/").json()
    assert len(first["keys"]) == 1
    assert first["keys"][0]["alg"] == "RS256"
    assert httpx2.get(f"{server}/lti/jwks/").json() == first


def test_deep_linking_is_for_instructors_and_its_picker_checks_its_form(server, course, launch_flow):
    """A learner's deep-linking launch is a 403 page. The instructor's shows the topic picker;
    its answer without a topic is the picker again with a 400, and one naming an unknown launch
    is a 400 page asking to open it again from the course."""
    learner = launch_flow.post(launch_flow.form(course.deep_link_url(COURSE, "u-ada")))
    assert learner.status_code == 403
    assert "instructors" in learner.text
    picker = launch_flow.post(launch_flow.form(course.deep_link_url(COURSE, "u-turing")))
    assert picker.status_code == 200, picker.text
    launch_id = re.search(r'name="launch_id" value="([^"]+)"', picker.text)
    assert launch_id
    respond = f"{server}/lti/deep-link/respond/"
    empty = httpx2.post(respond, data={"launch_id": launch_id.group(1), "topic": "", "title": "Tutor"})
    assert empty.status_code == 400
    assert "Give a topic and a title." in empty.text
    unknown = httpx2.post(respond, data={"launch_id": "lti1p3-launch-unknown", "topic": "x", "title": "y"})
    assert unknown.status_code == 400
    assert "open it again from your course" in unknown.text
    answer = httpx2.post(respond, data={"launch_id": launch_id.group(1), "topic": "Decimals", "title": "Tutor"})
    assert answer.status_code == 200
    assert f'action="{course.url}/deep-link-return/?context={COURSE}"' in answer.text
    assert "form-action 'self' " + course.url in answer.headers["content-security-policy"]
