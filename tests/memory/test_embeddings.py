"""Embeddings: the local model for real, the openai backend over HTTP, the task, the worker,
fallback to lexical recall, model changes and `manage.py reembed`."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from django.core.management import call_command

from llm.models import LLMUsage
from memory.models import AIMemory, MemoryEmbedding
from memory.search import embeddings
from memory.search.recall import recall, vector_cache
from memory.services.edits import memory_update
from memory.services.embedding import memory_embeddings_write
from memory.services.notes import teacher_note_create
from memory.tasks import memory_embed
from tests.conftest import wait_for
from tests.llm_server import EMBEDDING_DIM
from tests.memory.recall_helpers import concurrent_notes, note


def _two_memories(student):
    sport = note(student, "Loves playing football every weekend", "Plays football with friends on Saturdays.")
    maths = note(student, "Struggles with adding unlike fractions", "Mixed up the denominators twice.")
    return sport, maths


def test_local_model_embeds_and_recall_finds_a_paraphrase(school, local_embedder):
    """all-MiniLM-L6-v2 runs in-process: vectors are stored with model and dimension, and a
    query sharing no word with a memory finds it semantically."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    assert memory_embed.run(sport.pk) == 1
    assert memory_embed.run(maths.pk) == 1
    row = MemoryEmbedding.objects.get(memory=sport)
    assert row.model == embeddings.LOCAL_MODEL_NAME
    assert row.dim == 384 and row.vector.shape == (384,) and row.vector.dtype == np.float32
    assert row.sentences == 0 and row.sentence_vectors.size == 0  # one sentence: no per-sentence vectors
    vector = row.vector
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    # Idempotent: the same text with the same model is not embedded again.
    assert memory_embed.run(sport.pk) == 0
    assert recall(student_id=alice.pk, query="soccer", strategy="lexical").ids == []
    result = recall(student_id=alice.pk, query="soccer match", strategy="semantic")
    assert result.mode == "semantic" and result.ids[0] == sport.pk
    hybrid = recall(student_id=alice.pk, query="soccer match")
    assert hybrid.mode == "hybrid" and hybrid.ids[0] == sport.pk


def test_openai_backend_through_the_scripted_server(school, openai_embedder, settings):
    """The openai SDK calls /v1/embeddings through the LLM gateway; vectors are stored with the
    endpoint's model name. Each request is metered like a chat call: an LLMUsage row of purpose
    embedding with the prompt tokens the endpoint reports and their cost, the student's when the
    texts are one student's query."""
    settings.LLM_PRICES = {**settings.LLM_PRICES, "scripted-embed": (Decimal("0.02"), Decimal(0))}
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    assert memory_embed.run(sport.pk) == 1 and memory_embed.run(maths.pk) == 1
    row = MemoryEmbedding.objects.get(memory=maths)
    assert row.model == "openai:scripted-embed" and row.dim == EMBEDDING_DIM
    assert openai_embedder.calls("embeddings")
    writes = list(LLMUsage.objects.filter(purpose=LLMUsage.Purpose.EMBEDDING).order_by("pk"))
    assert len(writes) == 2 and all(u.ok and u.model == "scripted-embed" and u.prompt_tokens >= 1 for u in writes)
    result = recall(student_id=alice.pk, query="denominators twice", strategy="semantic")
    assert result.mode == "semantic" and result.ids[0] == maths.pk
    query = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.EMBEDDING).latest("pk")
    assert (query.student_id, query.ok, query.completion_tokens) == (alice.pk, True, 0)
    assert query.prompt_tokens >= 1 and query.cost == Decimal("0.00000002") * query.prompt_tokens


def test_recall_falls_back_to_lexical_when_the_embedder_fails(school, openai_embedder):
    """An embeddings endpoint answering 500 makes recall lexical, without raising."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)
    memory_embed.run(maths.pk)
    openai_embedder.script("embeddings", {"status": 500})
    result = recall(student_id=alice.pk, query="fractions")
    assert result.mode == "lexical" and "unavailable" in result.degraded
    assert result.ids == [maths.pk]
    failed = LLMUsage.objects.filter(purpose=LLMUsage.Purpose.EMBEDDING).latest("pk")  # metered too
    assert (failed.ok, failed.student_id, failed.prompt_tokens) == (False, alice.pk, 0) and "500" in failed.error


@pytest.mark.sqlite_only
def test_recall_falls_back_to_lexical_when_stored_vectors_do_not_add_up(school, openai_embedder):
    """A vector row whose sentence count does not match its bytes is refused when decoded (no
    misaligned sentences): recall is lexical and says why, without raising."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)
    memory_embed.run(maths.pk)
    row = MemoryEmbedding.objects.get(memory=maths)
    MemoryEmbedding.objects.filter(memory=maths).update(sentences=row.sentences + 1)
    result = recall(student_id=alice.pk, query="fractions")
    assert result.mode == "lexical" and "ValueError" in result.degraded
    assert result.ids == [maths.pk]


def test_a_memory_without_a_vector_is_found_lexically(school, openai_embedder):
    """During a migration or before the task ran, hybrid recall still finds the memory."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)  # maths has no vector
    result = recall(student_id=alice.pk, query="fractions denominators")
    assert result.mode == "hybrid" and result.ids[0] == maths.pk
    assert result.hits[0].semantic_rank is None and result.hits[0].lexical_rank == 1


def test_edit_drops_the_stale_vector_and_the_task_recomputes_it(school, openai_embedder):
    """memory_update deletes the old vector in its transaction; the task stores the new one."""
    alice = school["alice"]
    sport, _ = _two_memories(alice)
    memory_embed.run(sport.pk)
    old_hash = MemoryEmbedding.objects.get(memory=sport).text_hash
    memory_update(user=school["teacher_a"], memory_id=sport.pk, content="Now prefers swimming at the pool.")
    assert not MemoryEmbedding.objects.filter(memory=sport).exists()
    assert memory_embed.run(sport.pk) == 1
    assert MemoryEmbedding.objects.get(memory=sport).text_hash != old_hash


def test_model_change_is_detected_and_reembed_resumes(school, openai_embedder, settings, capsys):
    """Vectors of another model are ignored by recall; `reembed` replaces them, resumably."""
    alice = school["alice"]
    memories = [
        note(alice, f"Practised topic number {i} this week", f"Worked on exercise set {i} carefully.") for i in range(5)
    ]
    for m in memories:
        memory_embed.run(m.pk)
    settings.EMBEDDINGS_MODEL = "scripted-embed-v2"
    assert recall(student_id=alice.pk, query="exercise", strategy="semantic").mode == "semantic"
    assert MemoryEmbedding.objects.filter(model="openai:scripted-embed-v2").count() == 0
    call_command("reembed", "--batch-size", "2", "--limit", "3")
    assert MemoryEmbedding.objects.filter(model="openai:scripted-embed-v2").count() == 3
    call_command("reembed", "--batch-size", "2")
    assert MemoryEmbedding.objects.filter(model="openai:scripted-embed-v2").count() == 5
    assert MemoryEmbedding.objects.filter(model="openai:scripted-embed").count() == 0
    assert "embedded 2 memories" in capsys.readouterr().out


def _same_vectors(cached, loaded):
    """A cache that caught up holds what a whole load reads, row for row."""
    assert cached.version == loaded.version
    assert cached.ids.tolist() == loaded.ids.tolist()
    for name in ("matrix", "created", "sentence_matrix", "sentence_start", "sentence_count"):
        assert np.array_equal(getattr(cached, name), getattr(loaded, name)), name


@pytest.mark.django_db(transaction=True)
def test_vector_cache_catches_up_after_writes_instead_of_reloading(school, openai_embedder):
    """Vectors are decoded once per student; after a new vector, an edit or an archive, the cache
    reads only what changed since its revision, and then holds what a whole load reads."""
    from memory.search.vector_cache import load_vectors
    from memory.services.lifecycle import memory_archive

    alice, teacher = school["alice"], school["teacher_a"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)
    recall(student_id=alice.pk, query="football", strategy="semantic")
    vector_cache.settle()  # PostgreSQL loads them on the cache's thread
    loads, updates = vector_cache.loads, vector_cache.updates
    recall(student_id=alice.pk, query="football again", strategy="semantic")
    assert (vector_cache.loads, vector_cache.updates) == (loads, updates)

    memory_embed.run(maths.pk)  # a new vector
    result = recall(student_id=alice.pk, query="denominators twice", strategy="semantic")
    assert result.ids[0] == maths.pk
    assert (vector_cache.loads, vector_cache.updates) == (loads, updates + 1)

    memory_update(user=teacher, memory_id=sport.pk, content="Plays chess at the club on Saturdays.")
    result = recall(student_id=alice.pk, query="football weekend", strategy="semantic")
    assert sport.pk not in result.ids  # its vector was dropped with the edit; found lexically meanwhile
    memory_embed.run(sport.pk)
    result = recall(student_id=alice.pk, query="chess club", strategy="semantic")
    assert result.ids[0] == sport.pk

    memory_archive(user=teacher, memory_id=maths.pk, reason="duplicate of another note")
    result = recall(student_id=alice.pk, query="denominators", strategy="semantic")
    assert maths.pk not in result.ids
    assert (vector_cache.loads, vector_cache.updates) == (loads, updates + 4)
    model = embeddings.get_embedder().name
    version = vector_cache.version(alice.pk)
    cached = vector_cache.get(alice.pk, model, version=version)
    _same_vectors(cached, load_vectors(student_id=alice.pk, model=model, version=version))


@pytest.mark.django_db(transaction=True)
def test_vector_cache_catch_up_keeps_memory_order_when_an_older_memory_comes_back(school, openai_embedder):
    """An older memory re-embedded after an edit goes back to its place among the rows (ordered by
    id, sentence blocks included), as a whole load would put it."""
    from memory.search.vector_cache import load_vectors

    alice = school["alice"]
    memories = [
        note(alice, f"Topic {i} in the lesson", f"First sentence about topic {i}. Second one, {i} again.")
        for i in range(4)
    ]
    memory_embeddings_write(memory_ids=[m.pk for m in memories])
    model = embeddings.get_embedder().name
    vector_cache.get(alice.pk, model)
    memory_update(user=school["teacher_a"], memory_id=memories[1].pk, content="Only one sentence now.")
    memory_embed.run(memories[1].pk)
    version = vector_cache.version(alice.pk)
    cached = vector_cache.get(alice.pk, model, version=version)
    assert cached.ids.tolist() == [m.pk for m in memories]
    _same_vectors(cached, load_vectors(student_id=alice.pk, model=model, version=version))


@pytest.mark.django_db(transaction=True)
def test_vector_cache_reads_everything_when_most_memories_changed(school, openai_embedder, monkeypatch):
    """Past CATCH_UP_MAX_ROWS changed memories a catch-up is one whole read, with the same rows."""
    from memory.search import vector_cache as recall_module

    alice = school["alice"]
    memories = [note(alice, f"Topic {i} in the lesson", f"About topic {i}. Again {i}.") for i in range(5)]
    memory_embeddings_write(memory_ids=[m.pk for m in memories[:2]])
    model = embeddings.get_embedder().name
    vector_cache.get(alice.pk, model)
    memory_embeddings_write(memory_ids=[m.pk for m in memories[2:]])
    monkeypatch.setattr(recall_module, "CATCH_UP_MAX_ROWS", 2)
    whole_reads = []
    load_vectors = recall_module.load_vectors
    monkeypatch.setattr(recall_module, "load_vectors", lambda **kw: whole_reads.append(kw) or load_vectors(**kw))
    updates = vector_cache.updates
    cached = vector_cache.get(alice.pk, model)
    assert cached.ids.tolist() == [m.pk for m in memories]
    assert vector_cache.updates == updates + 1 and len(whole_reads) == 1
    version = vector_cache.version(alice.pk)
    _same_vectors(cached, load_vectors(student_id=alice.pk, model=model, version=version))


def test_vector_store_appends_in_place_once_per_state():
    """Two catch-ups from the same cached state: the first writes its rows after the last used
    one, the second must copy (None); what the base and the first result see never changes."""
    from memory.search.vector_cache import StudentVectors, _starts, _Store

    rng = np.random.default_rng(0)

    def vectors(version, ids, counts):
        ids, counts = np.array(ids, np.int64), np.array(counts, np.int64)
        return StudentVectors(
            version,
            ids,
            rng.standard_normal((ids.size, 4)).astype(np.float32),
            ids.astype(np.float64),
            rng.standard_normal((int(counts.sum()), 4)).astype(np.float32),
            _starts(counts),
            counts,
        )

    base = _Store.holding(vectors(1, [1, 2, 3], [2, 0, 1]))
    before = (base.ids.copy(), base.matrix.copy(), base.sentence_matrix.copy())
    first_rows, second_rows = vectors(2, [7], [3]), vectors(2, [8, 9], [1, 1])
    first = base.store.append(base, first_rows)
    assert first is not None and first.store is base.store
    assert first.ids.tolist() == [1, 2, 3, 7] and first.sentence_start.tolist() == [0, 2, 2, 3]
    assert np.array_equal(first.sentence_matrix[3:], first_rows.sentence_matrix)
    assert base.store.append(base, second_rows) is None
    assert np.array_equal(base.ids, before[0]) and np.array_equal(base.matrix, before[1])
    assert np.array_equal(base.sentence_matrix, before[2])
    second = first.store.append(first, second_rows)
    assert second is not None and second.ids.tolist() == [1, 2, 3, 7, 8, 9]
    assert first.ids.tolist() == [1, 2, 3, 7] and np.array_equal(first.matrix[3], first_rows.matrix[0])


@pytest.mark.django_db(transaction=True)
def test_one_students_writes_commit_in_revision_order_and_the_cache_misses_none(school, openai_embedder):
    """A write holds the student's revision until it commits: a second writer for the same
    student waits and takes the next one, a reader meanwhile sees the committed revision, and
    the cache, caught up afterwards, holds both memories (no late commit hides behind a newer
    revision, as one could behind a newer `updated_at`)."""
    from memory.search.vector_cache import load_vectors

    alice = school["alice"]
    sport = note(alice, "Loves playing football every weekend", "Plays football with friends on Saturdays.")
    memory_embed.run(sport.pk)
    model = embeddings.get_embedder().name
    before = vector_cache.version(alice.pk)
    vector_cache.get(alice.pk, model)

    def open_write_not_visible() -> None:
        assert vector_cache.version(alice.pk) == before  # the open write is not visible yet

    slow, fast, waited = concurrent_notes(
        alice,
        ("Struggles with adding unlike fractions", "Mixed up the denominators."),
        ("Reads a chapter of a novel each night", "Enjoys detective stories."),
        hold=0.6,
        while_held=open_write_not_visible,
    )
    slow.refresh_from_db()
    fast.refresh_from_db()
    assert (slow.revision, fast.revision) == (before + 1, before + 2)
    assert waited > 0.3  # it waited for the first write to commit
    memory_embeddings_write(memory_ids=[slow.pk, fast.pk])
    updates = vector_cache.updates
    version = vector_cache.version(alice.pk)
    cached = vector_cache.get(alice.pk, model, version=version)
    assert vector_cache.updates == updates + 1
    assert cached.ids.tolist() == sorted([sport.pk, slow.pk, fast.pk])
    _same_vectors(cached, load_vectors(student_id=alice.pk, model=model, version=version))


@pytest.mark.sqlite_only
def test_vector_cache_keeps_nothing_read_inside_a_transaction(school, openai_embedder):
    """Inside a transaction (which may hold its own writes and roll back) the vectors are read
    for the query but not kept: the cache only holds committed rows."""
    alice = school["alice"]
    sport, _ = _two_memories(alice)
    memory_embed.run(sport.pk)
    loads = vector_cache.loads
    for _ in range(2):
        assert recall(student_id=alice.pk, query="football", strategy="semantic").ids[0] == sport.pk
    assert vector_cache.loads == loads + 2


@pytest.mark.django_db(transaction=True)
def test_every_memory_write_takes_the_next_revision(school, openai_embedder):
    """Writes, edits, archives and stored vectors each move the student's revision and stamp
    their rows with it; another student's revision does not move."""
    from memory.models import StudentMemoryRevision
    from memory.services.lifecycle import memory_archive

    alice, bob = school["alice"], school["bob"]
    assert vector_cache.version(alice.pk) == 0
    sport, maths = _two_memories(alice)
    assert [sport.revision, maths.revision] == [1, 2] and vector_cache.version(alice.pk) == 2
    memory_embed.run(sport.pk)
    assert MemoryEmbedding.objects.get(memory=sport).revision == 3
    memory_update(user=school["teacher_a"], memory_id=maths.pk, title="Adds unlike fractions now")
    assert AIMemory.objects.get(pk=maths.pk).revision == 4
    memory_archive(user=school["teacher_a"], memory_id=sport.pk, reason="no longer relevant")
    assert AIMemory.objects.get(pk=sport.pk).revision == 5
    assert vector_cache.version(alice.pk) == 5
    assert not StudentMemoryRevision.objects.filter(student=bob).exists() and vector_cache.version(bob.pk) == 0


@pytest.mark.worker
def test_a_real_worker_embeds_a_new_teacher_note(school, openai_embedder, worker):
    """The embedding is enqueued after commit and computed by a Celery worker, not the request."""
    memory = teacher_note_create(
        teacher=school["teacher_a"],
        student_id=school["alice"].pk,
        title="Needs extra time on reading tasks",
        content="Reads slowly. Benefits from audio books.",
    )
    row = wait_for(lambda: MemoryEmbedding.objects.filter(memory_id=memory.pk).first())
    assert row.model == "openai:scripted-embed" and row.sentences == 2
