"""Questions in the export and the erasure: a teacher's export holds every question about the
student, the student's own their questions only; an erasure deletes the questions about the
student, by them, and the class answers whose prompt showed their evidence."""

from __future__ import annotations

from typing import Any

from accounts.models import User
from insights.models import AskLog, AskMemory
from tests.conftest import client_for, make_user
from tests.insights.conftest import ask, ask_class
from tests.privacy.test_export import exported


def test_the_teachers_export_holds_every_question_the_students_only_theirs(school, clients, llm, record):
    teacher_answer = ask(clients["teacher_a"], school["alice"].pk, "Why is she stuck on fractions?").json()
    own_answer = ask(clients["alice"], school["alice"].pk, "What do you know about me?").json()
    _, full = exported(clients["teacher_a"], school["alice"].pk)
    assert [a["id"] for a in full["asks"]] == [teacher_answer["id"], own_answer["id"]]
    first = full["asks"][0]
    assert first["asker"] == school["teacher_a"].pk and first["citations"] == teacher_answer["citations"]
    assert record.teacher_only in first["memories"]
    _, own = exported(clients["alice"], school["alice"].pk)
    assert [a["id"] for a in own["asks"]] == [own_answer["id"]]
    assert record.teacher_only not in own["asks"][0]["memories"]


def test_an_erasure_deletes_the_questions_that_hold_the_students_data(school, clients, llm, record):
    """alice's questions (about her, by her, a class answer showing her evidence) go; a class
    answer that showed only bob's stays."""
    ask(clients["teacher_a"], school["alice"].pk, "Why is she stuck on fractions?")
    ask(clients["alice"], school["alice"].pk, "What do you know about me?")
    ask_class(clients["teacher_a"], school["class_a"].pk, "Who struggles with fractions or perimeter?")
    bob_only = ask_class(clients["teacher_a"], school["class_a"].pk, "Who mixes up perimeter and area?").json()
    assert [s["username"] for s in bob_only["students"]] == ["bob"]
    assert AskMemory.objects.filter(memory__student=school["alice"]).exists()
    root = make_user("root", User.Role.STAFF, is_staff=True, is_superuser=True)
    alice = school["alice"]
    resp = client_for(root).post(
        f"/api/v1/students/{alice.pk}/erase/", {"confirm": alice.username, "reason": "Request 12"}, format="json"
    )
    assert resp.status_code == 200, resp.content
    assert list(AskLog.objects.values_list("pk", flat=True)) == [bob_only["id"]]
    assert not AskMemory.objects.exclude(ask_id=bob_only["id"]).exists()
    deleted: dict[str, Any] = resp.json()["counts"]["deleted"]
    assert deleted["insights.AskLog"] == 3 and deleted["insights.AskMemory"] >= 1
