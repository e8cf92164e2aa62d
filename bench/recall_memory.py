"""The resident memory of a web process that recalls for many students.

    # PostgreSQL + pgvector (scripts/pgsearch.py start DIR prints the URL): ranks the vectors in
    # the database, keeps none in the process
    TUTOR_VAR_DIR=/tmp/var-rss DATABASE_URL=postgres://... .venv/bin/python bench/recall_memory.py
    # the embedded SQLite default (an empty var directory): keeps a cache of decoded vectors,
    # bounded by EMBEDDINGS_CACHE_BYTES
    env -u DATABASE_URL TUTOR_VAR_DIR=/tmp/var-rss-sqlite .venv/bin/python bench/recall_memory.py

Migrates the configured database, seeds `--students` students of `--memories` memories each
(bench/recall_latency.py's synthetic notes and random unit vectors, one per memory and one per
sentence) and gives each an API token. Then it starts the production server (scripts/serve.sh,
WEB_CONCURRENCY=1: one uvicorn process) with EMBEDDINGS_BACKEND=openai, pointed at a stand-in
endpoint in this process that answers random unit vectors: no process loads a model, and the web
process embeds each query over HTTP as it would with a real endpoint. With `--embedder local`
the server runs the local embedder instead (EMBEDDINGS_BACKEND=local: all-MiniLM-L6-v2 on ONNX
Runtime, loaded at start-up), and the memories' vectors are stored under its name, so that its
query vectors are ranked against them. Each student searches their memories `--queries` times
(`GET /api/v1/memories/?q=...`: hybrid recall, the semantic signal included; with the stand-in,
its request count shows it ran). The start-up log's embedder line gives the model's load time
(with the local embedder, the int8 query side unless EMBEDDINGS_QUERY_INT8=false, which the
server inherits). VmRSS of the server process is read from /proc: idle (after
start-up, the ASGI lifespan warm-up included), after the first student's searches, after every
student's, and after a second round over every student; VmHWM is its peak, RssAnon the process's
own memory and RssFile its mapped files (shared libraries, the model's weight file: the page
cache's, shared by every process that maps them). The database's own memory (PostgreSQL's
backend for the connection) is not in these figures.
`--tree PATH` starts another checkout's server (the base of a change) on the database this one
seeds. `--smoke`: 2 students of 50 memories, one search each per round, to check that it runs.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STANDIN_MODEL = "bench-random-384"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The embedder is in the environment before Django reads its settings (in recall_latency's
# import), so that this process and the server name the vectors alike.
EMBEDDER = argparse.ArgumentParser(add_help=False)
EMBEDDER.add_argument("--embedder", choices=["standin", "local"], default="standin")
LOCAL = EMBEDDER.parse_known_args()[0].embedder == "local"
ENDPOINT_PORT = free_port()
if LOCAL:
    os.environ["EMBEDDINGS_BACKEND"] = "local"
else:
    os.environ.update(
        EMBEDDINGS_BACKEND="openai",
        EMBEDDINGS_BASE_URL=f"http://127.0.0.1:{ENDPOINT_PORT}/v1",
        EMBEDDINGS_MODEL=STANDIN_MODEL,
        EMBEDDINGS_API_KEY="bench",
    )
for name in ("REDIS_URL", "CELERY_BROKER_URL"):
    os.environ.pop(name, None)  # the embedded broker: the searches enqueue nothing

sys.path.insert(0, str(ROOT))
from bench import recall_latency  # noqa: E402  (sets Django up)
from bench.machine import cores, cpu_model, load, process_mb, ram_gb  # noqa: E402


class StandIn(BaseHTTPRequestHandler):
    """`POST /v1/embeddings`: a random unit vector per input, as floats or base64 float32."""

    requests = 0
    inputs = 0
    rng = np.random.default_rng(5)
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with StandIn.lock:
            StandIn.requests += 1
            StandIn.inputs += len(texts)
            vectors = StandIn.rng.standard_normal((len(texts), recall_latency.DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": i,
             "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if as_base64 else v.tolist()}
            for i, v in enumerate(vectors)
        ]  # fmt: skip
        answer = json.dumps({"object": "list", "data": data, "model": body["model"],
                             "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def get(url: str, token: str | None = None) -> int:
    """The status of a GET to the local server (0 if it does not answer)."""
    headers = {"Authorization": f"Token {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (http://127.0.0.1 only)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def seed(students: int, memories: int) -> list[tuple[int, str]]:
    """Migrate, then the students with their memories, vectors and tokens: (id, token) each."""
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from accounts.models import User
    from memory.search import embeddings

    call_command("migrate", verbosity=0)
    embedder = embeddings.get_embedder()  # not loaded: only its name is read
    assert embedder is not None, "EMBEDDINGS_BACKEND=openai or local gives an embedder"
    model = embedder.name  # what the server's embedder will look for
    stamp = int(time.time())
    out = []
    for i in range(students):
        student = User.objects.create_user(username=f"bench-rss-{stamp}-{i}")
        recall_latency.populate(student, memories, recall_latency.Writer(100 + i), np.random.default_rng(100 + i),
                                model=model, progress=False)  # fmt: skip
        out.append((student.pk, Token.objects.create(user=student).key))
        print(f"\r  seeded {i + 1}/{students} students", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def measure(
    students: list[tuple[int, str]], queries: list[str], per_student: int, log: Path, tree: Path = ROOT
) -> dict[str, Any]:
    port = free_port()
    env = {**os.environ, "RUN_ADDR": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1",
           "VENV": str(Path(sys.executable).parent.parent), "PYTHONUNBUFFERED": "1"}  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        server = subprocess.Popen([str(tree / "scripts" / "serve.sh")], cwd=tree, env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120
        while get(f"{base}/api/v1/me/") != 401:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)
        time.sleep(2)
        readings: dict[str, Any] = {"idle": process_mb(server.pid)}
        # The start-up log's "embedder: ... ready in N s" (tutor.startup): the model's load time.
        ready = re.search(r"embedder: (.*), ready in ([\d.]+) s", log.read_text(errors="replace"))
        readings["embedder"] = ready.group(1) if ready else None
        readings["embedder_ready_s"] = float(ready.group(2)) if ready else None
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        assert not children, f"the server runs child processes {children}: VmRSS would miss them"
        times: list[float] = []
        asked: set[str] = set()

        def search(student: tuple[int, str], round_: int) -> None:
            for j in range(per_student):
                q = queries[(student[0] * 7 + round_ * per_student + j) % len(queries)]
                asked.add(q)
                t = time.perf_counter()
                status = get(f"{base}/api/v1/memories/?q={urllib.parse.quote_plus(q)}", student[1])
                times.append((time.perf_counter() - t) * 1000)
                if status != 200:
                    raise RuntimeError(f"search answered {status}\n{log.read_text(errors='replace')[-3000:]}")

        search(students[0], 0)
        readings["after_1_student"] = process_mb(server.pid)
        for student in students[1:]:
            search(student, 0)
        readings[f"after_{len(students)}_students"] = process_mb(server.pid)
        for student in students:
            search(student, 1)
        readings[f"after_{len(students)}_students_twice"] = process_mb(server.pid)
        readings["search_request_ms"] = recall_latency.summary(times)
        readings["searches"] = len(times)
        readings["distinct_queries"] = len(asked)
        return readings
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    from django.conf import settings
    from django.db import connection

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, parents=[EMBEDDER]
    )
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=3, help="searches per student and round")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, metavar="TREE",
        help="start the server of another checkout (the base of a change) on the database this one seeds",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    parser.add_argument("--smoke", action="store_true", help="the smallest run, to check that it works")
    args = parser.parse_args()
    if args.smoke:
        args.students, args.memories, args.queries = 2, 50, 1
    endpoint = ThreadingHTTPServer(("127.0.0.1", ENDPOINT_PORT), StandIn)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    started = time.monotonic()
    students = seed(args.students, args.memories)
    database = recall_latency.machine()["database"]
    connection.close()
    writer = recall_latency.Writer(7)
    queries = [writer.query() for _ in range(200)]
    result: dict[str, Any] = {
        "machine": {
            "nproc": cores(),
            "cpu": cpu_model(),
            "ram_gb": ram_gb(),
            "database": database,
            "date": time.strftime("%Y-%m-%d %H:%M"),
        },
        "students": args.students,
        "memories_each": args.memories,
        "seed_s": round(time.monotonic() - started, 1),
        "embedder": "local" if LOCAL else "stand-in endpoint",
        "embeddings_cache_bytes": settings.EMBEDDINGS_CACHE_BYTES if connection.vendor == "sqlite" else None,
        "load_before": load(),
    }
    log = Path(settings.VAR_DIR) / "bench-recall-memory-server.log"
    result["tree"] = str(args.tree)
    result["web_process_mb"] = measure(students, queries, args.queries, log, args.tree)
    result["load_after"] = load()
    result["embedding_requests"] = StandIn.requests
    result["embedding_inputs"] = StandIn.inputs
    # A repeated query may come from the process's recent-query cache, never a new one.
    if not LOCAL and StandIn.inputs < result["web_process_mb"]["distinct_queries"]:
        raise RuntimeError("the server embedded fewer queries than it was asked: the semantic signal did not run")
    readings = result["web_process_mb"]
    idle = readings["idle"]["rss"]
    result["above_idle_mb"] = {k: round(v["rss"] - idle, 1) for k, v in readings.items()
                               if isinstance(v, dict) and "rss" in v}  # fmt: skip
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    endpoint.shutdown()


if __name__ == "__main__":
    main()
