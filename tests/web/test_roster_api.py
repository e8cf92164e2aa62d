"""GET /classrooms/{id}/roster/: one class's students with their figures, for the class's teachers
and its school's administrators; another class, another school's, or a student: 404."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Enrollment, School, User
from accounts.services import classroom_create
from conversations.models import Conversation
from conversations.services import conversation_create
from learning.models import ReviewCard
from safety.models import Flag
from tests.conftest import client_for, make_user
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE
from tests.learning.test_reviews import answered
from tests.safety.test_flags_api import make_flag


def _roster(client: Any, classroom_id: int) -> Any:
    return client.get(f"/api/v1/classrooms/{classroom_id}/roster/")


def test_the_roster_gives_each_students_figures(clients, school):
    """Exactly the class's active students, by username, each with their last activity, open
    flags (an acknowledged one not counted), reviews due and mastery per skill; a student with
    nothing yet has nulls and zeros; an ended enrolment is not listed."""
    alice, bob = school["alice"], school["bob"]
    dropped = make_user("dora")
    Enrollment.objects.create(classroom=school["class_a"], student=dropped, active=False)
    make_flag(alice)
    make_flag(alice)
    make_flag(alice, status=Flag.Status.ACKNOWLEDGED)
    answered(alice, THREE_OF_FIVE)
    moment = timezone.now() - timedelta(hours=3)
    Conversation.objects.filter(student=alice).update(last_activity_at=moment - timedelta(days=2))
    conversation = conversation_create(user=alice, subject="Fractions")
    Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=moment)
    ReviewCard.objects.filter(student=alice).update(due=timezone.now() - timedelta(days=1))

    response = _roster(clients["teacher_a"], school["class_a"].pk)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["classroom"], body["name"]) == (school["class_a"].pk, "5A")
    assert [t["username"] for t in body["teachers"]] == ["teacher_a"]
    rows = {s["username"]: s for s in body["students"]}
    assert list(rows) == ["alice", "bob"]
    a, b = rows["alice"], rows["bob"]
    assert a["id"] == alice.pk and a["open_flags"] == 2 and a["reviews_due"] == 1
    assert abs(datetime.fromisoformat(a["last_activity_at"]) - moment) < timedelta(seconds=1)
    [skill] = a["skills"]
    assert skill["skill"] == SKILL and 0 < skill["estimate"] < 0.95
    assert a["mastery_average"] == skill["estimate"]
    assert b["id"] == bob.pk
    assert (b["last_activity_at"], b["open_flags"], b["reviews_due"], b["mastery_average"], b["skills"]) == (
        None,
        0,
        0,
        None,
        [],
    )


def test_the_roster_costs_the_same_whatever_the_class_size(clients, school):
    """The number of queries does not grow with the class (no query per student)."""

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert _roster(clients["teacher_a"], school["class_a"].pk).status_code == 200
        return len(queries)

    small = count()
    for n in range(6):
        student = make_user(f"extra{n}")
        Enrollment.objects.create(classroom=school["class_a"], student=student)
        answered(student, ALL_RIGHT)
        make_flag(student)
    assert count() == small


def test_another_class_or_school_is_not_found(clients, school):
    """A teacher gets 404 on a class they do not teach; a student on their own class; an
    administrator reads their school's classes and gets 404 on another school's."""
    class_b = school["class_b"]
    assert _roster(clients["teacher_a"], class_b.pk).status_code == 404
    assert _roster(clients["alice"], school["class_a"].pk).status_code == 404
    assert _roster(clients["teacher_a"], 10**9).status_code == 404

    head = make_user("head", User.Role.ADMINISTRATOR, school=school["school"])
    assert [s["username"] for s in _roster(client_for(head), class_b.pk).json()["students"]] == ["carol"]
    elsewhere = School.objects.create(name="Other school", external_id="school-2")
    other_class = classroom_create(name="6C", school=elsewhere, teachers=[make_user("teacher_c", User.Role.TEACHER)])
    Enrollment.objects.create(classroom=other_class, student=make_user("erin"))
    response = _roster(client_for(head), other_class.pk)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
