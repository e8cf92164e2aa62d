"""Recall latency for one student with 1,000 / 10,000 / 100,000 memories.

    createdb tutor_latency   # or: psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE tutor_latency'
    TUTOR_VAR_DIR=/tmp/var-latency DATABASE_URL=postgres://postgres@127.0.0.1:5432/tutor_latency \\
        .venv/bin/python manage.py migrate
    TUTOR_VAR_DIR=/tmp/var-latency DATABASE_URL=postgres://postgres@127.0.0.1:5432/tutor_latency \\
        .venv/bin/python bench/recall_latency.py [--sizes 1000,10000,100000] [--queries 200] [--json out.json]

Memories are synthetic tutoring notes: 60-120 words (title + sentences of 8-16 words) drawn
from a tutoring vocabulary (a few hundred real words, then a long tail of names and topic
words) with Zipf-like frequencies, stop words mixed in as in real text. Queries are 3-8 words
from the same distribution. The rows are seeded with COPY; the full-text entries are built
through `memory.fts.memory_index` (the write path of the services) in batches. Vectors are
random unit float32 vectors of MiniLM's size (384), one per memory and one per sentence:
latency does not depend on what they mean, and embedding 100,000 texts on a CPU takes hours.

Reported for each size (milliseconds, over the queries):
- recall: the whole hybrid recall without the query embedding, vector cache warm;
- lexical: `fts.search` alone; semantic: recall(strategy="semantic"), cache warm;
- cold: the first hybrid query after the vector cache is cleared (median of 3);
- after a write: the first hybrid query after one new memory and its vector are written
  (median of 3): the cache catches up instead of decoding everything again;
- how the PostgreSQL lexical queries ended (pruned / fallback / full, see memory.fts).
The local MiniLM query embedding is measured apart, once. Everything is written for a
throwaway student and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import django
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
django.setup()

from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import User  # noqa: E402
from bench.machine import cores, cpu_model  # noqa: E402
from memory import embeddings, fts, recall, services  # noqa: E402
from memory.models import AIMemory, MemoryEmbedding  # noqa: E402

MODEL = "bench:random-384"
DIM = 384
INDEX_BATCH = 2000

# Ordered roughly from frequent to rare in tutoring notes; a Zipf law over this order.
TUTORING_WORDS = """
student practice work lesson session today question answer understand problem help time
math reading needs good week again homework explain confident better struggled correct
fractions example words class writing teacher mistakes review skills test step focus
improving progress quickly careful remember steps numbers next asked tried solved task
sentences spelling vocabulary multiplication division addition subtraction equation equations
decimals percentages geometry shapes angles triangles area perimeter graphs data algebra
grammar punctuation paragraph essay story chapter book comprehension summary notes exercise
exercises worksheet quiz exam revision feedback motivation attention effort patient confused
difficult easy simple harder method strategy checking units measurement time tables
denominator numerator ratio proportion fraction negative positive integers place value
rounding estimate mental calculation written long short verbs nouns adjectives tenses past
present future french english science experiment hypothesis results energy forces plants
cells history dates map timeline geography rivers countries climate reading aloud fluency
phonics letters sounds handwriting presentation speaking listening group partner independent
encouragement praise goal goals target plan support extra challenge enjoyed likes dislikes
anxious calm tired focused distracted organised forgot remembered parent meeting report
cursive diagram labels table chart bar pie line coordinates axis slope variable expression
simplify factor expand solve check inverse operation order brackets powers square roots
volume capacity mass weight length metric conversion money change coins clock hour minutes
probability chance dice likely unlikely mean median mode range survey tally pictogram
symmetry reflection rotation translation polygon quadrilateral parallel perpendicular
""".split()  # noqa: SIM905
STOP_WORDS = "the a and of to with in on for was is she he they it this that at by an".split()  # noqa: SIM905


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """The tutoring words first, then invented names and topic words for the long tail."""
    words = list(dict.fromkeys(TUTORING_WORDS))
    seen = set(words)
    syllables = ["ka", "lo", "mi", "ra", "ten", "vi", "son", "del", "mar", "tu", "ne", "pol", "dra", "gen", "fi"]
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Writer:
    """Zipf-like draws of tutoring text (exponent 1 over the vocabulary's order)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.words = np.array(vocabulary(random.Random(seed)))
        weights = 1.0 / np.arange(1, len(self.words) + 1)
        self.p = weights / weights.sum()

    def words_(self, n: int) -> list[str]:
        drawn = list(self.words[self.rng.choice(len(self.words), size=n, p=self.p)])
        # About one word in three is a stop word, as in real notes.
        for i in range(0, n, 3):
            drawn[i] = STOP_WORDS[int(self.rng.integers(len(STOP_WORDS)))] + " " + drawn[i]
        return drawn

    def memory(self) -> tuple[str, str, int]:
        """(title, content, number of sentences) with 60-120 words in all."""
        title = " ".join(self.words_(int(self.rng.integers(4, 9)))).capitalize()
        target = int(self.rng.integers(60, 121))
        sentences: list[str] = []
        while sum(len(s.split()) for s in sentences) < target:
            sentences.append(" ".join(self.words_(int(self.rng.integers(6, 12)))).capitalize() + ".")
        return title, " ".join(sentences), len(sentences)

    def query(self) -> str:
        return " ".join(self.words_(int(self.rng.integers(3, 9))))


def populate(student: User, n: int, writer: Writer, vrng: np.random.Generator) -> dict[str, float]:
    """Seed n memories with COPY, their vectors with COPY, and index them through memory.fts."""
    timings: dict[str, float] = {}
    t = time.monotonic()
    texts = [writer.memory() for _ in range(n)]
    timings["generate_s"] = time.monotonic() - t
    now = timezone.now()
    raw = connection.connection  # the psycopg connection Django opened
    t = time.monotonic()
    with transaction.atomic(), raw.cursor() as cur:
        with cur.copy(
            "COPY memory_aimemory (kind, title, content, source, token_count, status, archived_reason,"
            " created_at, updated_at, student_id, revision) FROM STDIN"
        ) as copy:
            for i, (title, content, _) in enumerate(texts):
                created = now - timedelta(minutes=i)
                copy.write_row(("note", title, content, "save_memory", 150, "active", "", created, created,
                                student.pk, 0))
        cur.execute("SELECT id FROM memory_aimemory WHERE student_id = %s ORDER BY id", [student.pk])
        ids = [int(r[0]) for r in cur.fetchall()]
        with cur.copy(
            "COPY memory_memoryembedding (memory_id, student_id, model, dim, vector, sentences, sentence_vectors,"
            " text_hash, updated_at, revision) FROM STDIN"
        ) as copy:
            for pk, (_, _, count) in zip(ids, texts, strict=True):
                vecs = embeddings.normalise(vrng.standard_normal((count + 1, DIM)).astype(np.float32))
                copy.write_row((pk, student.pk, MODEL, DIM, embeddings.to_bytes(vecs[0]), count,
                                embeddings.to_bytes(vecs[1:]), "x", now, 0))
    timings["copy_s"] = time.monotonic() - t
    t = time.monotonic()
    for start in range(0, n, INDEX_BATCH):
        fts.memory_index(
            fts.IndexRow(pk, student.pk, fts.memory_text(title, content), "en")
            for pk, (title, content, _) in zip(ids[start:start + INDEX_BATCH], texts[start:start + INDEX_BATCH],
                                               strict=True)
        )
        print(f"\r  indexed {min(start + INDEX_BATCH, n)}/{n}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    timings["index_s"] = time.monotonic() - t
    t = time.monotonic()
    with connection.cursor() as cursor:
        # Index-only scans need the visibility map: what autovacuum does after a bulk load.
        for table in ("memory_aimemory", "memory_memoryembedding", "memory_posting", "memory_term_stats",
                      "memory_student_stats", "memory_doc"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    timings["vacuum_s"] = time.monotonic() - t
    return {k: round(v, 1) for k, v in timings.items()}


def write_one(student: User, writer: Writer, embedder: FixedEmbedder) -> None:
    """One new memory through the services' revision and index, then its vector through the
    embedding service (what the summary task and the embedding task do)."""
    title, content, _ = writer.memory()
    with transaction.atomic():
        memory = AIMemory.objects.create(
            student=student, kind="note", source="save_memory_tool", title=title, content=content, token_count=150,
            created_at=timezone.now(), revision=services.student_revision_next(student.pk),
        )
        fts.memory_index([fts.IndexRow(memory.pk, student.pk, fts.memory_text(title, content), "en")])
    services.memory_embeddings_write(memory_ids=[memory.pk], embedder=embedder)


def remove(student: User) -> None:
    ids = list(AIMemory.objects.filter(student=student).values_list("pk", flat=True))
    for start in range(0, len(ids), 10_000):
        fts.memory_unindex(ids[start:start + 10_000])
    MemoryEmbedding.objects.filter(student=student).delete()
    AIMemory.objects.filter(student=student).delete()
    student.delete()


class FixedEmbedder:
    """The queries' vectors are passed in; a query's topic text (recall.topic_text, when the query
    has words most of the student's memories contain) gets a random vector here. Either way the
    embedding is outside the measured time, as the query's own is."""

    name = MODEL

    def __init__(self) -> None:
        self.rng = np.random.default_rng(9)
        self.topics = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.topics += len(texts)
        return embeddings.normalise(self.rng.standard_normal((len(texts), DIM)).astype(np.float32))


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 2), "p95": round(float(np.percentile(values, 95)), 2)}


def measure(student: User, queries: list[str], qvecs: np.ndarray) -> dict[str, Any]:
    config = recall.RecallConfig.from_settings()
    embedder = FixedEmbedder()

    def run(query: str, qv: np.ndarray, strategy: str, use_cache: bool = True,
            config: recall.RecallConfig = config) -> recall.RecallResult:
        return recall.recall(student_id=student.pk, query=query, language="en", config=config, query_vector=qv,
                             embedder=embedder, strategy=strategy, use_cache=use_cache)

    # Cold: the first query after the cache is cleared (decodes the student's vectors).
    cold = []
    for i in range(3):
        recall.vector_cache.clear()
        cold.append(run(queries[i], qvecs[i], "hybrid").search_ms)
    # After a write: the first query after a new memory and its vector are stored (the cache
    # catches up from the rows written since the revision it holds).
    after_write = []
    updates = recall.vector_cache.updates
    for i in range(3):
        write_one(student, Writer(1000 + i), embedder)
        after_write.append(run(queries[i], qvecs[i], "hybrid").search_ms)
    assert recall.vector_cache.updates == updates + 3, "the vector cache did not catch up"
    # Warm-up, then the measured runs.
    for q, qv in zip(queries[:5], qvecs[:5], strict=True):
        run(q, qv, "hybrid")
    fts.search_paths.clear()
    embedder.topics = 0
    # Each query runs with the default config and without the topic signal, in alternating
    # order, so that the topic's cost is a ratio measured in the same run on the same student.
    no_topic = config.with_(topic_weight=0)
    total, without_topic, topic_ms, vectors_ms = [], [], [], []
    for i, (q, qv) in enumerate(zip(queries, qvecs, strict=True)):
        order = [config, no_topic] if i % 2 == 0 else [no_topic, config]
        for chosen in order:
            result = run(q, qv, "hybrid", config=chosen)
            if chosen is config:
                total.append(result.search_ms)
                topic_ms.append(result.timings.get("topic_ms", 0.0))
                # On PostgreSQL the version is read with the lexical statistics (stats_ms).
                vectors_ms.append(result.timings.get("vectors_ms", 0.0) + result.timings.get("stats_ms", 0.0))
            else:
                without_topic.append(result.search_ms)
    paths = dict(fts.search_paths)
    topics = embedder.topics
    lexical = []
    for q in queries:
        t = time.perf_counter()
        fts.search(student_id=student.pk, query=q, language="en", limit=config.lexical_depth)
        lexical.append((time.perf_counter() - t) * 1000)
    semantic = [run(q, qv, "semantic").search_ms for q, qv in zip(queries, qvecs, strict=True)]
    return {
        "recall": summary(total),
        "recall_without_topic": summary(without_topic),
        "lexical": summary(lexical),
        "semantic": summary(semantic),
        "vectors_version_check": summary(vectors_ms),
        "topic_text_query": summary(topic_ms),
        "queries_with_a_topic_text": topics,
        "cold_first_query_ms": round(float(np.median(cold)), 1),
        "first_query_after_a_write_ms": round(float(np.median(after_write)), 1),
        "lexical_paths": paths,
    }


def query_embedding_latency(queries: list[str]) -> dict[str, dict[str, float]] | None:
    if not embeddings.local_available():
        return None
    embedder = embeddings.LocalEmbedder()
    embedder.embed(["warm up"])
    times, pairs = [], []
    for q in queries[:100]:
        t = time.perf_counter()
        embedder.embed([q])
        times.append((time.perf_counter() - t) * 1000)
        # A query with a topic text embeds both in one call.
        t = time.perf_counter()
        embedder.embed([q, " ".join(q.split()[1:]) or q])
        pairs.append((time.perf_counter() - t) * 1000)
    return {"query": summary(times), "query_and_topic": summary(pairs)}


def machine() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version" if connection.vendor == "postgresql" else "SELECT sqlite_version()")
        version = cursor.fetchone()[0]
    return {"nproc": cores(), "cpu": cpu_model(), "database": f"{connection.vendor} {version}",
            "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-embedding", action="store_true", help="skip the MiniLM query-embedding timing")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    writer = Writer(7)
    queries = [writer.query() for _ in range(args.queries)]
    qvecs = embeddings.normalise(np.random.default_rng(8).standard_normal((len(queries), DIM)).astype(np.float32))
    results: dict[str, Any] = {"machine": machine(), "sizes": {}}
    print(json.dumps(results["machine"]), flush=True)
    for size in [int(s) for s in args.sizes.split(",")]:
        student = User.objects.create_user(username=f"bench-recall-{size}-{int(time.time())}")
        try:
            started = time.monotonic()
            setup = populate(student, size, Writer(size), np.random.default_rng(size))
            setup["total_s"] = round(time.monotonic() - started, 1)
            measured = measure(student, queries, qvecs)
            measured["setup"] = setup
            results["sizes"][str(size)] = measured
            print(size, json.dumps(measured), flush=True)
        finally:
            recall.vector_cache.clear()
            remove(student)
    sizes = sorted(int(s) for s in results["sizes"])
    if len(sizes) > 1:
        lo, hi = results["sizes"][str(sizes[0])], results["sizes"][str(sizes[-1])]
        results["growth"] = {
            f"{key} p50 x{sizes[-1] // sizes[0]} memories": round(hi[key]["p50"] / max(lo[key]["p50"], 1e-9), 1)
            for key in ("recall", "lexical", "semantic")
        }
    if not args.no_embedding:
        results["query_embedding_local_ms"] = query_embedding_latency(queries)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
