# ruff: noqa: S603  (runs manage.py and the seed code with arguments built here)
"""The cluster fault test (`make cluster-test`, as root): build the cluster, drive the students,
inject the faults one after another, check, print the table, tear everything down (also on
Ctrl-C, SIGTERM or SIGHUP, and when anything fails).

    python -m scripts.cluster.run [--students 200] [--settle 30] [--output PATH]
    python -m scripts.cluster.run --teardown     # remove what a killed run left behind
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import fcntl
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import faults, load, net
from .services import LB_PORT, PY, ROOT, WEBS, WORKERS, Cluster

SEED = """
import json, secrets, sys
import django
django.setup()
from accounts.models import Enrollment, User
from accounts.services import classroom_create, school_default
from rest_framework.authtoken.models import Token
count = int(sys.argv[1])
teacher = User.objects.create(username="cluster-teacher", role="teacher", password="!")
classroom = classroom_create(name="Cluster class", school=school_default(), teachers=[teacher])
students = User.objects.bulk_create([User(username=f"cluster-{i}", role="student", password="!") for i in range(count)])
Enrollment.objects.bulk_create([Enrollment(classroom=classroom, student=s) for s in students])
tokens = Token.objects.bulk_create([Token(user=s, key=secrets.token_hex(20)) for s in students])
print(json.dumps([t.key for t in tokens]))
"""
SUMMARY_WAIT_SECONDS = 300.0


def build(cluster: Cluster, students: int) -> list[str]:
    net.build()
    cluster.start_postgres()
    cluster.create_database()
    cluster.start_redis()
    cluster.start_model()
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=cluster.env, check=True)
    seeded = subprocess.run([PY, "-c", SEED, str(students)], cwd=ROOT, env=cluster.env, check=True, capture_output=True)
    for node in WEBS:
        cluster.start_web(node)
    for node in WORKERS:
        cluster.start_worker(node)
    cluster.start_scheduler()
    cluster.start_haproxy()
    deadline = time.monotonic() + 120
    while set(cluster.haproxy_status().values()) != {"UP"}:
        if time.monotonic() > deadline:
            raise RuntimeError(f"web nodes not up in haproxy: {cluster.haproxy_status()}; logs in {cluster.dir}")
        time.sleep(0.5)
    return list(json.loads(seeded.stdout.decode().strip().splitlines()[-1]))


async def drive(cluster: Cluster, keys: list[str], settle: float) -> dict[str, Any]:
    record, stop, watch_stop = load.Record(), asyncio.Event(), asyncio.Event()
    watch = faults.SummaryWatch(cluster)
    base = f"http://{net.address('lb')}:{LB_PORT}"
    windows: list[faults.Window] = []
    async with load.make_client(len(keys)) as client:
        students = [asyncio.create_task(load.student(client, base, key, stop, record)) for key in keys]
        watcher = asyncio.create_task(watch.run(watch_stop))
        windows.append(faults.Window("no fault", time.monotonic()))
        await asyncio.sleep(settle)
        for name, fault in faults.FAULTS:
            windows[-1].end = time.monotonic()
            print(f"-- {name}", flush=True)
            windows.append(faults.Window(name, time.monotonic()))
            windows[-1].figures = await fault(cluster)
            print(f"   {windows[-1].figures}", flush=True)
            await asyncio.sleep(settle)
            # A process that exited on its own (not the fault's target, which is started again).
            if died := cluster.dead():
                windows[-1].figures["died"] = died
                print(f"   died: {died}", flush=True)
        stop.set()
        await asyncio.gather(*students)
        windows[-1].end = time.monotonic()
        print(f"-- load stopped; waiting up to {SUMMARY_WAIT_SECONDS:.0f} s for the summaries", flush=True)
        ended = set(record.ended)
        deadline = time.monotonic() + SUMMARY_WAIT_SECONDS
        while not ended <= set(watch.seen) and time.monotonic() < deadline:
            await asyncio.sleep(1)
        watch_stop.set()
        await watcher
    return {"record": record, "windows": windows, "seen": watch.seen}


def figures(cluster: Cluster, result: dict[str, Any]) -> dict[str, Any]:
    record: load.Record = result["record"]
    seen: dict[int, float] = result["seen"]
    rows = []
    for w in result["windows"]:
        lags = [seen[c] - at for c, at in record.ended.items() if w.start <= at < w.end and c in seen]
        turns = [s for at, s in record.turn_seconds if w.start <= at < w.end]
        rows.append({
            "window": w.name, "seconds": round(w.end - w.start), **w.figures,
            "turns_acked": len(turns), "turn_p50_s": round(statistics.median(turns), 1) if turns else None,
            "turn_max_s": round(max(turns), 1) if turns else None,
            "ended": sum(1 for at in record.ended.values() if w.start <= at < w.end),
            "summary_lag_max_s": round(max(lags), 1) if lags else None,
            **faults.error_figures(record, w),
        })  # fmt: skip
    summaries = faults.check_summaries(cluster)
    return {
        "windows": rows,
        "messages": faults.check_messages(cluster, record),
        "ended_conversations": len(summaries),
        "summaries_missing": sum(1 for n in summaries.values() if n == 0),
        "summaries_more_than_one": sum(1 for n in summaries.values() if n > 1),
        "summary_lag_max_s": round(max((seen[c] - at for c, at in record.ended.items() if c in seen), default=0), 1),
        "retries": dict(record.retries),
    }


def verdict(result: dict[str, Any]) -> list[str]:
    problems = []
    m = result["messages"]
    if m["lost"] or m["two_replies"]:
        problems.append(f"{m['lost']} acknowledged messages lost, {m['two_replies']} with two replies")
    if result["summaries_missing"] or result["summaries_more_than_one"]:
        missing, doubled = result["summaries_missing"], result["summaries_more_than_one"]
        problems.append(f"summaries: {missing} missing, {doubled} doubled")
    for row in result["windows"]:
        if "lb_down_s" in row and (row["lb_down_s"] is None or row["lb_down_s"] > 5):
            problems.append(f"haproxy took {row['lb_down_s']} s to mark the killed node down")
        if row.get("died"):
            problems.append(f"{row['window']}: {', '.join(row['died'])} exited")
        if row["not_json"] or row["wrong_retry_safe"]:
            name, wrong = row["window"], row["wrong_retry_safe"]
            problems.append(f"{name}: {row['not_json']} non-JSON errors, {wrong} wrong retry_safe")
    return problems


def print_table(result: dict[str, Any]) -> None:
    cols = ["window", "seconds", "turns_acked", "turn_p50_s", "turn_max_s", "ended", "summary_lag_max_s",
            "errors", "cut", "not_json", "wrong_retry_safe"]  # fmt: skip
    print("\n" + " | ".join(cols))
    for row in result["windows"]:
        print(" | ".join(str(row.get(c)) for c in cols))
        extra = {k: v for k, v in row.items() if k not in cols}
        if extra:
            print(f"    {extra}")
    print({k: v for k, v in result.items() if k != "windows"})


def _exit_with_parent() -> None:
    """SIGTERM to this process when its parent (`make`) goes away, e.g. killed by SIGTERM, which
    make does not pass on: the teardown then runs as for a SIGTERM of our own."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--settle", type=float, default=30.0, help="seconds of load before and after each fault")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--teardown", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("the cluster test needs root (network namespaces, iptables)")
    lock = Path(tempfile.gettempdir(), f"{net.PREFIX}-cluster.lock").open("w")  # noqa: SIM115 (held to the end)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("another cluster run is in progress (its teardown would remove this one's namespaces)")
    if args.teardown:
        print("removed:", net.teardown() or "nothing")
        return
    left = net.teardown()
    if left:
        print(f"removed what an earlier run left: {left}")
    workdir = Path(tempfile.mkdtemp(prefix="tutor-cluster-"))
    cluster = Cluster(workdir)

    def cleanup() -> None:
        if cluster.stopped:
            return
        cluster.stopped = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the teardown short
        cluster.stop_all()
        net.teardown()
        for name in ("pg", "redis", "var"):
            shutil.rmtree(workdir / name, ignore_errors=True)

    atexit.register(cleanup)
    # SIGTERM and SIGHUP stop the run as Ctrl-C does (asyncio.run cancels the load on SIGINT).
    for stopping in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stopping, lambda signum, frame: signal.raise_signal(signal.SIGINT))
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    started = datetime.now(UTC)
    try:
        keys = build(cluster, args.students)
        print(f"cluster up ({args.students} students; logs in {workdir})", flush=True)
        result = figures(cluster, asyncio.run(drive(cluster, keys, args.settle)))
    except KeyboardInterrupt:
        cleanup()
        sys.exit("interrupted: the cluster is torn down")
    finally:
        cleanup()
    result["run"] = {"date": started.isoformat(timespec="seconds"), "students": args.students,
                     "machine": f"{platform.node()} {os.cpu_count()} cores", "settle_s": args.settle}  # fmt: skip
    print_table(result)
    if args.output:
        args.output.write_text(json.dumps(result, indent=2, default=str))
    problems = verdict(result)
    for problem in problems:
        print("FAIL:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
