"""GET /classrooms/: a teacher's own classrooms, by name; nobody else's, and none for a student."""

from __future__ import annotations

from accounts.services import classroom_create


def test_a_teacher_lists_their_classrooms(clients, school):
    """Each teacher sees their own classes, by name, and a student none."""
    classroom_create(name="4B", school=school["school"], teachers=[school["teacher_a"]])
    mine = clients["teacher_a"].get("/api/v1/classrooms/")
    assert mine.status_code == 200, mine.content
    assert [c["name"] for c in mine.json()["results"]] == ["4B", "5A"]
    theirs = clients["teacher_b"].get("/api/v1/classrooms/").json()["results"]
    assert [c["id"] for c in theirs] == [school["class_b"].pk]
    assert clients["alice"].get("/api/v1/classrooms/").json()["results"] == []
