"""Which queues a worker reads: each worker names its queues in the broker every
QUEUE_HEARTBEAT_SECONDS, and a queue that no worker has named for three of those has no consumer.

Its tasks wait for ever, and nothing else would say so: `/health/ready` shows a warning
(`core.health.queues`), `/metrics` has `tutor_queue_consumers{queue}`, and the web process logs
a warning naming the queue and the age of its oldest task
(`core.metrics_collector.queues_without_consumer`).

Where a worker's names are kept: with Redis, a sorted set per queue (`_tutor.consumers.<queue>`,
each worker a member scored by the time it last named the queue, the set expiring with its
last member); with the filesystem broker, a file per queue and worker under the broker's folder,
touched at each heartbeat. A worker that stops removes its names at once (`gone`).
"""

from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

import redis
from django.conf import settings

KEY = "_tutor.consumers.{queue}"
# Neither a heartbeat nor a reader waits longer than this for Redis.
TIMEOUT_SECONDS = 0.5


def heartbeat_seconds() -> float:
    return float(settings.QUEUE_HEARTBEAT_SECONDS)


def ttl_seconds() -> float:
    """How long a worker's naming of a queue holds: three heartbeats, so that one late heartbeat
    (a busy machine) does not make a queue look abandoned."""
    return 3 * heartbeat_seconds()


def _folder() -> Path | None:
    folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in")
    return Path(str(folder)).parent / "consumers" if folder else None


def _file(folder: Path, queue: str, worker: str) -> Path:
    return folder / f"{quote(queue, safe='')}@@{quote(worker, safe='')}"


def _on_redis() -> bool:
    return str(settings.CELERY_BROKER_URL).startswith("redis")


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS)


def _redis() -> redis.Redis:
    return _client(settings.CELERY_BROKER_URL)


def heartbeat(queues: list[str], worker: str) -> None:
    """Name `queues` as read by `worker` now. Raises the broker's error when it is down."""
    now = time.time()
    if _on_redis():
        client = _redis()
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                key = KEY.format(queue=queue)
                pipe.zadd(key, {worker: now})
                pipe.zremrangebyscore(key, "-inf", now - ttl_seconds())
                pipe.expire(key, int(ttl_seconds()) + 1)
            pipe.execute()
        return
    folder = _folder()
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    for queue in queues:
        _file(folder, queue, worker).touch()


def gone(queues: list[str], worker: str) -> None:
    """`worker` stops reading `queues` (a worker stopping)."""
    if _on_redis():
        client = _redis()
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.zrem(KEY.format(queue=queue), worker)
            pipe.execute()
        return
    folder = _folder()
    if folder is not None:
        for queue in queues:
            _file(folder, queue, worker).unlink(missing_ok=True)


def consumers(queues: list[str]) -> dict[str, int]:
    """How many workers named each queue within `ttl_seconds()`. Raises the broker's error."""
    since = time.time() - ttl_seconds()
    if _on_redis():
        client = _redis()
        with client.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.zcount(KEY.format(queue=queue), since, "+inf")
            counts = pipe.execute()
        return {queue: int(count) for queue, count in zip(queues, counts, strict=True)}
    folder = _folder()
    found = dict.fromkeys(queues, 0)
    if folder is None or not folder.exists():
        return found
    for queue in queues:
        for path in folder.glob(f"{quote(queue, safe='')}@@*"):
            try:
                if path.stat().st_mtime >= since:
                    found[queue] += 1
            except FileNotFoundError:  # a worker stopping meanwhile
                continue
    return found
