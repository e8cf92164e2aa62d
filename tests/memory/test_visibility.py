"""Teacher-only notes and the memory list's filters."""

from __future__ import annotations

from memory.models import AIMemory
from memory.services.lifecycle import memory_archive
from memory.services.notes import teacher_note_create

SECRET = "He loses focus after long paragraphs"


def secret_note(school):
    return teacher_note_create(
        teacher=school["teacher_a"],
        student_id=school["bob"].pk,
        title=SECRET,
        content="Keep explanations short for him.",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )


def test_teacher_only_note_never_reaches_the_student(clients, school):
    """Bob never reads the teacher-only note about him: not listed, not found, not searched,
    404 by id; his teacher reads it with its visibility."""
    note = secret_note(school)
    bob = clients["bob"]
    assert bob.get("/api/v1/memories/").json()["count"] == 0
    assert bob.get("/api/v1/memories/?status=all").json()["count"] == 0
    assert bob.get("/api/v1/memories/", {"q": "focus long paragraphs"}).json()["count"] == 0
    assert bob.get(f"/api/v1/memories/{note.pk}/").status_code == 404
    teacher = clients["teacher_a"].get(f"/api/v1/memories/{note.pk}/")
    assert teacher.status_code == 200 and teacher.json()["visibility"] == "teacher_only"
    listed = clients["teacher_a"].get(f"/api/v1/memories/?student={school['bob'].pk}").json()
    assert [m["title"] for m in listed["results"]] == [SECRET]
    assert clients["teacher_b"].get(f"/api/v1/memories/{note.pk}/").status_code == 404


def test_teacher_creates_teacher_only_through_the_api_and_can_share_it_later(clients, school):
    """POST with visibility teacher_only, then PATCH it to student: Bob sees it from then on.
    A summary or a tutor note cannot be made teacher-only (409)."""
    resp = clients["teacher_a"].post(
        "/api/v1/memories/",
        {"student": school["bob"].pk, "title": SECRET, "content": "Short sentences.", "visibility": "teacher_only"},
        format="json",
    )
    assert resp.status_code == 201 and resp.json()["visibility"] == "teacher_only"
    assert clients["bob"].get("/api/v1/memories/").json()["count"] == 0
    shared = clients["teacher_a"].patch(
        f"/api/v1/memories/{resp.json()['id']}/", {"visibility": "student"}, format="json"
    )
    assert shared.status_code == 200 and shared.json()["visibility"] == "student"
    assert clients["bob"].get("/api/v1/memories/").json()["count"] == 1
    bad = clients["teacher_a"].post(
        "/api/v1/memories/",
        {"student": school["bob"].pk, "title": SECRET, "content": "x", "visibility": "secret"},
        format="json",
    )
    assert bad.status_code == 400 and "visibility" in bad.json()["error"]["details"]


def test_teacher_only_note_stays_out_of_the_tutors_prompt(clients, school, llm):
    """The tutor speaks to the student: a teacher-only note is not in its prompt, a shared one is."""
    secret_note(school)
    teacher_note_create(
        teacher=school["teacher_a"],
        student_id=school["bob"].pk,
        title="Enjoys geometry puzzles with drawings",
        content="Use drawings.",
    )
    cid = clients["bob"].post("/api/v1/conversations/", {}, format="json").json()["id"]
    resp = clients["bob"].post(
        f"/api/v1/conversations/{cid}/messages/",
        {"content": "Can we do long paragraphs of geometry?", "client_message_id": "v1"},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    prompt = "\n".join(str(m["content"]) for m in llm.calls("chat")[0]["messages"])
    assert "Enjoys geometry puzzles" in prompt
    assert SECRET not in prompt


def test_status_and_kind_filters(clients, school):
    """?status= active (default), archived or all; ?kind= one kind; unknown values are a 400."""
    kept = teacher_note_create(
        teacher=school["teacher_a"],
        student_id=school["alice"].pk,
        title="Good at mental arithmetic drills",
        content="x",
    )
    gone = teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk, title="Struggles with the times tables", content="y"
    )
    memory_archive(user=school["teacher_a"], memory_id=gone.pk, reason="Mastered since")
    url = f"/api/v1/memories/?student={school['alice'].pk}"
    teacher = clients["teacher_a"]

    def ids(query: str) -> list[int]:
        resp = teacher.get(url + query)
        assert resp.status_code == 200, resp.content
        return [m["id"] for m in resp.json()["results"]]

    assert ids("") == [kept.pk]
    assert ids("&status=archived") == [gone.pk]
    assert ids("&status=all") == [gone.pk, kept.pk]
    assert ids("&kind=teacher_note&status=all") == [gone.pk, kept.pk]
    assert ids("&kind=summary&status=all") == []
    for bad in ("&status=deleted", "&kind=nope"):
        resp = teacher.get(url + bad)
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid"
    archived = teacher.get(url + "&status=archived").json()["results"][0]
    assert archived["archived_reason"] == "Mastered since"
