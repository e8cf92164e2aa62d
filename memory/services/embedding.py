"""The vectors recall uses: a memory's whole text and its sentences, embedded outside any
transaction and stored if the text is still the one embedded."""

from __future__ import annotations

from django.db import transaction

from memory.models import AIMemory, MemoryEmbedding
from memory.search import embeddings, fts
from memory.services.writing import student_revision_next


def memory_embeddings_write(*, memory_ids: list[int], embedder: embeddings.Embedder | None = None) -> int:
    """Embed these memories with the configured embedder and store the vectors. Returns how many.

    Idempotent: an active memory whose stored vector was made by the same model from the same
    text is skipped, and archived memories are never embedded. The text is embedded outside any
    transaction; the vector is stored only if the memory's text is still the one embedded (an
    edit in between enqueues its own embedding). Raises EmbedderUnavailable.
    """
    embedder = embedder or embeddings.get_embedder()
    if embedder is None:
        return 0
    memories = list(AIMemory.objects.active().filter(pk__in=memory_ids).only("pk", "student_id", "title", "content"))
    current = dict(
        MemoryEmbedding.objects.filter(memory_id__in=[m.pk for m in memories], model=embedder.name).values_list(
            "memory_id", "text_hash"
        )
    )
    todo = []
    texts: list[str] = []
    for memory in memories:
        text = fts.memory_text(memory.title, memory.content)
        digest = embeddings.text_hash(text)
        if current.get(memory.pk) != digest:
            parts = embeddings.sentences(memory.content)
            todo.append((memory, digest, len(texts), len(parts)))
            texts += [text, *parts]
    if not todo:
        return 0
    matrix = embedder.embed(texts)
    with transaction.atomic():
        still = {
            m.pk: embeddings.text_hash(fts.memory_text(m.title, m.content))
            for m in AIMemory.objects.select_for_update()
            .active()
            .filter(pk__in=[m.pk for m, *_ in todo])
            .only("pk", "title", "content")
        }
        todo = [item for item in todo if still.get(item[0].pk) == item[1]]
        # One revision per student written, taken in student order (the counters' locks too).
        students = sorted({memory.student_id for memory, *_ in todo})
        revisions = {student_id: student_revision_next(student_id) for student_id in students}
        for memory, digest, row, count in todo:
            vector = matrix[row]
            MemoryEmbedding.objects.update_or_create(
                memory_id=memory.pk,
                defaults={
                    "student_id": memory.student_id,
                    "model": embedder.name,
                    "dim": int(vector.shape[0]),
                    "vector": vector,
                    "sentences": count,
                    "sentence_vectors": matrix[row + 1 : row + 1 + count],
                    "text_hash": digest,
                    "revision": revisions[memory.student_id],
                },
            )
    return len(todo)
