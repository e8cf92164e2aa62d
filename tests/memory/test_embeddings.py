"""Embeddings: the local model for real, the openai backend over HTTP, the task, the worker,
fallback to lexical recall, model changes and `manage.py reembed`."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import call_command

from memory import embeddings
from memory.models import MemoryEmbedding
from memory.recall import recall, vector_cache
from memory.services import memory_update, teacher_note_create
from memory.tasks import memory_embed
from tests.conftest import wait_for
from tests.llm_server import EMBEDDING_DIM
from tests.memory.recall_helpers import note


@pytest.fixture(autouse=True)
def _fresh_cache():
    vector_cache.clear()
    yield
    vector_cache.clear()


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
    assert row.dim == 384 and len(bytes(row.vector)) == 384 * 4
    assert row.sentences == 0  # one sentence: no per-sentence vectors
    vector = embeddings.from_bytes(row.vector, row.dim)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    # Idempotent: the same text with the same model is not embedded again.
    assert memory_embed.run(sport.pk) == 0
    assert recall(student_id=alice.pk, query="soccer", strategy="lexical").ids == []
    result = recall(student_id=alice.pk, query="soccer match", strategy="semantic")
    assert result.mode == "semantic" and result.ids[0] == sport.pk
    hybrid = recall(student_id=alice.pk, query="soccer match")
    assert hybrid.mode == "hybrid" and hybrid.ids[0] == sport.pk


def test_openai_backend_through_the_scripted_server(school, openai_embedder):
    """The openai SDK calls /v1/embeddings; vectors are stored with the endpoint's model name."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    assert memory_embed.run(sport.pk) == 1 and memory_embed.run(maths.pk) == 1
    row = MemoryEmbedding.objects.get(memory=maths)
    assert row.model == "openai:scripted-embed" and row.dim == EMBEDDING_DIM
    assert openai_embedder.calls("embeddings")
    result = recall(student_id=alice.pk, query="denominators twice", strategy="semantic")
    assert result.mode == "semantic" and result.ids[0] == maths.pk


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
        note(alice, f"Practised topic number {i} this week", f"Worked on exercise set {i} carefully.")
        for i in range(5)
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


def test_vector_cache_is_invalidated_when_embeddings_change(school, openai_embedder):
    """Vectors are decoded once per student, and reloaded after a new vector is stored."""
    alice = school["alice"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)
    recall(student_id=alice.pk, query="football", strategy="semantic")
    loads = vector_cache.loads
    recall(student_id=alice.pk, query="football again", strategy="semantic")
    assert vector_cache.loads == loads
    memory_embed.run(maths.pk)
    result = recall(student_id=alice.pk, query="denominators twice", strategy="semantic")
    assert vector_cache.loads == loads + 1 and result.ids[0] == maths.pk


def test_vector_cache_is_invalidated_when_a_memory_is_archived(school, openai_embedder):
    """Archiving drops a vector without writing one: the cache still reloads and forgets it."""
    from memory.services import memory_archive

    alice = school["alice"]
    sport, maths = _two_memories(alice)
    memory_embed.run(sport.pk)
    memory_embed.run(maths.pk)
    assert maths.pk in recall(student_id=alice.pk, query="denominators", strategy="semantic").ids
    loads = vector_cache.loads
    memory_archive(user=school["teacher_a"], memory_id=maths.pk, reason="duplicate of another note")
    result = recall(student_id=alice.pk, query="denominators", strategy="semantic")
    assert vector_cache.loads == loads + 1
    assert maths.pk not in result.ids


@pytest.mark.worker
def test_a_real_worker_embeds_a_new_teacher_note(school, openai_embedder, worker):
    """The embedding is enqueued after commit and computed by a Celery worker, not the request."""
    memory = teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk,
        title="Needs extra time on reading tasks", content="Reads slowly. Benefits from audio books.",
    )
    row = wait_for(lambda: MemoryEmbedding.objects.filter(memory_id=memory.pk).first())
    assert row.model == "openai:scripted-embed" and row.sentences == 2
