"""Homework tasks over the API: a teacher assigns, each student has their own status, overdue
is computed, teachers see who is done."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from learning.models import Task, TaskStatus
from learning.services import task_update_from_tool


def assign(client, **body):
    payload = {"title": "Exercises 4 to 6 p. 12", "instructions": "Show your working.", "subject": "Maths", **body}
    return client.post("/api/v1/tasks/", payload, format="json")


def test_a_teacher_assigns_to_their_class_or_one_of_their_students(clients, school):
    due = (timezone.now() + timedelta(days=2)).isoformat()
    to_class = assign(clients["teacher_a"], classroom=school["class_a"].pk, due_at=due)
    assert to_class.status_code == 201, to_class.content
    body = to_class.json()
    assert (body["classroom"], body["student"], body["teacher"]) == (school["class_a"].pk, None, school["teacher_a"].pk)
    assert [(s["username"], s["status"], s["set_by"], s["overdue"]) for s in body["statuses"]] == [
        ("alice", "todo", None, False),
        ("bob", "todo", None, False),
    ]
    to_bob = assign(clients["teacher_a"], student=school["bob"].pk)
    assert to_bob.status_code == 201, to_bob.content
    assert (to_bob.json()["due_at"], [s["username"] for s in to_bob.json()["statuses"]]) == (None, ["bob"])


def test_assigning_is_refused_outside_the_teachers_classes(clients, school):
    """Both targets or none: 400. Another class or its student: 404. A student: 403."""
    assert assign(clients["teacher_a"]).status_code == 400
    both = assign(clients["teacher_a"], classroom=school["class_a"].pk, student=school["alice"].pk)
    assert both.status_code == 400
    assert assign(clients["teacher_a"], classroom=school["class_b"].pk).status_code == 404
    assert assign(clients["teacher_a"], student=school["carol"].pk).status_code == 404
    assert assign(clients["alice"], student=school["alice"].pk).status_code == 403
    assert assign(clients["teacher_a"], classroom=school["class_a"].pk, title="").status_code == 400
    assert assign(clients["teacher_a"], classroom=school["class_a"].pk, due_at="tomorrow").status_code == 400
    assert not Task.objects.exists()


def test_a_student_lists_their_tasks_with_their_status_due_first(clients, school):
    """Their own and their class's tasks, due first (no date last), each with their status only
    and `overdue` computed from the due date and their status."""
    now = timezone.now()
    teacher = school["teacher_a"]
    later = Task.objects.create(teacher=teacher, classroom=school["class_a"], title="Later", due_at=now + timedelta(3))
    late = Task.objects.create(teacher=teacher, student=school["alice"], title="Late", due_at=now - timedelta(1))
    undated = Task.objects.create(teacher=teacher, classroom=school["class_a"], title="Whenever")
    Task.objects.create(teacher=teacher, student=school["bob"], title="Bob's")
    Task.objects.create(teacher=school["teacher_b"], classroom=school["class_b"], title="5B's")

    resp = clients["alice"].get("/api/v1/tasks/")
    assert resp.status_code == 200, resp.content
    rows = resp.json()["results"]
    assert [r["id"] for r in rows] == [late.pk, later.pk, undated.pk]
    assert [[(s["username"], s["status"], s["overdue"]) for s in r["statuses"]] for r in rows] == [
        [("alice", "todo", True)],
        [("alice", "todo", False)],
        [("alice", "todo", False)],
    ]
    done = clients["alice"].post(f"/api/v1/tasks/{late.pk}/status/", {"status": "done"}, format="json")
    assert done.status_code == 200, done.content
    assert [(s["status"], s["set_by"], s["overdue"]) for s in done.json()["statuses"]] == [("done", "student", False)]
    assert clients["alice"].get("/api/v1/tasks/").json()["results"][0]["statuses"][0]["status"] == "done"


def test_the_teacher_sees_who_is_done(clients, school):
    """A class task lists each student's status: set by the student, or by the tutor with its reason."""
    task = Task.objects.create(
        teacher=school["teacher_a"], classroom=school["class_a"], title="Read ch. 3", due_at=timezone.now()
    )
    clients["alice"].post(f"/api/v1/tasks/{task.pk}/status/", {"status": "done"}, format="json")
    task_update_from_tool(
        student_id=school["bob"].pk, arguments={"task": task.pk, "status": "in_progress", "reason": "Half read"}
    )
    rows = clients["teacher_a"].get("/api/v1/tasks/").json()["results"]
    [row] = rows
    assert [(s["username"], s["status"], s["set_by"], s["reason"], s["overdue"]) for s in row["statuses"]] == [
        ("alice", "done", "student", "", False),
        ("bob", "in_progress", "tutor", "Half read", True),
    ]
    assert clients["teacher_b"].get("/api/v1/tasks/").json()["count"] == 0


def test_only_the_student_sets_their_status(clients, school):
    """Their teacher gets 403, another student 404; a bad status is a 400. Nothing changes."""
    task = Task.objects.create(teacher=school["teacher_a"], student=school["alice"], title="Exercise")
    url = f"/api/v1/tasks/{task.pk}/status/"
    assert clients["teacher_a"].post(url, {"status": "done"}, format="json").status_code == 403
    assert clients["bob"].post(url, {"status": "done"}, format="json").status_code == 404
    assert clients["alice"].post(url, {"status": "finished"}, format="json").status_code == 400
    assert not TaskStatus.objects.exists()
    assert clients["alice"].post(url, {"status": "in_progress"}, format="json").status_code == 200
    assert clients["alice"].post(url, {"status": "in_progress"}, format="json").status_code == 200
    assert TaskStatus.objects.get().status == "in_progress"


def test_a_teacher_lists_one_students_tasks_and_another_class_is_a_404(clients, school):
    """?student= narrows the list to the tasks set to that student or to a class they are in; a
    student the requester may not see (another class's, or another student for a student) is
    a 404, and a malformed id a 400."""
    teacher = school["teacher_a"]
    for_class = Task.objects.create(teacher=teacher, classroom=school["class_a"], title="Class task")
    for_bob = Task.objects.create(teacher=teacher, student=school["bob"], title="Bob's")
    for_alice = Task.objects.create(teacher=teacher, student=school["alice"], title="Alice's")
    Task.objects.create(teacher=school["teacher_b"], classroom=school["class_b"], title="5B's")

    def ids(client, query):
        resp = client.get(f"/api/v1/tasks/{query}")
        assert resp.status_code == 200, resp.content
        return sorted(row["id"] for row in resp.json()["results"])

    assert ids(clients["teacher_a"], "") == sorted([for_class.pk, for_bob.pk, for_alice.pk])
    assert ids(clients["teacher_a"], f"?student={school['bob'].pk}") == sorted([for_class.pk, for_bob.pk])
    assert ids(clients["alice"], f"?student={school['alice'].pk}") == sorted([for_class.pk, for_alice.pk])
    assert clients["teacher_a"].get(f"/api/v1/tasks/?student={school['carol'].pk}").status_code == 404
    assert clients["alice"].get(f"/api/v1/tasks/?student={school['bob'].pk}").status_code == 404
    assert clients["teacher_a"].get("/api/v1/tasks/?student=abc").status_code == 400
