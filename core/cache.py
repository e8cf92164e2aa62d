"""The shared cache: Redis when CACHE_URL (or REDIS_URL) names one, else files under var/.

It holds only what may be lost (throttle counts, what was learned of the model endpoints), so an
outage must not fail a request. `RedisCache` answers the ordinary operations while Redis is
unreachable as misses (`get` returns the default, `set`, `add`, `touch` and `delete` and their
`_many` forms store nothing; `incr`, which nothing here uses, still raises), logs
the event `cache_unavailable` (once a minute per process and kind of key, with the number of
operations missed) and counts them in the Prometheus counter `tutor_cache_outage_misses_total`,
and leaves Redis alone for RETRY_SECONDS after a failure, so that an
unreachable host costs one request its connect timeout rather than every request.

Counters are the exception: `counter_add`, `counter_get` and `counter_delete` are atomic on every
backend (one Lua script on Redis; a lock, held across processes for the file cache), and they
raise `CacheUnavailable` rather than pretend, for the caller that must not go on without them:
the login lockout (core.throttles). So is `rate_take`, the throttles' sliding window, which
records an attempt and decides in the same atomic step.
"""

from __future__ import annotations

import fcntl
import logging
import math
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import redis
from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from prometheus_client import Counter

logger = logging.getLogger(__name__)

T = TypeVar("T")

# After a failure, Redis is not asked again for this long (every operation is a miss meanwhile).
RETRY_SECONDS = 5.0
# `cache_unavailable` is logged at most this often per process.
LOG_EVERY_SECONDS = 60.0
# What an outage looks like to redis-py (a refused or timed-out connection, a server loading).
OUTAGE = (redis.ConnectionError, redis.TimeoutError)


class CacheUnavailable(Exception):
    """The cache could not be reached (or written, for the file cache)."""


@dataclass
class _Health:
    """A Redis server's state in this process (the backend itself is made anew per thread)."""

    down_until: float = 0.0
    missed: int = 0
    reported_at: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_health: dict[str, _Health] = {}

# Every operation answered as a miss because Redis was unreachable, by operation and kind of key
# (`throttle_send_`: a chat send let through unthrottled).
MISSES = Counter(
    "tutor_cache_outage_misses",
    "Cache operations answered as misses because the cache was unreachable.",
    ["op", "key"],
)


def _family(key: Any) -> str:
    """What a key is for, without whose it is: "throttle_send_" for "throttle_send_12"."""
    return re.sub(r"[:|].*$|\d+$", "", str(key))[:40]


class RedisCache(DjangoRedisCache):
    """Django's Redis cache, which answers as a miss while Redis is unreachable (see the module)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._health = _health.setdefault(str(server), _Health())

    # --- Ordinary operations: a miss during an outage ---------------------------------------

    def _soft(self, op: str, key: Any, default: T, call: Callable[[], T]) -> T:
        if time.monotonic() < self._health.down_until:
            self._miss(op, key, None)
            return default
        try:
            return call()
        except OUTAGE as exc:
            self._health.down_until = time.monotonic() + RETRY_SECONDS
            self._miss(op, key, exc)
            return default

    def _miss(self, op: str, key: Any, exc: Exception | None) -> None:
        health, family = self._health, _family(key)
        MISSES.labels(op=op, key=family).inc()
        with health.lock:
            health.missed += 1
            now = time.monotonic()
            last = health.reported_at.get(family)
            if last is not None and now - last < LOG_EVERY_SECONDS:
                return
            health.reported_at[family], missed = now, health.missed
        logger.warning(
            "cache_unavailable op=%s key=%s missed=%d (operations this process answered as misses): %s",
            op,
            family,
            missed,
            exc or "Redis was unreachable a moment ago",
        )

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._soft("get", key, default, lambda: super(RedisCache, self).get(key, default, version))

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        self._soft("set", key, None, lambda: super(RedisCache, self).set(key, value, timeout, version))

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._soft("add", key, False, lambda: super(RedisCache, self).add(key, value, timeout, version))

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        return self._soft("touch", key, False, lambda: super(RedisCache, self).touch(key, timeout, version))

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._soft("delete", key, False, lambda: super(RedisCache, self).delete(key, version))

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._soft("get_many", "", {}, lambda: super(RedisCache, self).get_many(keys, version))

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._soft("has_key", key, False, lambda: super(RedisCache, self).has_key(key, version))

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list[Any]:
        return self._soft("set_many", "", [], lambda: super(RedisCache, self).set_many(data, timeout, version))

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._soft("delete_many", "", None, lambda: super(RedisCache, self).delete_many(keys, version))

    # --- Counters: atomic, and strict ------------------------------------------------------------

    def _client(self) -> redis.Redis:
        if time.monotonic() < self._health.down_until:
            raise CacheUnavailable("Redis was unreachable a moment ago")
        client: redis.Redis = cast(Any, self)._cache.get_client(None, write=True)
        return client

    def counter_add(self, key: str, delta: int, window: float) -> tuple[int, float]:
        try:
            client = self._client()
            name = self.make_and_validate_key(key)
            count, ttl_ms = _add_script(client)(keys=[name], args=[delta, _ms(window)], client=client)
        except OUTAGE as exc:
            self._health.down_until = time.monotonic() + RETRY_SECONDS
            raise CacheUnavailable(str(exc)) from exc
        return int(count), int(ttl_ms) / 1000

    def counter_get(self, key: str) -> tuple[int, float]:
        try:
            pipe = self._client().pipeline()
            name = self.make_and_validate_key(key)
            pipe.get(name)
            pipe.pttl(name)
            value, ttl_ms = pipe.execute()
        except OUTAGE as exc:
            self._health.down_until = time.monotonic() + RETRY_SECONDS
            raise CacheUnavailable(str(exc)) from exc
        return (int(value), max(0, ttl_ms) / 1000) if value is not None else (0, 0.0)

    def counter_delete(self, key: str) -> None:
        try:
            self._client().delete(self.make_and_validate_key(key))
        except OUTAGE as exc:
            self._health.down_until = time.monotonic() + RETRY_SECONDS
            raise CacheUnavailable(str(exc)) from exc


# INCRBY, and the expiry set when the counter is new: one atomic step on the server. A counter
# brought to zero or below (an attempt given back) is deleted.
_ADD = """
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
if count <= 0 then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}
"""
_script: Any = None


def _add_script(client: redis.Redis) -> Any:
    """_ADD, registered once (EVALSHA, loaded again by redis-py if the server forgot it)."""
    global _script
    if _script is None:
        _script = client.register_script(_ADD)
    return _script


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


# --- Counters on the other backends: a value (count, expires at) changed under a lock ------------

_process_lock = threading.Lock()


@contextmanager
def _locked(backend: BaseCache) -> Iterator[None]:
    """This process's lock, and for the file cache an exclusive flock that the other processes
    (web workers) take too."""
    with _process_lock:
        if not isinstance(backend, FileBasedCache):
            yield
            return
        folder = Path(cast(Any, backend)._dir)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "counters.lock").open("a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _entry(backend: BaseCache, key: str, now: float) -> tuple[int, float] | None:
    entry = backend.get(key)
    if isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[1] > now:
        return int(entry[0]), float(entry[1])
    return None


def counter_add(key: str, *, delta: int = 1, window: float) -> tuple[int, float]:
    """Add `delta` to the counter `key`, which lives `window` seconds from its creation (adding to
    it does not extend it); a counter brought to zero is deleted. Returns the new count and the
    seconds it has left. Atomic across threads and processes. Raises CacheUnavailable."""
    backend: Any = caches["default"]
    if isinstance(backend, RedisCache):
        return backend.counter_add(key, delta, window)
    try:
        with _locked(backend):
            now = time.time()
            count, until = _entry(backend, key, now) or (0, now + window)
            count += delta
            if count <= 0:
                backend.delete(key)
                return 0, 0.0
            backend.set(key, (count, until), timeout=math.ceil(until - now))
            return count, until - now
    except OSError as exc:
        raise CacheUnavailable(str(exc)) from exc


def counter_get(key: str) -> tuple[int, float]:
    """The count of `key` and the seconds it has left, (0, 0) when there is none. Raises
    CacheUnavailable."""
    backend: Any = caches["default"]
    if isinstance(backend, RedisCache):
        return backend.counter_get(key)
    try:
        now = time.time()
        entry = _entry(backend, key, now)
    except OSError as exc:
        raise CacheUnavailable(str(exc)) from exc
    return (entry[0], entry[1] - now) if entry else (0, 0.0)


def counter_delete(key: str) -> None:
    """Forget the counter `key`. Raises CacheUnavailable."""
    backend: Any = caches["default"]
    if isinstance(backend, RedisCache):
        backend.counter_delete(key)
        return
    try:
        with _locked(backend):
            backend.delete(key)
    except OSError as exc:
        raise CacheUnavailable(str(exc)) from exc


# --- Rate windows: a sliding log of the last `window` seconds, taken from atomically ------------

# The attempts of the last window (a sorted set, scored by the server's clock in microseconds):
# those older than the window are dropped, and one more is recorded only if fewer than `limit`
# remain, in one step on the server. Returns 0 (taken), or the microseconds until the oldest one
# leaves the window. A value of another type under the key (DRF's own throttle history, written
# by an earlier version) is replaced.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'zset' and kind ~= 'none' then
  redis.call('DEL', KEYS[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""
_take_script: Any = None


def rate_take(key: str, *, limit: int, window: float) -> float:
    """Record one attempt under `key` if fewer than `limit` were recorded in the last `window`
    seconds: 0.0 when it was, else the seconds until one leaves the window. Atomic across threads
    and processes (one Lua script on Redis, the counters' lock on the other backends), so parallel
    attempts never get more than `limit` through. Raises CacheUnavailable, the outage logged as
    `cache_unavailable op=take` and counted like the other operations' misses."""
    backend: Any = caches["default"]
    if isinstance(backend, RedisCache):
        return _redis_take(backend, key, limit, window)
    try:
        with _locked(backend):
            now = time.time()
            log = [t for t in (backend.get(key) or []) if isinstance(t, float) and t > now - window]
            if len(log) >= limit:
                return max(1e-6, log[0] + window - now)
            backend.set(key, [*log, now], timeout=math.ceil(window))
            return 0.0
    except OSError as exc:
        MISSES.labels(op="take", key=_family(key)).inc()
        logger.warning("cache_unavailable op=take key=%s: %s", _family(key), exc)
        raise CacheUnavailable(str(exc)) from exc


def _redis_take(backend: RedisCache, key: str, limit: int, window: float) -> float:
    global _take_script
    try:
        client = backend._client()
        if _take_script is None:
            _take_script = client.register_script(_TAKE)
        name = backend.make_and_validate_key(key)
        waited = _take_script(keys=[name], args=[_ms(window) * 1000, limit, uuid.uuid4().hex], client=client)
    except (CacheUnavailable, *OUTAGE) as exc:
        if not isinstance(exc, CacheUnavailable):
            backend._health.down_until = time.monotonic() + RETRY_SECONDS
        backend._miss("take", key, None if isinstance(exc, CacheUnavailable) else exc)
        raise CacheUnavailable(str(exc)) from exc
    return int(waited) / 1_000_000
