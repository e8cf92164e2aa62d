"""The faults, one after another, and what is checked after them (in the database, in haproxy's
stats, in what the clients saw). Each fault returns its own figures (e.g. how long haproxy took
to mark a killed web node down); `Window` is the time span its checks cover.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from . import net
from .load import Record
from .services import WORKERS, Cluster

CUT_SECONDS = 30.0
PG_STOP_SECONDS = 20.0
# Error codes that mean "nothing was done wrong, send it again" (docs/api.md, the error table).
RETRYABLE = {"model_unavailable", "model_bad_response", "turn_failed", "database_unavailable",
             "service_unavailable", "server_shutting_down", "throttled"}  # fmt: skip


@dataclass
class Window:
    name: str
    start: float
    end: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)


def db(cluster: Cluster) -> psycopg.Connection[Any]:
    return psycopg.connect(cluster.env["DATABASE_URL"].replace("postgres://", "postgresql://"), connect_timeout=3)


class SummaryWatch:
    """When each conversation's summary memory was first seen (polled every second), so that the
    lag from the client's 202 to the stored summary is measured from the outside."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.seen: dict[int, float] = {}

    def poll(self) -> None:
        try:
            with db(self.cluster) as conn:
                rows = conn.execute(
                    "SELECT source_conversation_id FROM memory_aimemory WHERE kind = 'summary'"
                ).fetchall()
        except psycopg.Error:
            return  # PostgreSQL is stopped: seen later, the lag includes the outage
        now = time.monotonic()
        for (conversation,) in rows:
            self.seen.setdefault(int(conversation), now)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.to_thread(self.poll)
            await asyncio.sleep(1.0)


async def wait_for(predicate: Any, seconds: float, step: float = 0.1) -> float | None:
    """Seconds until `predicate()` held, or None after `seconds`."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if await asyncio.to_thread(predicate):
            return time.monotonic() - started
        await asyncio.sleep(step)
    return None


async def kill_web(cluster: Cluster) -> dict[str, Any]:
    """SIGKILL web1 (its process group) while its streams run; how long haproxy takes to mark it DOWN."""
    await wait_for(lambda: cluster.haproxy_status().get("web1") == "UP", 30)
    killed = time.monotonic()
    cluster.kill("web1")
    down = await wait_for(lambda: cluster.haproxy_status()["web1"].startswith("DOWN"), 30)
    cluster.start_web("web1")
    up = await wait_for(lambda: cluster.haproxy_status()["web1"] == "UP", 90, step=0.5)
    return {"lb_down_s": down, "back_up_s": up and time.monotonic() - killed}


def _running_summary(cluster: Cluster) -> tuple[int, str] | None:
    """(pid, worker node) of a worker process running a summary now, from summary_owner."""
    with db(cluster) as conn:
        owners = conn.execute(
            "SELECT summary_owner FROM conversations_conversation "
            "WHERE summary_status = 'pending' AND summary_owner <> ''"
        ).fetchall()
    for (owner,) in owners:
        pid = int(owner.rsplit(":", 1)[1])
        for node in WORKERS:
            proc = cluster.procs.get(node)
            if proc is not None and proc.poll() is None and _descends(pid, proc.pid):
                return pid, node
    return None


def _descends(pid: int, root: int) -> bool:
    while pid > 1:
        if pid == root:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
    return False


async def kill_worker(cluster: Cluster) -> dict[str, Any]:
    """SIGKILL the worker node whose process is running a summary, then start it again."""
    found: list[tuple[int, str]] = []

    def running() -> bool:
        hit = _running_summary(cluster)
        if hit:
            found.append(hit)
        return hit is not None

    waited = await wait_for(running, 60, step=0.2)
    if not found:
        return {"note": f"no summary seen running in {waited} s"}
    pid, node = found[-1]
    cluster.kill(node)
    await asyncio.sleep(2)
    cluster.start_worker(node)
    return {"killed": f"{node} (pid {pid} mid-summary)"}


async def restart_redis(cluster: Cluster) -> dict[str, Any]:
    started = time.monotonic()
    await asyncio.to_thread(cluster.restart_redis)
    return {"redis_down_s": round(time.monotonic() - started, 1)}


async def cut_worker(cluster: Cluster) -> dict[str, Any]:
    net.block_redis("worker1", True)
    try:
        await asyncio.sleep(CUT_SECONDS)
    finally:
        net.block_redis("worker1", False)
    return {"cut_s": CUT_SECONDS}


async def stop_postgres(cluster: Cluster) -> dict[str, Any]:
    await asyncio.to_thread(cluster.stop_postgres)
    try:
        await asyncio.sleep(PG_STOP_SECONDS)
    finally:
        await asyncio.to_thread(cluster.start_postgres)
    return {"pg_down_s": PG_STOP_SECONDS}


FAULTS = [
    ("kill web1 (SIGKILL mid-stream)", kill_web),
    ("kill a worker mid-summary", kill_worker),
    ("restart Redis", restart_redis),
    (f"cut worker1 off Redis {CUT_SECONDS:.0f} s", cut_worker),
    (f"stop PostgreSQL {PG_STOP_SECONDS:.0f} s", stop_postgres),
]


def check_messages(cluster: Cluster, record: Record) -> dict[str, int]:
    """Acknowledged messages missing or answered otherwise in the database; messages with two replies."""
    with db(cluster) as conn:
        rows = conn.execute(
            "SELECT s.client_message_id, array_agg(r.id) FILTER (WHERE r.id IS NOT NULL) FROM conversations_message s "
            "LEFT JOIN conversations_message r ON r.reply_to_id = s.id WHERE s.role = 'student' "
            "GROUP BY s.client_message_id"
        ).fetchall()
    replies = {str(cmid): list(ids or []) for cmid, ids in rows}
    lost = sum(1 for cmid, reply in record.acked.items() if reply not in replies.get(cmid, []))
    return {
        "acked": len(record.acked),
        "lost": lost,
        "two_replies": sum(1 for ids in replies.values() if len(ids) > 1),
        "gave_up": len(record.gave_up),
        "stored_unanswered": sum(1 for ids in replies.values() if not ids),
    }


def check_summaries(cluster: Cluster) -> dict[int, int]:
    """Ended conversation -> its number of summary memories."""
    with db(cluster) as conn:
        rows = conn.execute(
            "SELECT c.id, count(m.id) FROM conversations_conversation c LEFT JOIN memory_aimemory m "
            "ON m.source_conversation_id = c.id AND m.kind = 'summary' WHERE c.status = 'ended' GROUP BY c.id"
        ).fetchall()
    return {int(c): int(n) for c, n in rows}


def error_figures(record: Record, window: Window) -> dict[str, Any]:
    errors = [e for e in record.errors if window.start <= e.at < window.end]
    http = [e for e in errors if e.status]
    return {
        "errors": len(errors),
        "cut": len(errors) - len(http),
        "not_json": sum(1 for e in http if not e.json),
        "wrong_retry_safe": sum(1 for e in http if e.json and (e.code in RETRYABLE) != bool(e.retry_safe)),
        "codes": dict(Counter(f"{e.status} {e.code} rs={e.retry_safe}" for e in errors)),
    }
