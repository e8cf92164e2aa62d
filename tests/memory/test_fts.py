"""Full-text search of memories: analysis, and the index kept in sync on write, edit, archive."""

from __future__ import annotations

import math
import random
import string

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from conversations.models import Conversation
from core.errors import Forbidden, NotFound
from memory.models import AIMemory
from memory.search import fts, postings
from memory.search.backend import search_backend
from memory.search.recall import recall
from memory.services.edits import memory_update
from memory.services.lifecycle import memory_archive
from memory.services.notes import teacher_note_create
from memory.services.records import memory_summary_store
from tests.memory.recall_helpers import concurrent_notes, note


def student_stats(student_id: int) -> tuple[int, int, dict[str, int]]:
    """The stored (document count, total length, {term: df}) of a student (PostgreSQL's tables)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT n_docs, total_len FROM memory_student_stats WHERE student_id = %s", [student_id])
        row = cursor.fetchone()
        cursor.execute("SELECT term, df FROM memory_term_stats WHERE student_id = %s", [student_id])
        dfs = {str(term): int(df) for term, df in cursor.fetchall()}
    n_docs, total_len = (int(row[0]), int(row[1])) if row else (0, 0)
    return n_docs, total_len, dfs


def test_analysis_stems_and_folds_accents_in_french_and_english():
    """French words match across accents and inflections; English words across inflections."""
    assert fts.analyse("Les élèves et les dénominateurs", "fr") == fts.analyse("eleve denominateur", "fr")
    assert fts.analyse("fractions", "en") == fts.analyse("fraction", "en")
    assert fts.analyse("the and of", "en") == []


def test_analysis_cuts_terms_longer_than_the_index_allows():
    """No term is longer than MAX_TERM_CHARS, whatever the word: letters, digits, or a word that
    folding lengthens ('ﬃ' -> 'ffi'). A long word is cut, not dropped, the same way in a memory
    and in a query, so it still finds itself; the words around it are analysed as usual."""
    bound = fts.MAX_TERM_CHARS
    letters = "".join(random.Random(1).choices(string.ascii_lowercase, k=5000))
    digits = "".join(random.Random(2).choices(string.digits, k=5000))
    terms = fts.analyse(f"Fractions {letters} {digits} {'ﬃ' * 90} denominators", "en")
    assert terms[0] == "fraction" and terms[-1] == "denomin"
    assert len(terms) == 5 and all(len(term) <= bound for term in terms)
    assert terms[1:4] == [letters[:bound], digits[:bound], ("ffi" * 90)[:bound]]
    assert fts.query_terms(letters, "en") == [letters[:bound]]
    # Real words are far shorter and untouched.
    assert fts.analyse("pneumonoultramicroscopicsilicovolcanoconiosis", "en") == [
        "pneumonoultramicroscopicsilicovolcanoconiosi"
    ]


def _search(student, query):
    return [
        pk
        for pk, _ in search_backend().lexical(student_id=student.pk, query=query, language=student.language, limit=50)
    ]


def test_a_saved_memory_is_searchable_at_once(school):
    """memory_note_save indexes in its own transaction: lexical search finds it."""
    alice = school["alice"]
    memory = note(alice, "Struggles with adding fractions today", "Mixed up unlike denominators twice.")
    other = note(alice, "Enjoys geometry and drawing shapes", "Drew triangles with care.")
    assert _search(alice, "denominator") == [memory.pk]
    assert search_backend().indexed_ids(alice.pk) == {memory.pk, other.pk}
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
    memory_update(user=school["teacher_a"], memory_id=memory.pk, content="Now confident with percentages and ratios.")
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
    assert search_backend().indexed_ids(alice.pk) == set()
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
        teacher=school["teacher_a"],
        student_id=school["alice"].pk,
        title="Needs extra time on reading tasks",
        content="Dyslexia support plan in place.",
    )
    assert _search(school["alice"], "dyslexia") == [memory.pk]


def test_a_very_long_word_is_indexed_by_every_write(school):
    """A save_memory note, an edit and a conversation summary with a 1,500-character word of
    two-byte letters (3,000 bytes: more than a PostgreSQL index entry holds, within
    CONTENT_MAX_CHARS) are stored whole and indexed, with statistics exact, and found by their
    other words."""
    alice = school["alice"]
    blob = "".join(random.Random(3).choices("αβγδεζηθικλμνξοπρστυφχψω", k=1500))
    tool_note = note(alice, "Pasted a long code into chat", f"The student pasted {blob} during fractions.")
    conversation = Conversation.objects.create(student=alice, subject="", last_activity_at=timezone.now())
    summary, created = memory_summary_store(
        student_id=alice.pk,
        conversation_id=conversation.pk,
        title="Geometry session with a pasted code",
        content=f"The student drew triangles. Then pasted {blob} by mistake.",
    )
    assert created and summary.content.endswith(f"{blob} by mistake.")
    assert AIMemory.objects.get(pk=tool_note.pk).content == f"The student pasted {blob} during fractions."
    _assert_index_consistent(alice)
    assert _search(alice, "fractions") == [tool_note.pk]
    assert _search(alice, "triangles") == [summary.pk]

    memory_update(user=school["teacher_a"], memory_id=tool_note.pk, content=f"Pasted {blob[::-1]} into percentages.")
    _assert_index_consistent(alice)
    assert _search(alice, "percentages") == [tool_note.pk]


# --- The index's consistency (PostgreSQL postings and statistics, SQLite FTS5) -------------------


def _expected_stats(student) -> tuple[int, int, dict[str, int]]:
    """(documents, total length, {term: df}) recomputed from the student's active memories."""
    n_docs, total, dfs = 0, 0, dict[str, int]()
    for memory in AIMemory.objects.active().filter(student=student):
        terms = fts.analyse(fts.memory_text(memory.title, memory.content), student.language)
        n_docs += 1
        total += len(terms)
        for term in set(terms):
            dfs[term] = dfs.get(term, 0) + 1
    return n_docs, total, dfs


def _assert_index_consistent(*students) -> None:
    """The index holds exactly the active memories; on PostgreSQL the stored statistics and the
    postings agree with a recomputation from the memories' text."""
    for student in students:
        active = set(AIMemory.objects.active().filter(student=student).values_list("pk", flat=True))
        assert search_backend().indexed_ids(student.pk) == active
        # Document frequencies (the recall's topic text) agree on both databases; a term no
        # memory holds counts 0.
        n_docs, _, dfs = _expected_stats(student)
        terms = [*sorted(dfs), "zzzunknown"]
        assert search_backend().document_frequencies(student_id=student.pk, terms=terms) == (
            n_docs,
            {term: dfs.get(term, 0) for term in terms},
        )
        if connection.vendor != "postgresql":
            continue
        assert student_stats(student.pk) == _expected_stats(student)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT term, count(*), sum(tf) FROM memory_posting WHERE student_id = %s GROUP BY term",
                [student.pk],
            )
            stored = {term: (n, tf) for term, n, tf in cursor.fetchall()}
        expected_tf: dict[str, int] = {}
        for memory in AIMemory.objects.active().filter(student=student):
            for term in fts.analyse(fts.memory_text(memory.title, memory.content), student.language):
                expected_tf[term] = expected_tf.get(term, 0) + 1
        assert stored == {t: (df, expected_tf[t]) for t, df in _expected_stats(student)[2].items()}


def test_index_and_statistics_follow_write_edit_and_archive(school):
    """Write, edit and archive keep the postings and the per-student statistics exact."""
    alice = school["alice"]
    first = note(alice, "Struggles with adding fractions today", "Mixed up unlike denominators twice, fractions.")
    second = note(alice, "Enjoys geometry and drawing shapes", "Drew triangles and fractions of circles.")
    _assert_index_consistent(alice)
    if connection.vendor == "postgresql":
        n_docs, _, dfs = student_stats(alice.pk)
        assert n_docs == 2 and dfs["fraction"] == 2 and dfs["denomin"] == 1

    memory_update(user=school["teacher_a"], memory_id=first.pk, content="Now confident with percentages.")
    _assert_index_consistent(alice)
    assert _search(alice, "denominators") == []

    memory_archive(user=school["teacher_a"], memory_id=second.pk, reason="Outdated")
    _assert_index_consistent(alice)
    assert _search(alice, "triangles") == []

    # Stats after the last memory leaves: nothing left for the student.
    memory_archive(user=school["teacher_a"], memory_id=first.pk, reason="Outdated")
    _assert_index_consistent(alice)
    if connection.vendor == "postgresql":
        assert student_stats(alice.pk) == (0, 0, {})
    assert _search(alice, "fractions percentages") == []


def test_two_students_statistics_are_isolated(school):
    """One student's memories never change another's statistics or results."""
    alice, bob = school["alice"], school["bob"]
    mine = note(alice, "Practised long division this week", "Long division with remainders.")
    theirs = [
        note(bob, f"Division practice number {i} today", "Long division with remainders again.") for i in range(3)
    ]
    _assert_index_consistent(alice, bob)
    if connection.vendor == "postgresql":
        assert student_stats(alice.pk)[2]["divis"] == 1
        assert student_stats(bob.pk)[2]["divis"] == 3
    before = search_backend().lexical(student_id=alice.pk, query="division", language="en", limit=10)
    memory_archive(user=school["teacher_a"], memory_id=theirs[0].pk, reason="Outdated")
    _assert_index_consistent(alice, bob)
    after = search_backend().lexical(student_id=alice.pk, query="division", language="en", limit=10)
    assert [pk for pk, _ in after] == [pk for pk, _ in before] == [mine.pk]
    if connection.vendor == "postgresql":
        # Per-student statistics: the score itself does not move. (SQLite's FTS5 table has
        # table-wide statistics, so there the score shifts slightly with other students' data.)
        assert after == before


@pytest.mark.django_db(transaction=True)
def test_deleting_a_memory_or_a_student_leaves_nothing_in_the_index(school):
    """The index's rows go with their memory and their student, with no code of their own: on
    PostgreSQL they cascade (foreign keys), on SQLite a trigger removes the FTS5 entry. The
    statistics a deleted memory leaves behind are counted again by the re-index."""
    from memory.services.lifecycle import student_memories_reindex

    alice, bob = school["alice"], school["bob"]
    kept = note(alice, "Reading comprehension is improving", "Reads chapter books alone.")
    gone = note(alice, "Reading aloud needs practice", "Stumbles on long words when reading.")
    note(bob, "Reading club on Fridays", "Bob reads comics.")
    AIMemory.objects.filter(pk=gone.pk).delete()
    assert search_backend().indexed_ids(alice.pk) == {kept.pk}
    assert _search(alice, "reading") == [kept.pk]
    student_memories_reindex(student_id=alice.pk)
    _assert_index_consistent(alice, bob)

    AIMemory.objects.filter(student=bob).delete()
    student_memories_reindex(student_id=bob.pk)
    assert search_backend().indexed_ids(bob.pk) == set()
    if connection.vendor == "postgresql":
        from django.db.models import CASCADE

        from memory.models import IndexedMemory, Posting, StudentStatistic, TermStatistic

        for model in (IndexedMemory, Posting, TermStatistic, StudentStatistic):
            assert not model.objects.filter(student_id=bob.pk).exists(), model.__name__
            assert model._meta.get_field("student").remote_field.on_delete is CASCADE
    _assert_index_consistent(alice)


def _reference_bm25(student, query: str) -> list[tuple[int, float]]:
    """Okapi BM25 (k1 1.2, b 0.75) over the student's active memories, in Python."""
    docs = {
        m.pk: fts.analyse(fts.memory_text(m.title, m.content), student.language)
        for m in AIMemory.objects.active().filter(student=student)
    }
    n = len(docs)
    avgdl = max(sum(len(t) for t in docs.values()) / n, 1.0)
    terms = list(dict.fromkeys(fts.analyse(query, student.language)))
    df = {t: sum(1 for d in docs.values() if t in d) for t in terms}
    scores = {}
    for pk, doc in docs.items():
        score = 0.0
        for t in terms:
            tf = doc.count(t)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(doc) / avgdl))
        if score > 0:
            scores[pk] = score
    return sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))


@pytest.mark.parametrize("prune", ["default", "aggressive"])
def test_bm25_top_is_exact_with_common_and_rare_words(school, monkeypatch, prune):
    """The pruned PostgreSQL query returns exactly the BM25 top (ids and scores) whether the
    query's words are rare, common or both, whether the pruning proves its top or falls back;
    SQLite's FTS5 agrees on the best memory."""
    if prune == "aggressive":
        # Scan only the rarest terms: exercises both the proven top and the fallback.
        monkeypatch.setattr(postings, "PRUNE_COVER", 0)
        monkeypatch.setattr(postings, "PRUNE_THRESHOLD", 1e9)
    postings.search_paths.clear()
    alice = school["alice"]
    topics = ["fractions", "geometry", "reading", "spelling", "division", "algebra"]
    for i in range(36):
        topic = topics[i % len(topics)]
        extra = " practice" * (i % 4)
        note(alice, f"Lesson {i} on {topic}", f"The student worked on {topic} homework{extra}. Session {i}.")
    note(alice, "Dyslexia support plan in place", "Needs extra time; reading homework with a ruler.")
    for query in [
        "dyslexia homework",
        "homework practice",
        "reading ruler homework student",
        "algebra practice session",
        "student homework",
        "zebra",
    ]:
        expected = _reference_bm25(alice, query)[:5]
        found = search_backend().lexical(student_id=alice.pk, query=query, language="en", limit=5)
        if connection.vendor == "postgresql":
            assert [pk for pk, _ in found] == [pk for pk, _ in expected], query
            assert [round(s, 9) for _, s in found] == [round(s, 9) for _, s in expected], query
        elif query.startswith(("dyslexia", "reading ruler")):
            # FTS5 floors the idf of words in most rows, so only a rare word's top is comparable.
            assert found and found[0][0] == expected[0][0], query
        elif not expected:
            assert found == []
    if connection.vendor == "postgresql" and prune == "aggressive":
        assert postings.search_paths["pruned"] >= 2 and postings.search_paths["fallback"] >= 1, postings.search_paths


@pytest.mark.postgresql_only
def test_one_scanned_term_skips_the_grouping_with_the_same_rows(school, monkeypatch):
    """With one term to scan (a one-word query, or one rare word and common ones left to key
    lookups) the statement has no GROUP BY; its rows are exactly the grouped statement's."""
    alice = school["alice"]
    for i in range(30):
        extra = " practice" * (i % 3) + (" dyslexia" if i % 7 == 0 else "")
        note(alice, f"Lesson {i} on fractions", f"The student worked on homework{extra}. Session {i}.")
    queries = ["dyslexia", "homework", "dyslexia homework practice", "dyslexia practice session", "zebra dyslexia"]

    def searches() -> list[list[tuple[int, float]]]:
        return [
            search_backend().lexical(student_id=alice.pk, query=q, language="en", limit=limit)
            for q in queries
            for limit in (3, 10)
        ]

    monkeypatch.setattr(postings, "PRUNE_COVER", 0)  # the rarest term alone is scanned
    postings.search_paths.clear()
    ungrouped = searches()
    assert postings.search_paths["pruned"] >= 1 and postings.search_paths["full"] >= 1, postings.search_paths
    monkeypatch.setattr(postings, "_PG_BM25_ONE", postings._PG_BM25_ALL)
    monkeypatch.setattr(postings, "_PG_BM25_PRUNED_ONE", postings._PG_BM25_PRUNED)
    assert searches() == ungrouped
    assert any(ungrouped)


@pytest.mark.django_db(transaction=True)
def test_two_memories_written_at_once_keep_statistics_consistent(school):
    """Two writers for one student at the same time: both indexed, statistics add up."""
    alice = school["alice"]
    concurrent_notes(
        alice,
        ("Fractions with unlike denominators", "Practised fractions with a number line."),
        ("Fractions and decimals compared today", "Converted fractions to decimals correctly."),
        hold=0.5,
    )
    assert AIMemory.objects.filter(student=alice).count() == 2
    _assert_index_consistent(alice)
    if connection.vendor == "postgresql":
        assert student_stats(alice.pk)[2]["fraction"] == 2
    assert len(_search(alice, "fractions")) == 2


def test_long_query_keeps_its_most_selective_terms_on_postgresql(school, monkeypatch):
    """A long message searches with its MAX_QUERY_TERMS rarest terms on PostgreSQL (the
    common ones cost the most postings and weigh the least); FTS5 searches with all of them."""
    alice = school["alice"]
    for i in range(12):
        note(alice, f"Homework session number {i} today", f"The student did homework practice {i}.")
    note(alice, "Dyslexia support plan in place", "Reading homework with a ruler and extra time.")
    query = "homework practice student dyslexia ruler"
    full = search_backend().lexical(student_id=alice.pk, query=query, language="en", limit=20)
    monkeypatch.setattr(postings, "MAX_QUERY_TERMS", 2)
    capped = search_backend().lexical(student_id=alice.pk, query=query, language="en", limit=20)
    if connection.vendor == "postgresql":
        # dyslexia and ruler are the two rarest: only the memory holding them matches.
        reference = _reference_bm25(alice, "dyslexia ruler")
        assert [pk for pk, _ in capped] == [pk for pk, _ in reference]
        assert len(capped) == 1 and len(full) == 13
    else:
        assert capped == full
