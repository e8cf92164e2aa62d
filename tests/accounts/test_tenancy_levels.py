"""The three levels of tenancy: a school (its administrator), a class (its teachers, several of
them), an enrolment. Every active teacher of a class sees its students and is alerted of their
crises; a teacher enrolment, a class or a student's enrolment made inactive gives no access (404),
and a dropped student leaves the class's lists, questions, reviews and tasks. The per-endpoint
proof for every surface is the tenancy matrix (tests/accounts/test_tenancy.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from accounts.models import Enrollment, TeacherEnrollment, User
from accounts.services import classroom_create
from learning.models import Task
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from safety import alerts, unrouted
from safety.models import Delivery
from tests.conftest import client_for, make_user
from tests.safety.test_alerts import crisis_flag, with_email


@pytest.fixture
def coteacher(school: dict[str, Any]) -> User:
    """teacher_d, a second teacher of 5A (not its primary one)."""
    teacher = make_user("teacher_d", User.Role.TEACHER, school=school["school"])
    TeacherEnrollment.objects.create(classroom=school["class_a"], teacher=teacher, primary=False)
    return teacher


def usernames(resp: Any) -> set[str]:
    assert resp.status_code == 200, resp.content
    return {row["username"] for row in resp.json()["results"]}


def test_every_active_teacher_of_a_class_sees_its_students(school, coteacher):
    """5A's primary teacher and its second teacher both list alice and bob, read alice, and list
    5A as their one class."""
    for teacher in (school["teacher_a"], coteacher):
        client = client_for(teacher)
        assert usernames(client.get("/api/v1/students/")) == {"alice", "bob"}
        assert client.get(f"/api/v1/students/{school['alice'].pk}/").status_code == 200
        (classroom,) = client.get("/api/v1/classrooms/").json()["results"]
        assert classroom["id"] == school["class_a"].pk


def test_every_active_teacher_with_an_email_gets_the_crisis_email(
    school, coteacher, settings, django_capture_on_commit_callbacks
):
    """A crisis of alice's is emailed to both teachers of 5A (primary or not), and to no one
    else; a class whose every teacher has an address is not reported without a recipient."""
    settings.SAFETY_QUEUE_URL = "https://tutor.example/teacher/safety/"
    with_email(school["teacher_a"], "a@school.test")
    with_email(coteacher, "d@school.test")
    with_email(school["teacher_b"], "b@school.test")
    flag = crisis_flag(school["alice"])

    with django_capture_on_commit_callbacks():
        alerts.flag_alert(flag_id=flag.pk)
    for delivery in Delivery.objects.filter(flag=flag):
        assert alerts.delivery_send(delivery_id=delivery.pk) == "sent"

    assert sorted(address for message in mail.outbox for address in message.to) == ["a@school.test", "d@school.test"]
    assert school["class_a"] not in unrouted.classrooms_without_recipient()


def test_a_teacher_removed_from_the_class_gets_404_and_no_alert(school, coteacher):
    """teacher_d's enrolment in 5A made inactive: alice and bob are 404s to them, their lists
    are empty, alice's flag is not theirs and her crisis is not emailed to them; teacher_a still
    sees the class. With every teacher gone, 5A has no crisis recipient of its own."""
    with_email(coteacher, "d@school.test")
    flag = crisis_flag(school["alice"])
    TeacherEnrollment.objects.filter(teacher=coteacher).update(active=False)

    client = client_for(coteacher)
    for url in (
        f"/api/v1/students/{school['alice'].pk}/",
        f"/api/v1/students/{school['bob'].pk}/card/",
        f"/api/v1/safety/flags/{flag.pk}/",
        f"/api/v1/classrooms/{school['class_a'].pk}/skills/",
    ):
        assert client.get(url).status_code == 404, url
    assert usernames(client.get("/api/v1/students/")) == set()
    assert client.get("/api/v1/classrooms/").json()["results"] == []
    assert "d@school.test" not in {r.target for r in alerts.recipients_for(flag, level=0) or []}
    assert usernames(client_for(school["teacher_a"]).get("/api/v1/students/")) == {"alice", "bob"}

    TeacherEnrollment.objects.filter(classroom=school["class_a"]).update(active=False)
    assert school["class_a"] in unrouted.classrooms_without_recipient()


@pytest.mark.parametrize("level", ["enrolment", "class"])
def test_an_inactive_enrolment_or_class_hides_the_student_from_the_teacher(school, level):
    """alice's enrolment in 5A, or 5A itself, made inactive: alice is a 404 to teacher_a and
    missing from their list; her crisis is not emailed to them."""
    with_email(school["teacher_a"], "a@school.test")
    if level == "enrolment":
        Enrollment.objects.filter(student=school["alice"]).update(active=False)
    else:
        type(school["class_a"]).objects.filter(pk=school["class_a"].pk).update(active=False)
    client = client_for(school["teacher_a"])

    assert client.get(f"/api/v1/students/{school['alice'].pk}/").status_code == 404
    assert "alice" not in usernames(client.get("/api/v1/students/"))
    assert alerts.recipients_for(crisis_flag(school["alice"]), level=0) == []


def test_a_dropped_student_leaves_the_class_but_not_another_class_of_the_teacher(school):
    """bob is in 5A and in teacher_a's club; his 5A enrolment dropped, teacher_a still sees him
    (through the club), but 5A's task lists only alice's status, its flags filter leaves his
    out, its reviews list only alice."""
    club = classroom_create(name="Club", school=school["school"], teachers=[school["teacher_a"]])
    Enrollment.objects.create(classroom=club, student=school["bob"])
    Enrollment.objects.filter(classroom=school["class_a"], student=school["bob"]).update(active=False)
    flag = crisis_flag(school["bob"])
    Task.objects.create(teacher=school["teacher_a"], classroom=school["class_a"], title="5A's homework")
    client = client_for(school["teacher_a"])

    assert "bob" in usernames(client.get("/api/v1/students/"))
    (task,) = client.get("/api/v1/tasks/").json()["results"]
    assert [s["username"] for s in task["statuses"]] == ["alice"]
    flags = client.get(f"/api/v1/safety/flags/?classroom={school['class_a'].pk}").json()["results"]
    assert flag.pk not in [f["id"] for f in flags]
    club_flags = client.get(f"/api/v1/safety/flags/?classroom={club.pk}").json()["results"]
    assert [f["id"] for f in club_flags] == [flag.pk]
    reviews = client.get(f"/api/v1/classrooms/{school['class_a'].pk}/reviews/").json()
    assert [s["username"] for s in reviews["students"]] == ["alice"]


def test_a_dropped_student_is_not_in_the_class_reviews(school):
    """bob's only enrolment dropped: 5A's reviews list alice alone."""
    Enrollment.objects.filter(classroom=school["class_a"], student=school["bob"]).update(active=False)
    reviews = client_for(school["teacher_a"]).get(f"/api/v1/classrooms/{school['class_a'].pk}/reviews/").json()
    assert [s["username"] for s in reviews["students"]] == ["alice"]


def test_a_school_administrator_reads_teacher_only_notes(schools):
    """admin_a reads a teacher-only note about alice, as her teachers do; alice does not."""
    note = teacher_note_create(
        teacher=schools["teacher_a"],
        student_id=schools["alice"].pk,
        title="Loses focus after long paragraphs",
        content="x",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    admin = client_for(schools["admin_a"])
    assert admin.get(f"/api/v1/memories/{note.pk}/").status_code == 200
    listed = admin.get(f"/api/v1/memories/?student={schools['alice'].pk}").json()["results"]
    assert [m["id"] for m in listed] == [note.pk]
    assert client_for(schools["alice"]).get(f"/api/v1/memories/{note.pk}/").status_code == 404
    assert client_for(schools["admin_b"]).get(f"/api/v1/memories/{note.pk}/").status_code == 404


@pytest.mark.parametrize("level", ["enrolment", "class"])
def test_a_dropped_class_s_tasks_leave_the_students_list_and_the_tutor(school, level):
    """alice's enrolment in 5A, or 5A itself, made inactive: 5A's task is no longer in her
    list, nor in what the tutor is told of her learning; her own task still is."""
    from django.db.models import Value

    from learning.selectors import learning_record_for, tasks_exist

    Task.objects.create(teacher=school["teacher_a"], classroom=school["class_a"], title="5A's homework")
    if level == "enrolment":
        Enrollment.objects.filter(student=school["alice"]).update(active=False)
    else:
        type(school["class_a"]).objects.filter(pk=school["class_a"].pk).update(active=False)
    alice = school["alice"]
    assert client_for(alice).get("/api/v1/tasks/").json()["results"] == []
    assert learning_record_for(student_id=alice.pk).tasks == []
    assert not User.objects.filter(pk=alice.pk).annotate(has=tasks_exist(student_id=Value(alice.pk))).get().has

    Task.objects.create(teacher=school["teacher_a"], student=alice, title="Her own")
    assert [t["title"] for t in client_for(alice).get("/api/v1/tasks/").json()["results"]] == ["Her own"]
    assert [t.title for t in learning_record_for(student_id=alice.pk).tasks] == ["Her own"]
