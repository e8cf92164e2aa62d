"""A user changes their language; a student's memories are re-indexed in it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import User
from memory.search.backend import search_backend
from memory.services.lifecycle import memory_archive, student_memories_reindex
from tests.conftest import Worker, wait_for
from tests.memory.recall_helpers import note

SONG = ("Sang a song with the class today", "Elle chantait une chanson en classe avec ses amis.")


def _search(student: User, query: str) -> list[int]:
    student.refresh_from_db()
    return [
        pk
        for pk, _ in search_backend().lexical(student_id=student.pk, query=query, language=student.language, limit=10)
    ]


def test_me_patch_sets_the_language_and_refuses_anything_else(
    clients: dict[str, APIClient], school: dict[str, Any], django_capture_on_commit_callbacks: Any
):
    with django_capture_on_commit_callbacks() as enqueued:
        resp = clients["alice"].patch("/api/v1/me/", {"language": "fr"}, format="json")
    assert resp.status_code == 200, resp.content
    assert resp.json()["language"] == "fr"
    assert len(enqueued) == 1  # the re-index, after commit
    with django_capture_on_commit_callbacks() as enqueued:
        same = clients["alice"].patch("/api/v1/me/", {"language": "fr"}, format="json")
        teacher = clients["teacher_a"].patch("/api/v1/me/", {"language": "fr"}, format="json")
    assert same.status_code == teacher.status_code == 200
    assert enqueued == []  # same language: nothing to do; a teacher has no memories to re-index
    assert clients["alice"].get("/api/v1/me/").json()["language"] == "fr"

    bad = clients["alice"].patch("/api/v1/me/", {"language": "de"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid"
    assert "language" in bad.json()["error"]["details"]
    # Only the language is editable here: a role in the body is not a way to become a teacher.
    escalate = clients["alice"].patch("/api/v1/me/", {"role": "teacher"}, format="json")
    assert escalate.status_code == 400
    school["alice"].refresh_from_db()
    assert (school["alice"].role, school["alice"].language) == (User.Role.STUDENT, "fr")
    assert APIClient().patch("/api/v1/me/", {"language": "en"}, format="json").status_code in (401, 403)


def test_reindex_follows_the_language_and_skips_archived_memories(school: dict[str, Any]):
    """Written while the student was English, a French word form only matches after the
    re-index in French; an archived memory stays out of the index; running it again is harmless."""
    alice = school["alice"]
    song = note(alice, *SONG)
    archived = note(alice, "Chantait aussi en musique", "Elle chantait en cours de musique.")
    memory_archive(user=school["teacher_a"], memory_id=archived.pk, reason="Duplicate of another note")
    User.objects.filter(pk=alice.pk).update(language="fr")
    assert _search(alice, "chanter") == []  # the index still holds the English analysis

    assert student_memories_reindex(student_id=alice.pk, batch_size=1) == 1
    assert _search(alice, "chanter") == [song.pk]
    assert search_backend().indexed_ids(alice.pk) == {song.pk}
    assert student_memories_reindex(student_id=alice.pk) == 1
    assert _search(alice, "chanter") == [song.pk]
    # Another student's index is not touched.
    theirs = note(school["bob"], *SONG)
    assert _search(school["bob"], "chantait") == [theirs.pk]


def test_reindex_command(school: dict[str, Any], capsys: pytest.CaptureFixture[str]):
    alice = school["alice"]
    song = note(alice, *SONG)
    User.objects.filter(pk=alice.pk).update(language="fr")
    call_command("reindex", "--student", str(alice.pk))
    assert "1 memories re-indexed for 1 students" in capsys.readouterr().out
    assert _search(alice, "chanter") == [song.pk]
    with pytest.raises(Exception, match="no student with id"):
        call_command("reindex", "--student", str(school["teacher_a"].pk))


@pytest.mark.worker
def test_language_change_reindexes_through_the_worker(
    worker: Worker, clients: dict[str, APIClient], school: dict[str, Any]
):
    """PATCH /me answers at once; the worker re-indexes the student's memories in French."""
    alice = school["alice"]
    song = note(alice, *SONG)
    resp = clients["alice"].patch("/api/v1/me/", {"language": "fr"}, format="json")
    assert resp.status_code == 200
    worker.wait_for_log("re-indexed 1 memories", timeout=30)
    wait_for(lambda: _search(alice, "chanter") == [song.pk], timeout=30)
