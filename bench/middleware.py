"""What each middleware costs a trivial request: `GET /api/v1/me/` through Django's ASGI handler.

    DATABASE_URL=postgres://... .venv/bin/python bench/middleware.py [--rounds 600] [--batch 1]
        [--profile] [--smoke] [--json out.json]

Migrates the configured database and makes one student with an API token. Then builds, in this
process, one ASGI handler per stack: the whole MIDDLEWARE, the same without each middleware in
turn, and none at all; plus the application as uvicorn serves it (tutor.asgi: static files, the
drain and the MCP routing around the whole stack). In rounds, each stack answers `--batch`
requests (token authentication, DRF, the view, the JSON response, as a client of the production
server sends them), the order of the stacks rotating from round to round so that the machine's
drift falls on all of them. Each request's CPU time is that of the whole process (the event loop
and the thread the synchronous view runs on), from `time.process_time`; the database's own CPU is
not in it. Prints, for each stack, the median and 90th percentile CPU per request, the median
wall time and the queries per request, and for each middleware what removing it saves (the
median's difference: its cost). `--profile` adds cProfile's view of the whole stack (the event
loop's thread and the threads of the synchronous code, merged). Removes what it made at the end.
`--smoke`: 5 rounds. What it measured: bench/README.md (`middleware.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
# As the production server runs (scripts/serve.sh, bench/load.py): DEBUG off, metrics in
# prometheus-client's multiprocess mode, no embedder to load.
os.environ.setdefault("DJANGO_DEBUG", "0")
os.environ.setdefault("EMBEDDINGS_BACKEND", "none")
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="tutor-bench-metrics-"))
import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.backends.signals import connection_created  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from accounts.models import User  # noqa: E402
from bench.load import run_async  # noqa: E402
from bench.machine import cores, cpu_model, load, ram_gb  # noqa: E402

USERNAME = "bench-middleware-student"
PATH = "/api/v1/me/"
App = Callable[[dict[str, Any], Any, Any], Any]
# A middleware that refuses to run without another goes with it (subclasses included).
NEEDS = {
    "django.contrib.auth.middleware.AuthenticationMiddleware": "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware": "django.contrib.sessions.middleware.SessionMiddleware",
}


class QueryCounter:
    """Counts the queries of every connection (the view runs on another thread than the loop's),
    put on each as it connects (Django's `execute_wrappers`); counts only while `active`."""

    def __init__(self) -> None:
        self.active = False
        self.count = 0

    def __call__(self, execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
        if self.active:
            self.count += 1
        return execute(sql, params, many, context)

    def attach(self, sender: Any = None, connection: Any = None, **kwargs: Any) -> None:
        if connection is not None and self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)


def short(path: str) -> str:
    """A middleware's name in the table: its class's."""
    return path.rpartition(".")[2]


def stacks() -> dict[str, App]:
    """{label: ASGI application}: the whole stack, each middleware removed in turn, none."""
    from tutor.asgi import application

    full = list(settings.MIDDLEWARE)
    built: dict[str, App] = {"served (tutor.asgi)": application}

    def needs(path: str, other: str) -> bool:
        """Whether the middleware at `path` cannot run without the one at `other`."""
        return any(
            issubclass(import_string(path), import_string(dependent))
            and issubclass(import_string(other), import_string(needed))
            for dependent, needed in NEEDS.items()
        )

    variants = {"whole stack": full}
    for removed in full:
        gone = {removed, *(m for m in full if needs(m, removed))}
        label = f"without {short(removed)}" + "".join(f" + {short(m)}" for m in full if m in gone and m != removed)
        variants[label] = [m for m in full if m not in gone]
    variants["no middleware"] = []
    for label, middleware in variants.items():
        with override_settings(MIDDLEWARE=middleware):
            built[label] = ASGIHandler()
    return built


def scope(key: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"authorization", f"Token {key}".encode()),
            (b"accept", b"application/json"),
            (b"user-agent", b"bench-middleware"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def request(app: App, request_scope: dict[str, Any]) -> int:
    """One request through `app`; its status. The client stays connected until the response."""
    received = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # Django's disconnect listener: cancelled once answered
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])

    await app(dict(request_scope), receive, send)
    return status


async def measure(
    apps: dict[str, App], request_scope: dict[str, Any], *, rounds: int, batch: int, counter: QueryCounter
) -> dict[str, dict[str, Any]]:
    """{label: {cpu_us, wall_us: [...], queries}}, the stacks alternated round by round."""
    labels = list(apps)
    samples: dict[str, dict[str, Any]] = {label: {"cpu_us": [], "wall_us": [], "queries": 0} for label in labels}
    for label in labels:  # warm-up: each stack's first requests (imports, the pool, caches)
        for _ in range(5):
            status = await request(apps[label], request_scope)
            if status != 200:
                raise SystemExit(f"{label}: GET {PATH} answered {status}")
        counter.count, counter.active = 0, True
        await request(apps[label], request_scope)
        counter.active = False
        samples[label]["queries"] = counter.count
    for round_number in range(rounds):
        shift = round_number % len(labels)
        for label in labels[shift:] + labels[:shift]:
            app, cpu, wall = apps[label], samples[label]["cpu_us"], samples[label]["wall_us"]
            for _ in range(batch):
                cpu_started, wall_started = time.process_time(), time.perf_counter()
                await request(app, request_scope)
                cpu.append((time.process_time() - cpu_started) * 1e6)
                wall.append((time.perf_counter() - wall_started) * 1e6)
    return samples


async def profile(app: App, request_scope: dict[str, Any], count: int) -> str:
    """cProfile of `count` requests through `app`, on every thread: the event loop's and the
    threads Django runs synchronous code on (a new one per request: asgiref's
    ThreadSensitiveContext), merged; top functions by own time and by cumulative time."""
    profiles: list[cProfile.Profile] = []

    def start_in_thread(frame: Any, event: str, arg: Any) -> None:
        # threading's profile hook of a new thread: its first event hands over to cProfile.
        thread_profile = cProfile.Profile()
        profiles.append(thread_profile)
        thread_profile.enable()

    loop_profile = cProfile.Profile()
    threading.setprofile(start_in_thread)
    loop_profile.enable()
    try:
        for _ in range(count):
            await request(app, request_scope)
    finally:
        loop_profile.disable()
        threading.setprofile(None)
    out = io.StringIO()
    stats = pstats.Stats(loop_profile, stream=out)
    for thread_profile in profiles:
        stats.add(thread_profile)
    stats.sort_stats("tottime").print_stats(35)
    stats.sort_stats("cumulative").print_stats(60)
    return out.getvalue()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--batch", type=int, default=1, help="requests per stack and round (1)")
    parser.add_argument("--profile", action="store_true", help="cProfile of the whole stack, 2,000 requests")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.batch = 5, 1
    call_command("migrate", verbosity=0)
    User.objects.filter(username=USERNAME).delete()
    started = datetime.now(UTC)
    result: dict[str, Any] = {
        "date": started.isoformat(timespec="seconds"),
        "database": connection.vendor,
        "machine": {"cpu": cpu_model(), "cores": cores(), "ram_gb": ram_gb(), "load_1m_before": load()},
        "size": {"rounds": args.rounds, "batch": args.batch},
    }
    counter = QueryCounter()
    connection_created.connect(counter.attach, weak=False)
    try:
        student = User.objects.create_user(USERNAME, role=User.Role.STUDENT)
        key = Token.objects.create(user=student).key
        connection.close()  # the view's thread takes its own connection
        apps = stacks()
        samples = run_async(measure(apps, scope(key), rounds=args.rounds, batch=args.batch, counter=counter))
        profile_text = run_async(profile(apps["whole stack"], scope(key), 2000)) if args.profile else ""
    finally:
        connection_created.disconnect(counter.attach)
        User.objects.filter(username=USERNAME).delete()
    result["machine"]["load_1m_after"] = load()
    whole = statistics.median(samples["whole stack"]["cpu_us"])
    stacks_out: dict[str, Any] = {}
    for label, sample in samples.items():
        p50 = statistics.median(sample["cpu_us"])
        stacks_out[label] = {
            "cpu_us_p50": round(p50, 1),
            "cpu_us_p90": round(percentile(sample["cpu_us"], 0.9), 1),
            "wall_us_p50": round(statistics.median(sample["wall_us"]), 1),
            "queries": sample["queries"],
            "saves_us": round(whole - p50, 1) if label.startswith("without ") else None,
        }
    result["stacks"] = stacks_out
    print(
        f"\n## GET {PATH}: CPU per request by middleware stack ({args.rounds} rounds x {args.batch} requests)\n\n"
        f"{result['date']}; {cores()} cores, {cpu_model()}; load average {result['machine']['load_1m_before']} "
        f"before, {result['machine']['load_1m_after']} after; {connection.vendor}\n"
    )
    print("| stack | CPU us p50 | p90 | wall us p50 | queries | removing it saves (us of CPU, p50) |")
    print("|---|---|---|---|---|---|")
    for label, row in stacks_out.items():
        saves = "" if row["saves_us"] is None else f"{row['saves_us']:+.0f}"
        print(
            f"| {label} | {row['cpu_us_p50']:.0f} | {row['cpu_us_p90']:.0f} | {row['wall_us_p50']:.0f} "
            f"| {row['queries']} | {saves} |"
        )
    if profile_text:
        print("\ncProfile of the whole stack, 2,000 requests:\n")
        print(profile_text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
