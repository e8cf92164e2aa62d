"""Full-text search of memories: analysis, and the index kept in sync on write, edit, archive."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from memory import fts
from memory.models import AIMemory
from memory.recall import recall
from memory.services import memory_archive, memory_update, teacher_note_create
from tests.memory.recall_helpers import note
from tutor.errors import Forbidden, NotFound


def test_analysis_stems_and_folds_accents_in_french_and_english():
    """French words match across accents and inflections; English words across inflections."""
    assert fts.analyse("Les élèves et les dénominateurs", "fr") == fts.analyse("eleve denominateur", "fr")
    assert fts.analyse("fractions", "en") == fts.analyse("fraction", "en")
    assert fts.analyse("the and of", "en") == []


def _search(student, query):
    return [pk for pk, _ in fts.search(student_id=student.pk, query=query, language=student.language, limit=50)]


def test_a_saved_memory_is_searchable_at_once(school):
    """memory_note_save indexes in its own transaction: lexical search finds it."""
    alice = school["alice"]
    memory = note(alice, "Struggles with adding fractions today", "Mixed up unlike denominators twice.")
    other = note(alice, "Enjoys geometry and drawing shapes", "Drew triangles with care.")
    assert _search(alice, "denominator") == [memory.pk]
    assert fts.indexed_ids(alice.pk) == {memory.pk, other.pk}
    assert recall(student_id=alice.pk, query="fractions", strategy="lexical").ids == [memory.pk]


def test_search_is_scoped_to_the_student(school):
    """The same words in another student's memory are never returned."""
    alice, bob = school["alice"], school["bob"]
    mine = note(alice, "Practised long division this week", "Long division with remainders.")
    note(bob, "Practised long division this week", "Long division with remainders.")
    assert _search(alice, "division remainders") == [mine.pk]


def test_french_student_finds_memories_without_accents(school):
    """A French student's memory is found whatever the accents and inflections of the query."""
    alice = school["alice"]
    alice.language = "fr"
    alice.save(update_fields=["language"])
    memory = note(alice, "Difficultés avec les fractions décimales", "L'élève confond les dénominateurs.")
    assert _search(alice, "denominateur eleves") == [memory.pk]
    assert _search(alice, "DÉCIMALE") == [memory.pk]


def test_edit_reindexes_the_memory(school):
    """After memory_update the old words no longer match and the new ones do."""
    alice = school["alice"]
    memory = note(alice, "Struggles with adding fractions today", "Mixed up unlike denominators twice.")
    memory_update(
        user=school["teacher_a"], memory_id=memory.pk, content="Now confident with percentages and ratios."
    )
    assert _search(alice, "denominators") == []
    assert _search(alice, "percentages") == [memory.pk]
    memory.refresh_from_db()
    assert memory.content == "Now confident with percentages and ratios."


def test_archive_removes_from_the_index_and_keeps_the_row(school):
    """memory_archive keeps the memory with its reason, and search stops finding it."""
    alice = school["alice"]
    memory = note(alice, "Struggles with adding fractions today", "Mixed up unlike denominators twice.")
    archived = memory_archive(user=school["teacher_a"], memory_id=memory.pk, reason="Outdated after review")
    assert archived.status == AIMemory.Status.ARCHIVED
    assert AIMemory.objects.get(pk=memory.pk).archived_reason == "Outdated after review"
    assert _search(alice, "fractions") == []
    assert fts.indexed_ids(alice.pk) == set()
    assert recall(student_id=alice.pk, query="fractions").ids == []
    # Idempotent, and an archived memory cannot be edited.
    memory_archive(user=school["teacher_a"], memory_id=memory.pk, reason="again")
    with pytest.raises(Exception, match="archived"):
        memory_update(user=school["teacher_a"], memory_id=memory.pk, content="Something else entirely here.")


def test_edit_and_archive_are_scoped(school):
    """Another class's teacher gets 404; a student cannot edit; archiving needs a reason."""
    memory = note(school["alice"], "Struggles with adding fractions today", "Mixed up unlike denominators.")
    with pytest.raises(NotFound):
        memory_archive(user=school["teacher_b"], memory_id=memory.pk, reason="x")
    with pytest.raises(Forbidden):
        memory_update(user=school["alice"], memory_id=memory.pk, content="Changed by the student.")
    with pytest.raises(ValidationError):
        memory_archive(user=school["teacher_a"], memory_id=memory.pk, reason="  ")


def test_teacher_note_is_indexed(school):
    """teacher_note_create indexes the note too."""
    memory = teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk,
        title="Needs extra time on reading tasks", content="Dyslexia support plan in place.",
    )
    assert _search(school["alice"], "dyslexia") == [memory.pk]
