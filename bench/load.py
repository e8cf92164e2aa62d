"""Load benchmark of the chat turn: many students at once against the production server, beside
the floor (bench/floor.py: the least a server can do for a turn) and, if asked, another checkout
of the code, in the same run, phase by phase.

What it does, what it measures and how to read it: bench/README.md (`load.py`). Usage:

    BENCH_PG_SERVER=postgres://postgres@127.0.0.1:PORT .venv/bin/python bench/load.py
        [--students 200] [--messages 3] [--workers 2] [--timeout 300] [--quick | --smoke]
        [--phases floor,new,base] [--base-tree PATH] [--rounds N] [--py-spy SECONDS] [--output PATH]
        [--workload me [--requests N]]

`--workload me` measures a trivial authenticated request instead of the chat turn: every student
sends `--requests` `GET /api/v1/me/` one after the other (a "turn" of the report is one request).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import cores, cpu_model  # noqa: E402
from bench.sse import sse_events  # noqa: E402

RESULTS_PATH = ROOT / "bench" / "results" / "load.json"
BASELINE_COMMIT = "8eb95c4"
# A PostgreSQL server with pgvector (scripts/pgsearch.py starts one): BENCH_PG_SERVER, e.g.
# postgres://postgres@127.0.0.1:5433 (no database name). The old code's server needs none.
PG_SERVER = os.environ.get("BENCH_PG_SERVER", "postgres://postgres@127.0.0.1:5432").rstrip("/")
PG_ADMIN_URL = f"{PG_SERVER}/postgres"
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
TOKEN_RE = re.compile(r"\[bench ([0-9a-f]{16})\]")
CLK_TCK = os.sysconf("SC_CLK_TCK")
TMP = tempfile.gettempdir()  # logs, profiles and the baseline worktree

# Targets for the new server.
TARGET_OVERHEAD_P95_MS = 250.0
TARGET_PG_CONNECTIONS = 20
# Against the floor (bench/floor.py) measured in the same run.
TARGET_CPU_OVER_FLOOR = 2.0
TARGET_RATE_OF_FLOOR = 0.7
PHASES = ("floor", "new", "base", "old")


# --- The scripted model, in its own process ---------------------------------------------------


def serve_model(seconds: tuple[float, float], reply_words: int) -> None:
    """Run the scripted model until killed; print its base URL first (the parent reads it)."""
    from tests.llm_server import ScriptedLLM

    class BacklogServer(ThreadingHTTPServer):
        # socketserver's default listen backlog is 5: a burst of new connections from the
        # servers' SDK clients would wait for SYN retries (1 s and more), counted as overhead.
        request_queue_size = 1024
        daemon_threads = True

    class BenchLLM(ScriptedLLM):
        """Every chat request takes a uniform `seconds`, streamed or not, timed per token."""

        def __init__(self) -> None:
            super().__init__()
            self.local = threading.local()
            self.timings: dict[str, dict[str, Any]] = {}
            self.server.server_close()
            self.server = BacklogServer(("127.0.0.1", 0), self._handler())

        def _next(self, kind: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
            step = dict(super()._next(kind, body))
            plan: tuple[float, bool] | None = getattr(self.local, "plan", None)
            if kind == "chat" and plan is not None:
                chosen, streamed = plan
                if reply_words:
                    step["content"] = " ".join(f"word{i}" for i in range(reply_words)) + "."
                step["stream_seconds" if streamed else "delay"] = chosen
            return step

        def _handler(self) -> Any:
            base = super()._handler()
            llm = self

            class Handler(base):  # type: ignore[valid-type,misc]
                rfile: Any
                chunks = 0
                first_chunk_at = 0.0

                def _chunk(self, data: bytes) -> None:
                    super()._chunk(data)
                    self.chunks += 1
                    if self.chunks == 2:  # the first content chunk (the first one has only the role)
                        self.first_chunk_at = time.monotonic()

                def do_GET(self) -> None:  # noqa: N802
                    if self.path == "/bench/timings":
                        with llm.lock:
                            payload = json.dumps(llm.timings).encode()
                        self._send(200, payload)
                    else:
                        self._send(404, b"{}")

                def do_POST(self) -> None:  # noqa: N802
                    started = time.monotonic()
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    body = json.loads(raw or b"{}")
                    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
                    found = TOKEN_RE.findall(str(users[-1].get("content") or "")) if users else []
                    token = found[-1] if found else None
                    chosen = random.uniform(*seconds)
                    llm.local.plan = (chosen, bool(body.get("stream")))
                    self.chunks, self.first_chunk_at = 0, 0.0
                    rfile = self.rfile
                    self.rfile = io.BytesIO(raw)  # the scripted handler reads the body itself
                    try:
                        super().do_POST()
                    finally:
                        self.rfile = rfile
                        llm.local.plan = None
                        ended = time.monotonic()
                        if token is not None:
                            with llm.lock:
                                previous = llm.timings.get(token, {}).get("calls", 0)
                                llm.timings[token] = {
                                    "calls": previous + 1,
                                    "scripted": chosen,
                                    "model": ended - started,
                                    "first": (self.first_chunk_at - started) if self.first_chunk_at else None,
                                    "stream": bool(body.get("stream")),
                                }
                            # The bodies are kept by ScriptedLLM for the tests; not needed here.
                            llm.requests.clear()

            return Handler

    llm = BenchLLM()
    print(llm.base_url, flush=True)
    llm.server.serve_forever()


# --- Processes, /proc ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat from the state on (field 3 is index 0), or None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_ticks(pid: int, reaped_children: bool = False) -> int:
    """utime + stime of a process (and cutime + cstime: its reaped children), in clock ticks."""
    fields = proc_stat(pid)
    if fields is None:
        return 0
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def all_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def process_tree(root: int) -> list[int]:
    """`root` and all its descendants."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        fields = proc_stat(pid)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def find_process(comm: str, root_only: bool = True) -> int | None:
    """The pid of a process named `comm` (the topmost one: its parent has another name)."""
    for pid in sorted(all_pids()):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if name != comm:
            continue
        fields = proc_stat(pid)
        if not root_only or fields is None:
            return pid
        try:
            parent = Path(f"/proc/{fields[1]}/comm").read_text().strip()
        except OSError:
            parent = ""
        if parent != comm:
            return pid
    return None


def process_label(pid: int, master: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmdline = ""
    if pid == master:
        return f"master {pid}"
    if "resource_tracker" in cmdline:
        return f"tracker {pid}"
    return f"worker {pid}"


def machine_busy_ticks() -> tuple[int, int, int]:
    """(busy, total, interrupts) clock ticks of the whole machine, from /proc/stat. Interrupts
    (irq + softirq) are mostly the loopback network stack, counted in no process."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:8]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values), values[5] + values[6]


@dataclass
class CpuSnapshot:
    ticks: dict[str, int]
    machine: tuple[int, int, int]
    at: float
    server_system: int


def system_ticks(pids: list[int]) -> int:
    """stime (CPU in the kernel on the process's behalf) of these processes."""
    return sum(int(fields[12]) for fields in map(proc_stat, pids) if fields is not None)


_postmaster: list[int | None] = []


def postmaster_pid() -> int | None:
    """The postmaster of the PostgreSQL server at BENCH_PG_SERVER (the first line of the
    postmaster.pid of its data directory), found once. Its backends are its children: while they
    run their CPU is theirs, once they exit and are reaped it is in its cutime + cstime. Any other
    PostgreSQL on the machine is not counted. None if the data directory is not readable here."""
    if not _postmaster:
        import psycopg

        pid: int | None = None
        with contextlib.suppress(Exception):
            with psycopg.connect(PG_ADMIN_URL.replace("postgres://", "postgresql://"), autocommit=True) as conn:
                row = conn.execute("SHOW data_directory").fetchone()
            if row is not None:
                pid = int(Path(str(row[0]), "postmaster.pid").read_text().split()[0])
        if pid is None:
            print("  (the PostgreSQL server's postmaster was not found: its CPU is not counted)", flush=True)
        _postmaster.append(pid)
    return _postmaster[0]


def cpu_snapshot(server_root: int, model_pid: int) -> CpuSnapshot:
    server = process_tree(server_root)
    ticks = {
        "server": sum(cpu_ticks(pid, reaped_children=pid == server_root) for pid in server),
        "model runner": cpu_ticks(model_pid),
        "load generator": cpu_ticks(os.getpid()),
    }
    postmaster = postmaster_pid()
    if postmaster is not None:
        ticks["postgresql"] = sum(cpu_ticks(pid, reaped_children=pid == postmaster) for pid in process_tree(postmaster))
    redis = find_process("redis-server")
    if redis is not None:
        ticks["redis"] = cpu_ticks(redis)
    return CpuSnapshot(ticks, machine_busy_ticks(), time.perf_counter(), system_ticks(server))


def stop_process(proc: subprocess.Popen[Any], grace: float = 45.0) -> None:
    """SIGTERM to the process we started (its own session), then SIGKILL to its group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


def log_problems(path: Path) -> tuple[int, int, str]:
    """(tracebacks, ERROR lines, the first traceback) found in a server log."""
    text = path.read_text(errors="replace") if path.exists() else ""
    lines = text.splitlines()
    errors = sum(1 for line in lines if " ERROR " in line or line.startswith("[ERROR]") or "] [ERROR]" in line)
    tracebacks = text.count("Traceback (most recent call last)")
    first = ""
    start = text.find("Traceback (most recent call last)")
    if start >= 0:
        head = text.rfind("\n", 0, max(0, start - 1))
        first = "\n".join(text[head + 1 :].splitlines()[:60])
    return tracebacks, errors, first


# --- Databases -------------------------------------------------------------------------------


def pg_admin(*statements: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def database_url(name: str) -> str:
    return f"{PG_SERVER}/{name}"


def redis_flush(db: int) -> None:
    """FLUSHDB on our dedicated Redis db, with a bare RESP exchange."""
    with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=5) as sock:
        sock.sendall(f"*2\r\n$6\r\nSELECT\r\n${len(str(db))}\r\n{db}\r\n*1\r\n$7\r\nFLUSHDB\r\n".encode())
        received = b""
        while received.count(b"\r\n") < 2:
            chunk = sock.recv(1024)
            if not chunk:
                break
            received += chunk


SEED_CODE = """
import json, secrets, sys
import django
django.setup()
from accounts.models import Classroom, Enrollment, User
from rest_framework.authtoken.models import Token
count = int(sys.argv[1])
teacher = User.objects.create(username="bench-teacher", role="teacher", password="!")
try:
    from accounts.services import classroom_create, school_default
except ImportError:  # a base tree from before schools (2026-12-01 and earlier)
    classroom = Classroom.objects.create(name="Bench class", teacher=teacher)
else:
    classroom = classroom_create(name="Bench class", school=school_default(), teachers=[teacher])
students = User.objects.bulk_create(
    [User(username=f"bench-student-{i}", role="student", password="!") for i in range(count)]
)
Enrollment.objects.bulk_create([Enrollment(classroom=classroom, student=s) for s in students])
tokens = Token.objects.bulk_create([Token(user=s, key=secrets.token_hex(20)) for s in students])
print(json.dumps([t.key for t in tokens]))
"""


def run_checked(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed in {cwd}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def turns_in_progress(dbname: str) -> int:
    """Conversations whose turn lease is held (the new schema; 0 for the old one, which has none)."""
    import psycopg

    with psycopg.connect(database_url(dbname).replace("postgres://", "postgresql://")) as conn:
        has_lease = conn.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'conversations_conversation' "
            "AND column_name = 'turn_token'"
        ).fetchone()
        if not has_lease:
            return 0
        row = conn.execute(
            "SELECT count(*) FROM conversations_conversation WHERE turn_token <> '' AND turn_expires_at > now()"
        ).fetchone()
        return int(row[0]) if row else 0


def settle(dbname: str, seconds: float = 60.0) -> int:
    """Wait for turns still running server-side (their clients gone at the deadline) to end, so that
    stopping the server does not cut them; the number still running after `seconds`."""
    deadline = time.monotonic() + seconds
    while (running := turns_in_progress(dbname)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return running


def lost_messages(dbname: str, tokens: list[str]) -> dict[str, int]:
    """Of the messages sent, how many have no stored student message, or no stored reply."""
    import psycopg

    with psycopg.connect(database_url(dbname).replace("postgres://", "postgresql://")) as conn:
        rows = conn.execute(
            "SELECT s.client_message_id, count(r.id) FROM conversations_message s "
            "LEFT JOIN conversations_message r ON r.reply_to_id = s.id "
            "WHERE s.role = 'student' AND s.client_message_id = ANY(%s) GROUP BY s.client_message_id",
            (tokens,),
        ).fetchall()
        replies = {str(cmid): int(n) for cmid, n in rows}
    no_student = sum(1 for t in tokens if t not in replies)
    no_reply = sum(1 for t in tokens if replies.get(t) == 0)
    return {"sent": len(tokens), "no_student_message": no_student, "no_reply": no_reply, "lost": no_student + no_reply}


# --- The load --------------------------------------------------------------------------------


@dataclass
class Turn:
    student: int
    index: int
    token: str
    first_delta: float | None = None  # seconds from sending the request
    done: float | None = None
    finished_at: float | None = None  # perf_counter when the turn ended, successfully or not
    error: str | None = None
    model: float | None = None  # the runner's time for this turn's model request
    model_first: float | None = None  # the runner's time to its first content chunk
    model_calls: int = 0


@dataclass
class Load:
    base: str
    streaming: bool
    messages: int  # per student: chat messages, or GET /me/ requests (workload "me")
    students: int
    workload: str = "turn"
    turns: list[Turn] = field(default_factory=list)
    other_errors: Counter[str] = field(default_factory=Counter)
    arrived: int = 0
    start: asyncio.Event = field(default_factory=asyncio.Event)

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.students:
            self.start.set()


def error_kind(status: int, body: bytes) -> str:
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = body[:60].decode(errors="replace")
    return f"http {status} {code}"


@contextlib.contextmanager
def transport_errors(turn: Turn) -> Iterator[None]:
    """A timeout or a transport error of the block is the turn's error; the turn ends with it."""
    import httpx2

    try:
        yield
    except httpx2.TimeoutException as exc:
        turn.error = f"timeout ({type(exc).__name__})"
    except httpx2.HTTPError as exc:
        turn.error = f"transport ({type(exc).__name__})"
    finally:
        turn.finished_at = time.perf_counter()


async def send_turn(client: Any, load: Load, key: str, conversation: int, turn: Turn) -> None:
    url = f"{load.base}/api/v1/conversations/{conversation}/messages/"
    payload = {
        "content": f"Question {turn.index + 1} of student {turn.student}: how do I add 2/3 and 3/4? "
        f"[bench {turn.token}]",
        "client_message_id": turn.token,
    }
    headers = {"Authorization": f"Token {key}"}
    sent = time.perf_counter()
    with transport_errors(turn):
        if not load.streaming:
            response = await client.post(url, json=payload, headers=headers)
            if response.status_code == 201 and response.json().get("reply", {}).get("id"):
                turn.done = time.perf_counter() - sent
            else:
                turn.error = error_kind(response.status_code, response.content)
            return
        headers["Accept"] = "text/event-stream"
        async with client.stream("POST", url, json=payload, headers=headers) as response:
            if response.status_code != 200:
                turn.error = error_kind(response.status_code, await response.aread())
                return
            async for event, data in sse_events(response):
                if event == "delta" and turn.first_delta is None:
                    turn.first_delta = time.perf_counter() - sent
                elif event == "done" and json.loads(data).get("id"):
                    turn.done = time.perf_counter() - sent
                elif event == "error":
                    turn.error = "sse error " + str(json.loads(data)["error"].get("code"))
            if turn.done is None and turn.error is None:
                turn.error = "stream ended without done"


async def get_me(client: Any, load: Load, key: str, turn: Turn) -> None:
    """One `GET /api/v1/me/`, timed as a turn (done: the whole response)."""
    sent = time.perf_counter()
    with transport_errors(turn):
        response = await client.get(f"{load.base}/api/v1/me/", headers={"Authorization": f"Token {key}"})
        if response.status_code == 200 and response.json().get("id"):
            turn.done = time.perf_counter() - sent
        else:
            turn.error = error_kind(response.status_code, response.content)


async def run_student(client: Any, load: Load, number: int, key: str, measured: bool) -> None:
    if load.workload == "me":
        load.arrive()
        await load.start.wait()
        for index in range(load.messages):
            turn = Turn(number, index, uuid.uuid4().hex[:16])
            if measured:
                load.turns.append(turn)
            await get_me(client, load, key, turn)
            if not measured and turn.error:
                load.other_errors[f"warm-up: {turn.error}"] += 1
        return
    headers = {"Authorization": f"Token {key}"}
    conversation: int | None = None
    try:
        response = await client.post(f"{load.base}/api/v1/conversations/", json={"subject": "Maths"}, headers=headers)
        if response.status_code == 201:
            conversation = int(response.json()["id"])
        else:
            load.other_errors["create: " + error_kind(response.status_code, response.content)] += 1
    except Exception as exc:
        load.other_errors[f"create: {type(exc).__name__}"] += 1
    finally:
        load.arrive()
    await load.start.wait()
    if conversation is None:
        return
    for index in range(load.messages):
        turn = Turn(number, index, uuid.uuid4().hex[:16])
        if measured:
            load.turns.append(turn)
        await send_turn(client, load, key, conversation, turn)
        if not measured and turn.error:
            load.other_errors[f"warm-up: {turn.error}"] += 1
    try:
        response = await client.post(f"{load.base}/api/v1/conversations/{conversation}/end/", headers=headers)
        if response.status_code != 202:
            load.other_errors["end: " + error_kind(response.status_code, response.content)] += 1
    except Exception as exc:
        load.other_errors[f"end: {type(exc).__name__}"] += 1


def make_client(connections: int) -> Any:
    import httpx2

    # Keep-alive shorter than the servers' (5 s) so that a connection is never reused just as
    # the server closes it.
    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=4.0)
    return httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(180.0, connect=60.0))


async def warm_up(base: str, streaming: bool, keys: list[str], workload: str) -> Counter[str]:
    """One turn (or five GET /me/) for each warm-up student, in two waves on new connections:
    which worker accepts a connection is up to the kernel, two waves make it likely that every
    worker has served one."""
    errors: Counter[str] = Counter()
    for wave in (keys[: len(keys) // 2], keys[len(keys) // 2 :]):
        load = Load(base, streaming, messages=5 if workload == "me" else 1, students=len(wave), workload=workload)
        async with make_client(len(wave) + 10) as client:
            await asyncio.gather(*(run_student(client, load, -1 - i, k, measured=False) for i, k in enumerate(wave)))
        errors.update(load.other_errors)
    return errors


@dataclass
class Sampler:
    dbname: str
    server_root: int
    peak_connections: int = 0
    connection_samples: list[int] = field(default_factory=list)
    peak_rss_kb: dict[str, int] = field(default_factory=dict)
    peak_total_rss_kb: int = 0
    pids: list[int] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        import psycopg

        async with await psycopg.AsyncConnection.connect(PG_ADMIN_URL, autocommit=True) as conn:
            refreshed = 0.0
            while not stop.is_set():
                if time.perf_counter() - refreshed > 1.0:
                    self.pids = process_tree(self.server_root)
                    refreshed = time.perf_counter()
                cursor = await conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.dbname,))
                row = await cursor.fetchone()
                count = int(row[0]) if row else 0
                self.connection_samples.append(count)
                self.peak_connections = max(self.peak_connections, count)
                total = 0
                for pid in self.pids:
                    kb = rss_kb(pid)
                    total += kb
                    label = process_label(pid, self.server_root)
                    self.peak_rss_kb[label] = max(self.peak_rss_kb.get(label, 0), kb)
                self.peak_total_rss_kb = max(self.peak_total_rss_kb, total)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.1)


async def fetch_timings(model_root: str) -> dict[str, dict[str, Any]]:
    async with make_client(2) as client:
        response = await client.get(f"{model_root}/bench/timings")
        response.raise_for_status()
        return dict(response.json())


@dataclass
class Phase:
    """Everything measured for one server."""

    name: str
    server: str
    turns: list[Turn]
    other_errors: dict[str, int]
    send_seconds: float
    cpu: dict[str, float]
    machine_busy: float
    server_system_share: float
    peak_connections: int
    peak_rss_kb: dict[str, int]
    peak_total_rss_kb: int
    lost: dict[str, int]
    log: str
    log_tracebacks: int
    log_errors: int
    first_traceback: str
    profile: str = ""


async def drive(
    *,
    base: str,
    streaming: bool,
    keys: list[str],
    warmup_keys: list[str],
    messages: int,
    timeout: float,
    dbname: str,
    server_root: int,
    model_pid: int,
    model_root: str,
    py_spy_seconds: float,
    py_spy_out: Path,
    workload: str,
) -> dict[str, Any]:
    warm = await warm_up(base, streaming, warmup_keys, workload)
    if warm:
        print(f"  warm-up errors: {dict(warm)}", flush=True)
    load = Load(base, streaming, messages=messages, students=len(keys), workload=workload)
    sampler = Sampler(dbname, server_root)
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler.run(stop))
    profiler: subprocess.Popen[Any] | None = None
    async with make_client(len(keys) + 10) as client:
        tasks = [asyncio.create_task(run_student(client, load, i, k, measured=True)) for i, k in enumerate(keys)]
        await load.start.wait()
        started = time.perf_counter()
        before = cpu_snapshot(server_root, model_pid)
        if py_spy_seconds:
            workers = [p for p in process_tree(server_root) if p != server_root]
            profiler = start_py_spy(max(workers, key=rss_kb) if workers else server_root, py_spy_seconds, py_spy_out)
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        after = cpu_snapshot(server_root, model_pid)
    stop.set()
    await sampling
    if profiler is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            profiler.wait(py_spy_seconds + 30)
    for turn in load.turns:
        if turn.done is None and turn.error is None:
            turn.error = "deadline"
            turn.finished_at = turn.finished_at or time.perf_counter()
    if pending:
        load.other_errors["students unfinished at the deadline"] += len(pending)
    timings = await fetch_timings(model_root)
    for turn in load.turns:
        timing = timings.get(turn.token)
        if timing:
            turn.model, turn.model_first, turn.model_calls = timing["model"], timing["first"], int(timing["calls"])
    ends = [t.finished_at for t in load.turns if t.finished_at is not None]
    send_seconds = (max(ends) - started) if ends else 0.0
    cpu_ms = {k: (after.ticks[k] - before.ticks.get(k, 0)) * 1000 / CLK_TCK for k in after.ticks}
    busy = after.machine[0] - before.machine[0]
    total = after.machine[1] - before.machine[1]
    cpu_ms["interrupts (network)"] = (after.machine[2] - before.machine[2]) * 1000 / CLK_TCK
    # What the machine was busy with besides all that: other users' work, kernel threads.
    cpu_ms["everything else"] = max(0.0, busy * 1000 / CLK_TCK - sum(cpu_ms.values()))
    server_system_ms = (after.server_system - before.server_system) * 1000 / CLK_TCK
    return {
        "turns": load.turns,
        "other_errors": dict(load.other_errors),
        "send_seconds": send_seconds,
        "cpu": cpu_ms,
        "machine_busy": busy / total if total else 0.0,
        "server_system_share": server_system_ms / cpu_ms["server"] if cpu_ms.get("server") else 0.0,
        "peak_connections": sampler.peak_connections,
        "peak_rss_kb": sampler.peak_rss_kb,
        "peak_total_rss_kb": sampler.peak_total_rss_kb,
    }


# --- py-spy ----------------------------------------------------------------------------------


def start_py_spy(pid: int, seconds: float, out: Path) -> subprocess.Popen[Any] | None:
    # The virtualenv's, else one on PATH (installed apart from a shared virtualenv).
    exe = Path(sys.executable).parent / "py-spy"
    if not exe.exists():
        found = shutil.which("py-spy")
        if found is None:
            print("  py-spy is installed neither in the virtualenv nor on PATH: no profile", flush=True)
            return None
        exe = Path(found)
    # --gil: only the thread holding the GIL is sampled, so the samples are where the worker's
    # Python CPU goes (waits on sockets and locks drop out), and their count over the duration
    # is how busy its GIL was.
    cmd = [str(exe), "record", "-p", str(pid), "-d", str(int(seconds)), "-r", str(PY_SPY_RATE)]
    cmd += ["--nonblocking", "--gil", "--threads", "-f", "raw", "-o", str(out)]
    print(f"  py-spy on pid {pid} for {seconds:.0f} s -> {out}", flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


PY_SPY_RATE = 100
PACKAGE_GROUPS = [
    ("django/db", "django ORM / db"),
    ("psycopg", "psycopg"),
    ("django", "django (other)"),
    ("rest_framework", "DRF"),
    ("openai", "openai SDK"),
    ("httpx2", "httpx2"),
    ("httpcore", "httpcore"),
    ("h11", "h11"),
    ("pydantic", "pydantic"),
    ("anyio", "anyio"),
    ("asgiref", "asgiref"),
    ("uvicorn", "uvicorn"),
    ("redis", "redis (cache, throttles)"),
    ("kombu", "kombu / celery"),
    ("celery", "kombu / celery"),
    ("asyncio", "asyncio (uvloop's C work shows as Runner.run)"),
    ("concurrent/futures", "thread pool"),
    ("threading", "threading"),
    ("tiktoken", "tiktoken"),
    ("json", "json"),
    ("logging", "logging"),
    ("(conversations/", "app: conversations"),
    ("(safety/", "app: safety"),
    ("(core/", "app: core"),
    ("(memory/", "app: memory"),
    ("(llm/", "app: llm"),
    ("(tutor/", "app: tutor"),
    ("(accounts/", "app: accounts"),
]


# A py-spy frame of the app's code, "function (package/module.py:line)".
APP_FRAME = re.compile(r"^(.*) \(((?:accounts|conversations|core|llm|memory|safety|tutor)/[^:]*):\d+\)$")


def frame_group(frame: str) -> str:
    for needle, group in PACKAGE_GROUPS:
        if needle in frame:
            return group
    return "other"


def py_spy_summary(path: Path, seconds: float, top: int = 25) -> str:
    """GIL use, by thread, by package (self), and the heaviest functions (self and inclusive)."""
    if not path.exists():
        return "(no profile written)"
    own: Counter[str] = Counter()
    groups: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        thread, *frames = stack.split(";")
        if not frames:
            continue
        total += count
        threads["event loop (MainThread)" if "MainThread" in thread else "sync_to_async threads"] += count
        own[frames[-1]] += count
        groups[frame_group(frames[-1])] += count
        # Inclusive time of the app's own functions, whatever the line.
        for function in {APP_FRAME.sub(r"\1 \2", f) for f in frames if APP_FRAME.search(f)}:
            inclusive[function] += count
    if not total:
        return "(empty profile)"
    busy = 100 * total / (seconds * PY_SPY_RATE)
    out = [
        f"{total} samples of the thread holding the GIL ({PY_SPY_RATE} Hz for {seconds:.0f} s): "
        f"the GIL was held {busy:.0f}% of the time",
        "",
        "by thread:",
    ]
    out += [f"  {100 * n / total:5.1f}%  {name}" for name, n in threads.most_common()]
    out += ["", "self time by package:"]
    out += [f"  {100 * n / total:5.1f}%  {g}" for g, n in groups.most_common()]
    out += ["", f"top {top} functions by self time:"]
    out += [f"  {100 * n / total:5.1f}%  {f[:150]}" for f, n in own.most_common(top)]
    out += ["", f"top {top} functions of the app by inclusive time:"]
    out += [f"  {100 * n / total:5.1f}%  {f[:150]}" for f, n in inclusive.most_common(top)]
    return "\n".join(out)


# --- One server ------------------------------------------------------------------------------


@dataclass
class ServerSpec:
    name: str
    description: str
    tree: Path
    streaming: bool
    command: list[str]
    env: dict[str, str]


def wait_ready(proc: subprocess.Popen[Any], base: str, key: str, log: Path, seconds: float = 90.0) -> None:
    import httpx2

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}); see {log}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(httpx2.HTTPError):
            if httpx2.get(f"{base}/api/v1/me/", headers={"Authorization": f"Token {key}"}).status_code == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"the server did not answer within {seconds:.0f} s; see {log}")


def run_phase(spec: ServerSpec, args: argparse.Namespace, model_base: str, model_pid: int, stamp: str) -> Phase:
    dbname = f"tutor_load_{spec.name}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(TMP, f"tutor_load_{stamp}_{spec.name}.log")
    warmup_count = 8 * (args.workers if spec.name != "old" else 4)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
        "DATABASE_URL": database_url(dbname),
        "REDIS_URL": f"redis://{REDIS_HOST}:{REDIS_PORT}/{args.redis_db}",
        "LLM_BASE_URL": model_base,
        "LLM_API_KEY": "bench",
        "LLM_MODEL": "scripted-bench",
        "EMBEDDINGS_BACKEND": "none",
        "THROTTLE_SEND_RATE": "",
        "DJANGO_DEBUG": "0",
        "LOG_LEVEL": "INFO",
        "RUN_ADDR": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": str(args.workers),
        "VENV": str(ROOT / ".venv"),
        **spec.env,
    }
    print(f"\n== {spec.name}: {spec.description}", flush=True)
    print(f"  database {dbname}, server log {log}", flush=True)
    pg_admin(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)', f'CREATE DATABASE "{dbname}"')
    proc: subprocess.Popen[Any] | None = None
    try:
        run_checked([sys.executable, "manage.py", "migrate", "--noinput"], spec.tree, env)
        seeded = run_checked([sys.executable, "-c", SEED_CODE, str(args.students + warmup_count)], spec.tree, env)
        keys = json.loads(seeded)
        keys, warmup_keys = keys[: args.students], keys[args.students :]
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [part.replace("{port}", str(port)) for part in spec.command],
                cwd=spec.tree,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_ready(proc, base, warmup_keys[0], log)
        what = "GET /api/v1/me/" if args.workload == "me" else "messages"
        print(f"  ready (pid {proc.pid}); {len(keys)} students x {args.messages} {what}", flush=True)
        profile_out = Path(TMP, f"tutor_load_{stamp}_{spec.name}.pyspy.txt")
        measured = run_async(
            drive(
                base=base,
                streaming=spec.streaming,
                keys=keys,
                warmup_keys=warmup_keys,
                messages=args.messages,
                timeout=args.timeout,
                dbname=dbname,
                server_root=proc.pid,
                model_pid=model_pid,
                model_root=model_base.removesuffix("/v1"),
                py_spy_seconds=args.py_spy if spec.name in ("new", "base") else 0,
                py_spy_out=profile_out,
                workload=args.workload,
            )
        )
        settling = time.monotonic()
        unsettled = settle(dbname)
        if time.monotonic() - settling > 1:
            print(f"  waited {time.monotonic() - settling:.1f} s for the turns still running server-side", flush=True)
        if unsettled:
            print(f"  {unsettled} turns still running server-side after 60 s; stopping the server anyway", flush=True)
        stop_process(proc)  # gracefully (SIGTERM): its open requests finish
        proc = None
        if args.workload == "me":
            lost = {"sent": 0, "no_student_message": 0, "no_reply": 0, "lost": 0}
        else:
            lost = lost_messages(dbname, [t.token for t in measured["turns"]])
        tracebacks, errors, first = log_problems(log)
        profile = py_spy_summary(profile_out, args.py_spy) if args.py_spy and spec.name in ("new", "base") else ""
        return Phase(
            name=spec.name,
            server=spec.description,
            lost={**lost, "turns_running_at_stop": unsettled},
            log=str(log),
            log_tracebacks=tracebacks,
            log_errors=errors,
            first_traceback=first,
            profile=profile,
            **measured,
        )
    finally:
        if proc is not None:
            stop_process(proc)
        with contextlib.suppress(Exception):
            redis_flush(args.redis_db)
        with contextlib.suppress(Exception):
            pg_admin(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def run_async(coro: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


@contextlib.contextmanager
def model_runner(seconds: tuple[float, float], reply_words: int, stamp: str) -> Iterator[tuple[str, int]]:
    log = Path(TMP, f"tutor_load_{stamp}_model.log")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-model"]
    cmd += ["--model-seconds", str(seconds[0]), str(seconds[1]), "--reply-words", str(reply_words)]
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, start_new_session=True, text=True)
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        if not base.startswith("http"):
            raise RuntimeError(f"the model runner did not start; see {log}")
        print(f"scripted model at {base} (pid {proc.pid}, log {log})", flush=True)
        yield base, proc.pid
    finally:
        stop_process(proc, grace=5)


@contextlib.contextmanager
def baseline_worktree(stamp: str) -> Iterator[Path]:
    path = Path(TMP, f"tutor_load_{stamp}_old")
    run_checked(["git", "worktree", "add", "--detach", str(path), BASELINE_COMMIT], ROOT, dict(os.environ))
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)


# --- Report ----------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(phase: Phase) -> dict[str, Any]:
    ok = [t for t in phase.turns if t.done is not None and t.error is None]
    errors = Counter(t.error for t in phase.turns if t.error)
    errors.update(phase.other_errors)
    matched = [t for t in ok if t.model is not None]
    series = {
        "first_delta": [t.first_delta for t in ok if t.first_delta is not None],
        "first_delta_overhead": [
            t.first_delta - t.model_first for t in ok if t.first_delta is not None and t.model_first is not None
        ],
        "done": [t.done for t in ok if t.done is not None],
        "model": [t.model for t in matched if t.model is not None],
        "overhead": [t.done - t.model for t in matched if t.done is not None and t.model is not None],
    }
    stats = {
        name: {f"p{q}": (None if (v := percentile(values, q)) is None else round(v * 1000, 1)) for q in (50, 95, 99)}
        | {"max": round(max(values) * 1000, 1) if values else None}
        for name, values in series.items()
    }
    turns_done = len(ok)
    return {
        "server": phase.server,
        "turns_sent": len(phase.turns),
        "turns_ok": turns_done,
        "errors": sum(errors.values()),
        "errors_by_kind": dict(errors),
        "lost": phase.lost,
        "model_calls_unmatched": len(ok) - len(matched),
        "model_calls_max_per_turn": max((t.model_calls for t in phase.turns), default=0),
        "send_seconds": round(phase.send_seconds, 2),
        "turns_per_second": round(turns_done / phase.send_seconds, 1) if phase.send_seconds else 0.0,
        "ms": stats,
        "peak_pg_connections": phase.peak_connections,
        "peak_rss_mb": {k: round(v / 1024, 1) for k, v in sorted(phase.peak_rss_kb.items())},
        "peak_total_rss_mb": round(phase.peak_total_rss_kb / 1024, 1),
        "cpu_ms_per_turn": {k: round(v / turns_done, 2) if turns_done else None for k, v in phase.cpu.items()},
        "cpu_cores_used": {
            k: round(v / 1000 / phase.send_seconds, 2) if phase.send_seconds else None for k, v in phase.cpu.items()
        },
        "machine_busy_percent": round(100 * phase.machine_busy, 1),
        "server_cpu_in_kernel_percent": round(100 * phase.server_system_share, 1),
        "log": phase.log,
        "log_tracebacks": phase.log_tracebacks,
        "log_error_lines": phase.log_errors,
    }


def me_targets(results: dict[str, dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """The targets of `GET /me/` (workload "me"): no error, and, where `base` ran, server CPU per
    request no more than base's (the mean over the rounds of each)."""
    checks = []
    for name, result in results.items():
        if name.startswith("new"):
            ok = result["errors"] == 0 and result["turns_ok"] > 0
            checks.append((f"{name}: 0 errors", ok, f"{result['errors']} errors"))

    def mean_cpu(phase: str) -> float | None:
        values = [r["cpu_ms_per_turn"].get("server") for n, r in results.items() if n.split("#")[0] == phase]
        known = [v for v in values if v is not None]
        return sum(known) / len(known) if known else None

    new, base = mean_cpu("new"), mean_cpu("base")
    if new is not None and base:
        checks.append(
            ("server CPU per request <= base's", new <= base, f"{new:.2f} ms vs {base:.2f} ms: {new / base:.2f}x")
        )
    return checks


def targets(results: dict[str, dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """The targets of the product ("new"), against the floor measured in the same run if it was."""
    new = results["new"]
    overhead = new["ms"]["overhead"]["p95"]
    checks = [
        (
            "0 errors and 0 lost messages",
            new["errors"] == 0 and new["lost"]["lost"] == 0 and new["turns_ok"] == new["turns_sent"] > 0,
            f"{new['errors']} errors, {new['lost']['lost']} lost",
        ),
        (
            f"overhead p95 <= {TARGET_OVERHEAD_P95_MS:.0f} ms (an otherwise idle machine)",
            overhead is not None and overhead <= TARGET_OVERHEAD_P95_MS,
            f"{overhead} ms",
        ),
        (
            f"at most {TARGET_PG_CONNECTIONS} PostgreSQL connections",
            new["peak_pg_connections"] <= TARGET_PG_CONNECTIONS,
            f"peak {new['peak_pg_connections']}",
        ),
    ]
    floor = results.get("floor")
    if floor is None:
        return checks
    cpu, floor_cpu = new["cpu_ms_per_turn"].get("server"), floor["cpu_ms_per_turn"].get("server")
    if cpu is not None and floor_cpu:
        checks.append(
            (
                f"server CPU per turn <= {TARGET_CPU_OVER_FLOOR:g}x the floor's",
                cpu <= TARGET_CPU_OVER_FLOOR * floor_cpu,
                f"{cpu:.2f} ms vs {floor_cpu:.2f} ms: {cpu / floor_cpu:.2f}x",
            )
        )
    if floor["turns_per_second"]:
        ratio = new["turns_per_second"] / floor["turns_per_second"]
        checks.append(
            (
                f"turns/s >= {TARGET_RATE_OF_FLOOR:g}x the floor's",
                ratio >= TARGET_RATE_OF_FLOOR,
                f"{new['turns_per_second']} vs {floor['turns_per_second']}: {ratio:.2f}x",
            )
        )
    return checks


def ratios(results: dict[str, dict[str, Any]]) -> list[str]:
    """Server CPU per turn and turns/s of each phase over the floor's and over the product's."""
    lines = []
    for reference in ("floor", "new"):
        ref = results.get(reference)
        if ref is None:
            continue
        ref_cpu, ref_rate = ref["cpu_ms_per_turn"].get("server"), ref["turns_per_second"]
        for name, result in results.items():
            if name == reference:
                continue
            cpu = result["cpu_ms_per_turn"].get("server")
            parts = []
            if cpu is not None and ref_cpu:
                parts.append(f"server CPU per turn {cpu / ref_cpu:.2f}x")
            if ref_rate:
                parts.append(f"turns/s {result['turns_per_second'] / ref_rate:.2f}x")
            if parts:
                lines.append(f"  {name} / {reference}: " + ", ".join(parts))
    return lines


def fmt_ms(stats: dict[str, float | None]) -> str:
    if stats["p50"] is None:
        return "-"
    return f"{stats['p50']:.0f} / {stats['p95']:.0f} / {stats['max']:.0f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    rows: list[tuple[str, list[str]]] = [
        ("server", [r["server"] for r in results.values()]),
        ("turns ok / sent", [f"{r['turns_ok']} / {r['turns_sent']}" for r in results.values()]),
        (
            "errors (by kind)",
            [
                str(r["errors"])
                + (" (" + ", ".join(f"{k}: {n}" for k, n in r["errors_by_kind"].items()) + ")" if r["errors"] else "")
                for r in results.values()
            ],
        ),
        (
            "lost (no student msg / no reply)",
            [
                f"{r['lost']['lost']} ({r['lost']['no_student_message']} / {r['lost']['no_reply']})"
                for r in results.values()
            ],
        ),
        ("send phase wall (s)", [f"{r['send_seconds']:.1f}" for r in results.values()]),
        ("**turns/s**", [f"**{r['turns_per_second']:.1f}**" for r in results.values()]),
    ]
    for key, label in [
        ("first_delta", "first delta ms p50 / p95 / max"),
        ("first_delta_overhead", "first delta minus model's first chunk, ms"),
        ("done", "done ms p50 / p95 / max"),
        ("model", "model time ms p50 / p95 / max"),
        ("overhead", "**overhead** (done - model) ms p50 / p95 / max"),
    ]:
        rows.append((label, [fmt_ms(r["ms"][key]) for r in results.values()]))
    rows.append(("model calls per turn (max)", [str(r["model_calls_max_per_turn"]) for r in results.values()]))
    rows.append(("peak PostgreSQL connections", [str(r["peak_pg_connections"]) for r in results.values()]))
    rows.append(("peak RSS, all server processes (MB)", [f"{r['peak_total_rss_mb']:.0f}" for r in results.values()]))
    rows.append(
        (
            "peak RSS per process (MB)",
            [", ".join(f"{k.split()[0]} {v:.0f}" for k, v in r["peak_rss_mb"].items()) for r in results.values()],
        )
    )
    for key in [
        "server",
        "model runner",
        "load generator",
        "postgresql",
        "redis",
        "interrupts (network)",
        "everything else",
    ]:
        rows.append(
            (
                f"CPU ms per turn: {key} (cores)",
                [
                    f"{r['cpu_ms_per_turn'].get(key):.1f} ({r['cpu_cores_used'].get(key):.2f})"
                    if r["cpu_ms_per_turn"].get(key) is not None
                    else "-"
                    for r in results.values()
                ],
            )
        )
    rows.append(
        (
            "server CPU spent in the kernel (sys)",
            [f"{r['server_cpu_in_kernel_percent']:.0f}%" for r in results.values()],
        )
    )
    rows.append(("machine CPU busy during send phase", [f"{r['machine_busy_percent']:.0f}%" for r in results.values()]))
    rows.append(
        (
            "server log: tracebacks / ERROR lines",
            [f"{r['log_tracebacks']} / {r['log_error_lines']}" for r in results.values()],
        )
    )
    lines = ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join(lines)


EXPLANATION = """\
Times are from the load generator sending the request. "first delta": first `delta` event (new
only; it includes the scripted model's first inter-chunk pause, removed in the next row).
"done": the `done` event (new) or the whole 201 response (old). "model time": the scripted model
runner's own time for that turn's request, from receiving it to writing its last byte (a
uniform 1-2 s by design). "overhead" = done - model time: what the server adds (auth, database
steps, prompt, SDK call, relaying the stream, storing the reply), plus loopback transport and
this load generator's own scheduling delays. turns/s = completed turns / (barrier -> last turn
ended). CPU is /proc utime+stime over the send phase, per completed turn, with the average
cores used in brackets; everything shares the same machine. "interrupts" is the machine's irq +
softirq time (mostly the loopback network stack, in no process); "everything else" is the rest
of the machine's busy time: other users' processes and kernel threads."""


# --- Main ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--students", type=int, default=200, help="concurrent students (200)")
    parser.add_argument("--messages", type=int, default=3, help="messages per student, one after the other (3)")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers of the new server (2)")
    parser.add_argument("--timeout", type=float, default=300.0, help="deadline of each send phase, seconds (300)")
    parser.add_argument("--quick", action="store_true", help="50 students")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest run, for CI (under 90 s): 10 students x 2 messages, model 0.2-0.4 s, 1 worker, "
        "floor and new",
    )
    parser.add_argument(
        "--phases",
        default="floor,new",
        help="the servers measured, in this order, comma-separated, among: floor (bench/floor.py), new (this "
        "tree), base (the tree at --base-tree, served as this one is), old (the synchronous code of "
        f"{BASELINE_COMMIT} on gunicorn, in a git worktree). Default: floor,new",
    )
    parser.add_argument(
        "--base-tree", type=Path, default=None, help="a checkout of the code to compare with (the `base` phase)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="repeat the phases this many times, alternating (1)")
    parser.add_argument("--skip-baseline", action="store_true", help="measure the new server only")
    parser.add_argument(
        "--py-spy",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="profile the busiest uvicorn worker with py-spy for this long during the send phase",
    )
    parser.add_argument("--redis-db", type=int, default=13, help="dedicated Redis db, flushed after each server (13)")
    parser.add_argument(
        "--model-seconds",
        type=float,
        nargs=2,
        default=(1.0, 2.0),
        metavar=("LOW", "HIGH"),
        help="each model answer takes a uniform LOW-HIGH seconds (1 2)",
    )
    parser.add_argument(
        "--reply-words",
        type=int,
        default=0,
        help="words per reply (0: the scripted default, 'Let's work through it step by step.')",
    )
    parser.add_argument(
        "--workload",
        choices=("turn", "me"),
        default="turn",
        help="turn: the chat turn (default); me: GET /api/v1/me/, --requests per student",
    )
    parser.add_argument("--requests", type=int, default=50, help="GET /me/ per student, workload me (50)")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    parser.add_argument("--serve-model", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.students = min(args.students, 50)
    if args.smoke:
        args.students, args.messages, args.workers, args.timeout = 10, 2, 1, 60.0
        args.model_seconds = (0.2, 0.4)
    if args.workload == "me":
        args.messages = args.requests
    args.phases = ["new"] if args.skip_baseline else [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = [p for p in args.phases if p not in PHASES]
    if unknown or "new" not in args.phases:
        parser.error(f"--phases: {unknown or 'new is needed'}; among {', '.join(PHASES)}")
    if "base" in args.phases and args.base_tree is None:
        parser.error("--phases base needs --base-tree")
    return args


def phase_spec(name: str, args: argparse.Namespace, gunicorn: Path) -> ServerSpec:
    """How to serve phase `name` (the `old` tree is filled in by its worktree)."""
    if name == "floor":
        return ServerSpec(
            name="floor",
            description=f"bench/floor.py: Starlette, psycopg pool, 3 statements, {args.workers} workers",
            tree=ROOT,
            streaming=True,
            command=[
                sys.executable,
                "-m",
                "uvicorn",
                "bench.floor:app",
                "--host",
                "127.0.0.1",
                "--port",
                "{port}",
                "--workers",
                str(args.workers),
                "--no-access-log",
                "--backlog",
                "2048",
            ],
            env={},
        )
    if name in ("new", "base"):
        tree = ROOT if name == "new" else Path(args.base_tree).resolve()
        return ServerSpec(
            name=name,
            description=f"uvicorn ASGI, {args.workers} workers, SSE ({'working tree' if name == 'new' else tree})",
            tree=tree,
            streaming=True,
            command=[str(tree / "scripts" / "serve.sh"), "--no-access-log"],
            env={},
        )
    return ServerSpec(
        name="old",
        description=f"gunicorn WSGI 4 workers x 16 threads, JSON ({BASELINE_COMMIT}, DB_CONN_MAX_AGE=60)",
        tree=ROOT,
        streaming=False,
        command=[
            str(gunicorn),
            "tutor.wsgi:application",
            "-w",
            "4",
            "--threads",
            "16",
            "-b",
            "127.0.0.1:{port}",
            "--keep-alive",
            "5",
            "--backlog",
            "2048",
        ],
        env={"DB_CONN_MAX_AGE": "60"},
    )


def code_version() -> str:
    """The commit of the working tree measured as "new", and whether app files had changes."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    changed = [line[3:] for line in status.stdout.splitlines() if not line[3:].startswith("bench/")]
    return head.stdout.strip() + (f" + {len(changed)} uncommitted files outside bench/" if changed else "")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve_model:
        serve_model((args.model_seconds[0], args.model_seconds[1]), args.reply_words)
        return 0
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    started = datetime.now(UTC)
    gunicorn = ROOT / ".venv" / "bin" / "gunicorn"
    if "old" in args.phases and not gunicorn.exists():
        print("The old phase needs gunicorn: .venv/bin/pip install gunicorn", file=sys.stderr)
        return 2
    phases: list[Phase] = []
    seconds = (args.model_seconds[0], args.model_seconds[1])
    with model_runner(seconds, args.reply_words, stamp) as (model_base, model_pid):
        for round_number in range(1, args.rounds + 1):
            for name in args.phases:
                spec = phase_spec(name, args, gunicorn)
                label = name if round_number == 1 else f"{name}#{round_number}"
                if name == "old":
                    with baseline_worktree(stamp) as tree:
                        phase = run_phase(replace(spec, tree=tree), args, model_base, model_pid, stamp)
                else:
                    phase = run_phase(spec, args, model_base, model_pid, stamp)
                phase.name = label
                phases.append(phase)
    results = {p.name: summary(p) for p in phases}
    checks = me_targets(results) if args.workload == "me" else targets(results)
    machine = {
        "code": code_version(),
        "cpu": cpu_model(),
        "cores": cores(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if args.workload == "me":
        print(f"\n## GET /api/v1/me/ under load: {args.students} students x {args.messages} requests, all at once")
        print("(a turn below is one request; the model rows do not apply)\n")
    else:
        print(f"\n## Chat turn under load: {args.students} students x {args.messages} messages, all at once\n")
    print(f"{started:%Y-%m-%d %H:%M} UTC; {machine['cores']} cores, {machine['cpu']}; Python {machine['python']}")
    print(
        f"new = working tree at {machine['code']}; floor = bench/floor.py; base = {args.base_tree}; "
        f"old = {BASELINE_COMMIT}"
    )
    print(f"model: every answer takes a uniform {args.model_seconds[0]:g}-{args.model_seconds[1]:g} s\n")
    print(table(results))
    print()
    print(EXPLANATION)
    print("\nRatios (server CPU per turn, turns/s):")
    print("\n".join(ratios(results)) or "  -")
    print("\nTargets (new server):")
    for label, passed, value in checks:
        print(f"  {'PASS' if passed else 'FAIL'}  {label}: {value}")
    for name, result in results.items():
        other = result["cpu_cores_used"].get("everything else") or 0.0
        if other > 0.2:
            print(
                f"\nWARNING ({name}): other processes on the machine used {other:.2f} cores during the send phase; "
                "the figures above are not those of an idle machine."
            )
    for phase in phases:
        if phase.first_traceback:
            print(f"\nFirst traceback in the {phase.name} server's log ({phase.log}):\n{phase.first_traceback}")
        if phase.profile:
            print(f"\npy-spy profile of a {phase.name} server worker during the send phase:\n{phase.profile}")
    print("\nServer logs: " + ", ".join(p.log for p in phases))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "date": started.isoformat(timespec="seconds"),
        "machine": machine,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "serve_model"},
        "targets": [{"target": label, "pass": passed, "value": value} for label, passed, value in checks],
        "results": results,
        "explanation": EXPLANATION,
        "samples": {p.name: [asdict(t) for t in p.turns] for p in phases},
        "profile": {p.name: p.profile for p in phases if p.profile},
    }
    args.output.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"JSON: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
