"""PATCH /api/v1/memories/{id}/ and POST /api/v1/memories/{id}/archive/: a teacher corrects or
archives a student's memory over HTTP; recall follows at once; nothing is deleted. (Another
student and another class's teacher get 404: tests/accounts/test_tenancy.py.)"""

from __future__ import annotations

import random

from memory.models import AIMemory, MemoryEmbedding
from memory.tasks import memory_embed
from tests.memory.recall_helpers import note


def _url(memory: AIMemory, action: str = "") -> str:
    return f"/api/v1/memories/{memory.pk}/{action}"


def _search(client, student, query: str) -> list[int]:
    response = client.get("/api/v1/memories/", {"q": query, "student": student.pk})
    assert response.status_code == 200, response.content
    return [m["id"] for m in response.json()["results"]]


def test_teacher_corrects_a_memory_and_search_follows(clients, school, openai_embedder):
    """The new text replaces the old in the index in the same request; the stale vector is
    dropped and the memory is embedded again by the task."""
    alice, teacher = school["alice"], clients["teacher_a"]
    memory = note(alice, "Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    memory_embed.run(memory.pk)
    response = teacher.patch(
        _url(memory), {"content": "Now adds unlike fractions with a common multiple."}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["content"] == "Now adds unlike fractions with a common multiple."
    assert body["title"] == "Struggles with adding unlike fractions" and body["status"] == "active"
    assert not MemoryEmbedding.objects.filter(memory=memory).exists()
    assert _search(teacher, alice, "common multiple") == [memory.pk]
    assert _search(teacher, alice, "denominators twice") == []
    assert memory_embed.run(memory.pk) == 1

    response = teacher.patch(_url(memory), {"title": "Adds unlike fractions with confidence"}, format="json")
    assert response.status_code == 200 and response.json()["title"] == "Adds unlike fractions with confidence"
    assert response.json()["content"] == "Now adds unlike fractions with a common multiple."


def test_bad_corrections_are_400_and_change_nothing(clients, school):
    original = ("Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    memory = note(school["alice"], *original)
    teacher = clients["teacher_a"]
    cases = [
        ({}, "title"),
        ({"title": ""}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"content": 42}, "content"),
        ({"title": "Only two"}, "title"),  # a title is 4 to 10 words
    ]
    for body, field in cases:
        response = teacher.patch(_url(memory), body, format="json")
        assert response.status_code == 400, (body, response.content)
        error = response.json()["error"]
        assert error["code"] == "invalid" and error["message"], error
        assert field in error["details"], (body, error)
    memory.refresh_from_db()
    assert (memory.title, memory.content) == original


def test_teacher_archives_a_memory_with_a_reason(clients, school, openai_embedder):
    """An archived memory leaves the list, the search and the vectors, stays readable with its
    reason, cannot be edited (409), and archiving it again changes nothing."""
    alice, teacher = school["alice"], clients["teacher_a"]
    memory = note(alice, "Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    memory_embed.run(memory.pk)
    assert teacher.post(_url(memory, "archive/"), {}, format="json").status_code == 400
    assert teacher.post(_url(memory, "archive/"), {"reason": "   "}, format="json").status_code == 400
    response = teacher.post(_url(memory, "archive/"), {"reason": "Written about another student"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "archived"
    assert response.json()["archived_reason"] == "Written about another student"
    assert not MemoryEmbedding.objects.filter(memory=memory).exists()
    assert _search(teacher, alice, "denominators") == []
    assert memory.pk not in [m["id"] for m in clients["alice"].get("/api/v1/memories/").json()["results"]]
    detail = clients["alice"].get(_url(memory))
    assert detail.status_code == 200 and detail.json()["status"] == "archived"

    response = teacher.patch(_url(memory), {"title": "Adds unlike fractions with confidence"}, format="json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    again = teacher.post(_url(memory, "archive/"), {"reason": "Another reason"}, format="json")
    assert again.status_code == 200 and again.json()["archived_reason"] == "Written about another student"
    assert AIMemory.objects.filter(pk=memory.pk).exists()


def test_the_student_may_read_but_not_change_their_memory(clients, school):
    """The owner reads the memory (200) and gets 403 for a correction or an archive."""
    memory = note(school["alice"], "Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    alice = clients["alice"]
    assert alice.get(_url(memory)).status_code == 200
    response = alice.patch(_url(memory), {"title": "I never struggled with fractions"}, format="json")
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    response = alice.post(_url(memory, "archive/"), {"reason": "I do not like it"}, format="json")
    assert response.status_code == 403
    memory.refresh_from_db()
    assert (memory.title, memory.status) == ("Struggles with adding unlike fractions", "active")


def test_unknown_memory_is_404(clients, school):
    teacher = clients["teacher_a"]
    assert teacher.patch("/api/v1/memories/999999/", {"title": "Some new title here"}, format="json").status_code == 404
    assert teacher.post("/api/v1/memories/999999/archive/", {"reason": "x"}, format="json").status_code == 404


# A word far longer than PostgreSQL's btree allows in one index entry (about 2,700 bytes, after
# compression: hence random letters, which do not compress), like a pasted hash or encoded blob:
# 1,500 two-byte Greek letters (3,000 bytes), so that a note holding it stays within
# CONTENT_MAX_CHARS.
LONG_WORD = "".join(random.Random(5000).choices("αβγδεζηθικλμνξοπρστυφχψω", k=1500))


def test_a_very_long_word_is_stored_whole_and_the_note_stays_searchable(clients, school):
    """A teacher note with a 1,500-character word in its content and a word longer than the
    index's term bound in its title is created (201), stored whole, and found by its other words
    and by the long word itself (queries are cut by the same rule as the index). A title cannot
    hold a 1,500-character word: that is a 400 from validation, never a 500."""
    alice, teacher = school["alice"], clients["teacher_a"]
    title = "Pasted " + LONG_WORD[:150] + " into fractions homework"
    content = f"Typed {LONG_WORD} instead of the denominators."
    response = teacher.post(
        "/api/v1/memories/", {"student": alice.pk, "title": title, "content": content}, format="json"
    )
    assert response.status_code == 201, response.content
    memory = AIMemory.objects.get(pk=response.json()["id"])
    assert (memory.title, memory.content) == (title, content)
    assert _search(teacher, alice, "denominators") == [memory.pk]
    assert _search(teacher, alice, "homework") == [memory.pk]
    assert _search(teacher, alice, LONG_WORD) == [memory.pk]

    response = teacher.post(
        "/api/v1/memories/",
        {"student": alice.pk, "title": f"Pasted {LONG_WORD} again", "content": "A."},
        format="json",
    )
    assert response.status_code == 400 and "title" in response.json()["error"]["details"], response.content


def test_a_correction_with_a_very_long_word_is_200(clients, school):
    """PATCH with a 1,500-character word in the content stores it whole and re-indexes the memory."""
    alice, teacher = school["alice"], clients["teacher_a"]
    memory = note(alice, "Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    content = f"Now types {LONG_WORD} before every percentage."
    response = teacher.patch(_url(memory), {"content": content}, format="json")
    assert response.status_code == 200, response.content
    memory.refresh_from_db()
    assert memory.content == content
    assert _search(teacher, alice, "percentage") == [memory.pk]
    assert _search(teacher, alice, "denominators") == []
