"""Roster sync (NRPS) against the real test LMS (lti1p3platform's memberships service in its own
process, reached with an OAuth2 token the tool gets by a client assertion the LMS checks against
the tool's JWKS): an instructor's launch queues a sync of the course; the course's members become
the class's students and teachers, matched as a launch matches them; a member removed from the
course, or made inactive, has their enrolment ended and kept; people outside the course are
untouched; a real worker runs the syncs a launch and a teacher's request queue (docs/lti.md)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from lti_tool.models import LtiContext

from accounts.models import Classroom, Enrollment, TeacherEnrollment, User
from lti import nrps
from lti.models import RosterSync
from tests.conftest import headers, wait_for
from tests.lti.conftest import LaunchFlow, LtiPlatform
from tests.lti.lms_services import COURSE, INSTRUCTOR, LEARNER, MENTOR, launched, member, members_replace, redeem


def course_members(**changes: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The course: its instructor (teacher_a, by email), alice (by her SIS id), carol (of class
    5B, by email), zoe (unknown to the tool), a mentor, and a former learner never seen by the
    tool (inactive). `changes` replaces a member by sub, or with None removes it."""
    members = {
        "lms-teacher": member("lms-teacher", INSTRUCTOR, email="teacher.a@school.test", given_name="Ann"),
        "lms-alice": member("lms-alice", LEARNER, lis_person_sourcedid="sis-alice", given_name="Alice"),
        "lms-carol": member("lms-carol", LEARNER, email="carol@school.test", given_name="Carol"),
        "lms-zoe": member("lms-zoe", LEARNER, given_name="Zoe", family_name="Martin", email="zoe@school.test"),
        "lms-mentor": member("lms-mentor", MENTOR, given_name="Menna"),
        "lms-gone": member("lms-gone", LEARNER, status="Inactive", given_name="Gone"),
    }
    for sub, change in changes.items():
        if change is None:
            members.pop(sub)
        else:
            members[sub] = change
    return list(members.values())


FIRST_SYNC = {"created": 2, "updated": 0, "ended": 0, "unchanged": 3, "skipped": 1}


@pytest.fixture
def course(lti_platform: LtiPlatform, school: dict[str, Any]) -> LtiPlatform:
    """The LMS registered for the test school, its course the class 5A (by section sourcedId),
    with `course_members()` and a link."""
    User.objects.filter(pk=school["teacher_a"].pk).update(email="teacher.a@school.test")
    User.objects.filter(pk=school["alice"].pk).update(external_id="sis-alice")
    User.objects.filter(pk=school["carol"].pk).update(email="carol@school.test")
    Classroom.objects.filter(pk=school["class_a"].pk).update(external_id="sec-5a")
    lti_platform.register(school["school"])
    lti_platform.course(COURSE, title="Maths 5A", section_sourcedid="sec-5a")
    lti_platform.link(COURSE, "link-1", title="Fractions tutor")
    members_replace(lti_platform, course_members())
    return lti_platform


def enrolled(school: dict[str, Any]) -> dict[str, bool]:
    """5A's students and whether each enrolment is active."""
    return dict(Enrollment.objects.filter(classroom=school["class_a"]).values_list("student__username", "active"))


def run(sync: RosterSync) -> tuple[dict[str, int], RosterSync]:
    counts = nrps.roster_sync(sync_id=sync.pk)
    sync.refresh_from_db()
    return counts, sync


def test_an_instructors_launch_queues_the_sync_which_makes_the_course_the_class(
    server, course: LtiPlatform, launch_flow: LaunchFlow, school
):
    """The instructor's launch queues one sync of the course into 5A (another launch soon after
    queues none). Run: teacher_a and alice are matched (email, SIS id) and already there, carol
    and zoe are enrolled (zoe created in the platform's school), the mentor is skipped, the
    inactive stranger creates no one; its task delivered again runs nothing. Then zoe leaves the
    course and alice is made inactive: both enrolments end, kept. alice active again: hers is
    active again. bob, in 5A but not in the course, is never touched."""
    redeem(server, launched(launch_flow, "lms-teacher"), "/app/teacher/")
    [sync] = RosterSync.objects.all()
    assert (sync.status, sync.classroom, sync.context.id_on_platform) == ("queued", school["class_a"], COURSE)
    redeem(server, launched(launch_flow, "lms-teacher"), "/app/teacher/")
    assert RosterSync.objects.count() == 1

    counts, sync = run(sync)
    assert counts == FIRST_SYNC
    assert (sync.status, sync.counts, sync.detail) == ("done", FIRST_SYNC, "")
    assert nrps.roster_sync(sync_id=sync.pk) == FIRST_SYNC
    zoe = User.objects.get(email="zoe@school.test")
    assert (zoe.role, zoe.school, zoe.first_name, zoe.has_usable_password()) == (
        "student",
        school["school"],
        "Zoe",
        False,
    )
    assert enrolled(school) == {"alice": True, "bob": True, "carol": True, zoe.username: True}
    assert list(TeacherEnrollment.objects.filter(classroom=school["class_a"]).values_list("teacher", "active")) == [
        (school["teacher_a"].pk, True)
    ]
    assert not User.objects.filter(first_name__in=["Gone", "Menna"]).exists()

    context = LtiContext.objects.get(id_on_platform=COURSE)
    members_replace(course, course_members(**{"lms-zoe": None, "lms-alice": member("lms-alice", LEARNER, "Inactive")}))
    counts, _ = run(nrps.roster_sync_request(context=context, classroom=school["class_a"]))
    assert counts == {"created": 0, "updated": 0, "ended": 2, "unchanged": 3, "skipped": 1}
    assert enrolled(school) == {"alice": False, "bob": True, "carol": True, zoe.username: False}
    assert User.objects.filter(pk=zoe.pk, is_active=True).exists()  # out of the class, not deactivated

    members_replace(course, course_members(**{"lms-zoe": None}))
    counts, _ = run(nrps.roster_sync_request(context=context, classroom=school["class_a"]))
    assert counts == {"created": 0, "updated": 1, "ended": 0, "unchanged": 3, "skipped": 1}
    assert enrolled(school)["alice"] is True


def test_a_course_the_lms_does_not_serve_fails_the_sync_and_changes_nothing(
    server, course: LtiPlatform, launch_flow: LaunchFlow, school
):
    """The LMS refuses the memberships (404: the URL names no service of it): the sync is
    failed with the reason and the class is unchanged."""
    redeem(server, launched(launch_flow, "lms-teacher"), "/app/teacher/")
    context = LtiContext.objects.get(id_on_platform=COURSE)
    LtiContext.objects.filter(pk=context.pk).update(
        memberships_url=context.memberships_url.replace("/contexts/", "/x/")
    )
    before = enrolled(school)
    counts, sync = run(RosterSync.objects.get())
    assert counts == {} and sync.status == "failed"
    assert "memberships could not be read" in sync.detail and "404" in sync.detail
    assert enrolled(school) == before


@pytest.mark.worker
def test_a_worker_runs_the_launchs_sync_and_a_teachers_request(
    worker, server, course: LtiPlatform, launch_flow: LaunchFlow, school
):
    """A real worker runs the sync the instructor's launch queued; zoe then leaves the course,
    and the class's teacher asks for a sync (POST /classrooms/{id}/lti-sync/, 202): the worker
    runs it, GET shows it done, zoe's enrolment ended."""
    redeem(server, launched(launch_flow, "lms-teacher"), "/app/teacher/")
    wait_for(lambda: RosterSync.objects.filter(status="done").exists(), timeout=60)
    assert RosterSync.objects.get().counts == FIRST_SYNC
    members_replace(course, course_members(**{"lms-zoe": None}))
    url = f"{server}/api/v1/classrooms/{school['class_a'].pk}/lti-sync/"
    resp = httpx2.post(url, headers=headers(school["teacher_a"]))
    assert resp.status_code == 202, resp.text
    [queued] = resp.json()["syncs"]
    assert (queued["course_title"], queued["status"]) == ("Maths 5A", "queued")
    wait_for(lambda: RosterSync.objects.filter(pk=queued["id"], status="done").exists(), timeout=60)
    latest = httpx2.get(url, headers=headers(school["teacher_a"])).json()["syncs"][0]
    assert latest["counts"] == {"created": 0, "updated": 0, "ended": 1, "unchanged": 4, "skipped": 1}
    assert not Enrollment.objects.get(student__email="zoe@school.test").active
