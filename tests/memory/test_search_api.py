"""GET /api/v1/memories/?q=: hybrid search of one student's memories, scoped like the rest."""

from __future__ import annotations

from tests.memory.recall_helpers import note

URL = "/api/v1/memories/"


def _ids(response):
    return [m["id"] for m in response.json()["results"]]


def test_student_searches_own_memories(clients, school):
    """A student's ?q= returns their matching memories, best first, and never another's."""
    fractions = note(school["alice"], "Struggles with adding fractions today", "Unlike denominators again.")
    note(school["alice"], "Enjoys geometry and drawing shapes", "Drew triangles with care.")
    note(school["bob"], "Struggles with adding fractions today", "Unlike denominators again.")
    response = clients["alice"].get(URL, {"q": "fractions denominators"})
    assert response.status_code == 200
    assert _ids(response) == [fractions.pk]


def test_teacher_searches_a_student_of_their_class(clients, school):
    """The teacher of the student's class may search that student's memories."""
    memory = note(school["alice"], "Struggles with adding fractions today", "Unlike denominators again.")
    response = clients["teacher_a"].get(URL, {"q": "fractions", "student": school["alice"].pk})
    assert response.status_code == 200
    assert _ids(response) == [memory.pk]


def test_search_outside_scope_is_404(clients, school):
    """Another class's teacher, or another student, gets 404 for the student."""
    note(school["alice"], "Struggles with adding fractions today", "Unlike denominators again.")
    assert clients["teacher_b"].get(URL, {"q": "fractions", "student": school["alice"].pk}).status_code == 404
    assert clients["bob"].get(URL, {"q": "fractions", "student": school["alice"].pk}).status_code == 404
    # Not an id at all: the filter is invalid.
    assert clients["alice"].get(URL, {"q": "fractions", "student": "nope"}).status_code == 400


def test_teacher_must_name_the_student(clients, school):
    """A teacher's ?q= without ?student= is a 400 with the error envelope."""
    response = clients["teacher_a"].get(URL, {"q": "fractions"})
    assert response.status_code == 400
    assert "student" in response.json()["error"]["message"]
