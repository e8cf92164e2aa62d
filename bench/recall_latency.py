"""Recall latency for one student with 1,000 / 10,000 / 100,000 memories.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tutor_recall_bench \\
        .venv/bin/python bench/recall_latency.py [--sizes 1000,10000,100000] [--queries 200]

Memories are synthetic ~100-word texts (6 sentences) drawn from a Zipf vocabulary, indexed through
`memory.fts` like real ones; their vectors are random unit vectors of MiniLM's size (384) with
one vector per sentence, stored as MemoryEmbedding rows (latency does not depend on what the
vectors mean, and embedding 100,000 texts on a CPU would take hours). Each size is measured
with the per-process vector cache warm (the normal case) and cold (vectors re-read and decoded
on every query), and the query embedding of the local model is measured apart.
Everything is written for a throwaway student and deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

import django
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import User  # noqa: E402
from memory import embeddings, fts, recall  # noqa: E402
from memory.models import AIMemory, MemoryEmbedding  # noqa: E402

MODEL = "bench:random-384"
DIM = 384


def vocabulary(rng: random.Random, size: int = 8000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def sampler(rng: random.Random, words: list[str]):
    weights = [1 / (i + 1) for i in range(len(words))]
    cum = list(np.cumsum(weights) / sum(weights))

    def draw(n: int) -> list[str]:
        return [words[min(int(np.searchsorted(cum, rng.random())), len(words) - 1)] for _ in range(n)]

    return draw


def populate(student: User, n: int, draw, rng: np.random.Generator) -> None:
    now = timezone.now()
    batch = 2000
    for start in range(0, n, batch):
        count = min(batch, n - start)
        memories = AIMemory.objects.bulk_create(
            [
                AIMemory(
                    student=student,
                    kind=AIMemory.Kind.NOTE,
                    source=AIMemory.Source.SAVE_MEMORY_TOOL,
                    title=" ".join(draw(6)),
                    content=" ".join(" ".join(draw(16)) + "." for _ in range(6)),
                    token_count=150,
                    created_at=now - timedelta(minutes=start + i),
                )
                for i in range(count)
            ]
        )
        fts.memory_index(
            fts.IndexRow(m.pk, student.pk, fts.memory_text(m.title, m.content), "en") for m in memories
        )
        doc = embeddings.normalise(rng.standard_normal((count, DIM)).astype(np.float32))
        sent = embeddings.normalise(rng.standard_normal((count * 6, DIM)).astype(np.float32))
        MemoryEmbedding.objects.bulk_create(
            [
                MemoryEmbedding(
                    memory=m, student=student, model=MODEL, dim=DIM, vector=embeddings.to_bytes(doc[i]),
                    sentences=6, sentence_vectors=embeddings.to_bytes(sent[i * 6 : i * 6 + 6]), text_hash="x",
                )
                for i, m in enumerate(memories)
            ]
        )
        print(f"\r  {start + count}/{n} memories", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory_search")
            cursor.execute("ANALYZE memory_memoryembedding")
            cursor.execute("ANALYZE memory_aimemory")


class FixedEmbedder:
    name = MODEL

    def embed(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("the bench passes query vectors")


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def measure(student: User, queries: list[str], qvecs: np.ndarray, *, use_cache: bool) -> dict[str, object]:
    recall.vector_cache.clear()
    config = recall.RecallConfig.from_settings()
    total, lexical, vectors, semantic = [], [], [], []
    embedder = FixedEmbedder()
    # One warm-up query loads the cache (when used) and warms the database.
    recall.recall(student_id=student.pk, query=queries[0], language="en", config=config, query_vector=qvecs[0],
                  embedder=embedder, use_cache=use_cache)
    for query, qv in zip(queries, qvecs, strict=True):
        result = recall.recall(student_id=student.pk, query=query, language="en", config=config, query_vector=qv,
                               embedder=embedder, use_cache=use_cache)
        total.append(result.search_ms)
        lexical.append(result.timings.get("lexical_ms", 0.0))
        vectors.append(result.timings.get("vectors_ms", 0.0))
        semantic.append(result.timings.get("semantic_ms", 0.0))
    return {
        "p50": pct(total, 50), "p95": pct(total, 95), "mean": round(statistics.mean(total), 2),
        "lexical_p50": pct(lexical, 50), "lexical_p95": pct(lexical, 95),
        "vectors_p50": pct(vectors, 50), "semantic_incl_vectors_p50": pct(semantic, 50),
    }


def query_embedding_latency(queries: list[str]) -> dict[str, float] | None:
    if not embeddings.local_available():
        return None
    embedder = embeddings.LocalEmbedder()
    embedder.embed(["warm up"])
    times = []
    for q in queries[:50]:
        t = time.perf_counter()
        embedder.embed([q])
        times.append((time.perf_counter() - t) * 1000)
    return {"p50": pct(times, 50), "p95": pct(times, 95)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    words = vocabulary(rng)
    draw = sampler(rng, words)
    queries = [" ".join(draw(rng.randint(3, 8))) for _ in range(args.queries)]
    qvecs = embeddings.normalise(nrng.standard_normal((len(queries), DIM)).astype(np.float32))
    results: dict[str, object] = {"database": connection.vendor, "query_embedding_local_ms": None}
    for size in [int(s) for s in args.sizes.split(",")]:
        student = User.objects.create_user(username=f"bench-recall-{size}-{int(time.time())}")
        try:
            t = time.monotonic()
            populate(student, size, draw, nrng)
            print(f"{size}: populated in {time.monotonic() - t:.0f}s", file=sys.stderr)
            warm = measure(student, queries, qvecs, use_cache=True)
            cold = measure(student, queries[:50], qvecs[:50], use_cache=False)
            results[str(size)] = {"warm_cache": warm, "no_cache": cold}
            print(size, json.dumps(results[str(size)]), flush=True)
        finally:
            MemoryEmbedding.objects.filter(student=student).delete()
            ids = list(AIMemory.objects.filter(student=student).values_list("pk", flat=True))
            fts.memory_unindex(ids)
            AIMemory.objects.filter(student=student).delete()
            student.delete()
    results["query_embedding_local_ms"] = query_embedding_latency(queries)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
