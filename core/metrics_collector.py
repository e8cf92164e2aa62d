"""What `/metrics` reads at each scrape rather than counts: the depth of each Celery queue and
the age of its oldest task (from the broker), and the backlogs kept in the database.

- `tutor_queue_depth{queue}`: tasks waiting in the queue (Redis: the lengths of its lists, one per
  priority; the filesystem broker: its message files).
- `tutor_queue_oldest_age_seconds{queue}`: how long the oldest waiting task has waited, from the
  `sent_at` header every task gets when it is published (tutor.celery); 0 for an empty queue.
- `tutor_queue_tasks{queue, task}`: waiting tasks by task name, read from the oldest
  METRICS_QUEUE_SCAN messages of each queue (scaled to the queue's depth when it holds more: an
  estimate then). The extraction and consolidation backlogs are its `memory.tasks.
  memory_facts_extract` and `memory.tasks.memory_consolidate` series: they have no row to count.
- `tutor_queue_consumers{queue}`: the workers that read the queue (core.consumers); a queue
  without any is also logged, with the age of its oldest task.
- `tutor_backlog{kind}`: rows waiting for background work, counted with an indexed filter
  (METRICS_BACKLOGS: e.g. summaries pending, files waiting for extraction).

A broker or a database that does not answer costs the scrape its own samples, never an error:
`tutor_metrics_source_up{source}` says which one was read.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import redis
from django.apps import apps
from django.conf import settings
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from core import consumers as queue_consumers
from core.background import worker_queues

logger = logging.getLogger(__name__)

# kombu's Redis transport: a queue of priority p > 0 is the list "<queue>\x06\x16<p>".
_PRIORITY_SEPARATOR = "\x06\x16"
_PRIORITY_STEPS = (0, 3, 6, 9)
# A scrape never waits longer than this for the broker.
BROKER_TIMEOUT_SECONDS = 0.5


def queue_names() -> list[str]:
    """The queues watched: METRICS_QUEUES if set, else the queues the workers read
    (core.background.worker_queues)."""
    if settings.METRICS_QUEUES:
        return list(settings.METRICS_QUEUES)
    return worker_queues()


@lru_cache(maxsize=4)
def broker_client(url: str) -> redis.Redis:
    """One client per broker URL and process, that never waits longer than
    BROKER_TIMEOUT_SECONDS."""
    return redis.Redis.from_url(
        url, socket_timeout=BROKER_TIMEOUT_SECONDS, socket_connect_timeout=BROKER_TIMEOUT_SECONDS
    )


def _headers(payload: bytes | str | None) -> dict[str, Any]:
    if not payload:
        return {}
    try:
        headers = json.loads(payload).get("headers", {})
    except (ValueError, TypeError, AttributeError):
        return {}
    return headers if isinstance(headers, dict) else {}


def _sent_at(headers: dict[str, Any]) -> float | None:
    try:
        value = headers.get("sent_at")
        return float(value) if value is not None else None
    except (ValueError, TypeError):
        return None


@dataclass
class QueueState:
    """A queue at one scrape: how many tasks wait, the oldest one's age, and the waiting tasks
    by name (counted on the oldest `scan` messages, then scaled to `depth`)."""

    depth: int = 0
    oldest_age: float = 0.0
    tasks: dict[str, float] = field(default_factory=dict)


def _queue_state(depth: int, now: float, scanned: list[dict[str, Any]]) -> QueueState:
    sent = [s for s in (_sent_at(h) for h in scanned) if s is not None]
    names = Counter(str(h.get("task") or "unknown") for h in scanned)
    scale = depth / len(scanned) if scanned and depth > len(scanned) else 1.0
    return QueueState(
        depth=depth,
        oldest_age=max(0.0, now - min(sent)) if sent else 0.0,
        tasks={name: round(count * scale, 1) for name, count in names.items()},
    )


def redis_queues(url: str, names: list[str], scan: int = 500) -> dict[str, QueueState]:
    """Each queue's state, from the Redis broker at `url` in one round trip: every priority
    list's length, and the oldest `scan` messages of each (kombu pushes on the left and takes
    from the right, so the oldest are at the end)."""
    client = broker_client(url)
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            for step in _PRIORITY_STEPS:
                key = name if step == 0 else f"{name}{_PRIORITY_SEPARATOR}{step}"
                pipe.llen(key)
                if step == 0:
                    pipe.lrange(key, -scan, -1)
                else:
                    pipe.lindex(key, -1)
        replies = pipe.execute()
    now = time.time()
    result: dict[str, QueueState] = {}
    per_queue = 2 * len(_PRIORITY_STEPS)
    for i, name in enumerate(names):
        chunk = replies[i * per_queue : (i + 1) * per_queue]
        depth = sum(int(n or 0) for n in chunk[0::2])
        oldest = chunk[1][:] + [m for m in chunk[3::2] if m]
        result[name] = _queue_state(depth, now, [_headers(m) for m in oldest])
    return result


def filesystem_queues(folder: Path, names: list[str], scan: int = 500) -> dict[str, QueueState]:
    """The same from kombu's filesystem broker: files "<time>_<uuid>.<queue>.msg" in `folder`
    (the oldest first, by name)."""
    now = time.time()
    found: dict[str, list[Path]] = {name: [] for name in names}
    for path in folder.glob("*.msg"):
        queue = path.name[: -len(".msg")].split(".", 1)[-1]
        if queue in found:
            found[queue].append(path)
    result = {}
    for name, paths in found.items():
        scanned = []
        for path in sorted(paths)[:scan]:
            try:
                headers = _headers(path.read_bytes())
                headers.setdefault("sent_at", path.stat().st_mtime)
            except FileNotFoundError:  # taken meanwhile
                continue
            scanned.append(headers)
        result[name] = _queue_state(len(paths), now, scanned)
    return result


def backlogs() -> dict[str, int]:
    """Rows waiting per METRICS_BACKLOGS entry: {kind: ("app_label.Model", {filter})}."""
    counts = {}
    for kind, (label, filters) in settings.METRICS_BACKLOGS.items():
        counts[kind] = apps.get_model(label).objects.filter(**filters).count()
    return counts


class QueueCollector(Collector):
    """Queue depths, oldest ages and backlogs, read when the registry is collected."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("tutor_metrics_source_up", "Whether a scrape could read a source.", labels=["source"])
        depth = GaugeMetricFamily("tutor_queue_depth", "Tasks waiting in a Celery queue.", labels=["queue"])
        age = GaugeMetricFamily(
            "tutor_queue_oldest_age_seconds", "Age of the oldest task waiting in a queue.", labels=["queue"]
        )
        tasks = GaugeMetricFamily(
            "tutor_queue_tasks",
            "Tasks waiting in a queue, by task name (estimated past the scan).",
            labels=["queue", "task"],
        )
        consumers = GaugeMetricFamily(
            "tutor_queue_consumers",
            "Workers that read a queue (0: its tasks wait for ever).",
            labels=["queue"],
        )
        try:
            for name, state in self._queues().items():
                depth.add_metric([name], state.depth)
                age.add_metric([name], state.oldest_age)
                for task, count in sorted(state.tasks.items()):
                    tasks.add_metric([name, task], count)
            counts = queue_consumers.consumers(queue_names())
            for name, count in counts.items():
                consumers.add_metric([name], count)
            queues_without_consumer(counts)
            up.add_metric(["broker"], 1)
        except (redis.RedisError, OSError) as exc:
            logger.warning("metrics: the broker could not be read: %s", exc)
            up.add_metric(["broker"], 0)
        backlog = GaugeMetricFamily("tutor_backlog", "Rows waiting for background work.", labels=["kind"])
        try:
            for kind, count in backlogs().items():
                backlog.add_metric([kind], count)
            up.add_metric(["database"], 1)
        except Exception as exc:  # any database error: the scrape goes on without the backlogs
            logger.warning("metrics: the backlogs could not be counted: %s", exc)
            up.add_metric(["database"], 0)
        yield from (depth, age, tasks, consumers, backlog, up)

    @staticmethod
    def _queues() -> dict[str, QueueState]:
        return read_queues(queue_names(), settings.METRICS_QUEUE_SCAN)


def read_queues(names: list[str], scan: int) -> dict[str, QueueState]:
    """Each queue's state, from the configured broker (Redis, or the filesystem broker's folder)."""
    url: str = settings.CELERY_BROKER_URL
    if url.startswith("redis"):
        return redis_queues(url, names, scan)
    folder: Any = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in")
    return filesystem_queues(Path(folder), names, scan) if folder else {}


# --- Queues without a consumer (core.consumers) ---------------------------------------------------

# A warning about a queue without a consumer is logged at most this often per queue and process:
# readiness is polled each second.
LOG_EVERY_SECONDS = 60.0

_logged_at: dict[str, float] = {}


@dataclass(frozen=True)
class Abandoned:
    """A queue no worker reads: its waiting tasks and how long the oldest has waited."""

    queue: str
    depth: int
    oldest_age: float

    def __str__(self) -> str:
        return f"{self.queue} ({self.depth} waiting, the oldest for {self.oldest_age:.0f} s)"


def queues_without_consumer(counts: dict[str, int] | None = None) -> list[Abandoned]:
    """The queues watched (`queue_names()`) that no worker reads, each logged as a warning (at
    most once a minute per queue and process). `counts`: the workers per queue, when the caller
    has read them (core.consumers.consumers). Raises the broker's error."""
    names = queue_names()
    if counts is None:
        counts = queue_consumers.consumers(names)
    empty = [name for name in names if counts.get(name, 0) == 0]
    if not empty:
        return []
    states = read_queues(empty, scan=1)
    abandoned = []
    now = time.monotonic()
    for name in empty:
        state = states.get(name)
        queue = Abandoned(queue=name, depth=state.depth if state else 0, oldest_age=state.oldest_age if state else 0.0)
        abandoned.append(queue)
        if now - _logged_at.get(name, -LOG_EVERY_SECONDS) >= LOG_EVERY_SECONDS:
            _logged_at[name] = now
            logger.warning(
                "queue %s has no consumer: %d tasks wait, the oldest for %.0f s (start a worker that reads it)",
                name,
                queue.depth,
                queue.oldest_age,
            )
    return abandoned
