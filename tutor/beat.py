"""The scheduler on Redis: RedBeat's, kept running through a Redis outage.

RedBeat's scheduler lets a Redis connection error out of its tick (extending its lock, reading
the schedule, saving an entry's last run), and Celery's beat then exits (`beat raised exception
... ConnectionError`): a standalone `celery -A tutor beat` stops, and the beat inside a worker
(`-B`) is left a dead child while the worker runs on. Every periodic task stops with it, the
sweeps and the crisis escalations included. RedBeat's own `retry_period` option does not help:
it retries the client's calls but not its lock's, which are the first to fail.

Here a tick that meets Redis unreachable logs it once and tries again at the next loop
(BEAT_LOOP_SECONDS); once Redis answers, the tick goes on where it was (the schedule and each
entry's last run are in Redis, kept by its append-only file). If the lock expired meanwhile, or
Redis lost it, the beat takes it again, or waits for it like a beat starting while another holds
it: two beats never both send. A Redis that came back without its data (no persistence) has lost
the schedule too, which RedBeat writes only when beat starts: the beat that holds the lock
writes it again, each periodic task then due one period later.
"""

from __future__ import annotations

import contextlib
import logging
import time
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import redis
from django.conf import settings
from redbeat.schedulers import RedBeatScheduler, acquire_distributed_beat_lock, get_redis

logger = logging.getLogger(__name__)

UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class Scheduler(RedBeatScheduler):
    """RedBeat's scheduler whose tick survives Redis going away and coming back."""

    _unreachable_since: str | None = None

    def tick(self, min: Any = min, **kwargs: Any) -> float:
        try:
            self._hold_lock()
            remaining: list[float] = []
            try:
                for entry in self.schedule.values():
                    next_time_to_run = self.maybe_due(entry, **self._maybe_due_kwargs)
                    if next_time_to_run:
                        remaining.append(next_time_to_run)
            except RuntimeError:  # as RedBeat's tick: the schedule changed while read
                logger.debug("beat: RuntimeError", exc_info=True)
        except UNREACHABLE as exc:
            if self._unreachable_since is None:
                self._unreachable_since = str(exc)
                logger.warning(
                    "beat: Redis is unreachable (%s); the periodic tasks wait, trying again every %s s",
                    exc,
                    self.max_interval,
                )
            return float(self.max_interval)
        if self._unreachable_since is not None:
            self._unreachable_since = None
            logger.info("beat: Redis is reachable again; the periodic tasks go on")
        self._ticked()
        return float(min([*remaining, self.max_interval]))

    def _ticked(self) -> None:
        """Say in Redis that a beat holding the lock ran its loop now (`ready_check`)."""
        with contextlib.suppress(*UNREACHABLE):  # the next tick meets the outage and says so
            get_redis(self.app).set(tick_key(), time.time(), ex=int(stale_seconds()) + 1)

    def _schedule_restore(self) -> None:
        """Write the periodic tasks again if Redis lost them (it came back without its data)."""
        conf = self.app.redbeat_conf
        if conf.schedule and not get_redis(self.app).exists(conf.statics_key):
            logger.warning("beat: Redis lost the schedule; writing the periodic tasks again")
            self.setup_schedule()

    def _hold_lock(self) -> None:
        """Extend the lock this beat holds; take it again if it was lost (expired during an
        outage, or lost by Redis), waiting while another beat holds it."""
        if not self.lock_key:
            return
        if self.lock is None:  # Redis was down when this beat started: never acquired
            acquire_distributed_beat_lock(sender=SimpleNamespace(scheduler=self))
            self._schedule_restore()
            return
        logger.debug("beat: Extending lock...")
        try:
            self.lock.extend(int(self.lock_timeout))
        except redis.exceptions.LockNotOwnedError:
            logger.warning("beat: the lock was lost while Redis was away; Acquiring lock...")
            self.lock.acquire()
            logger.info("beat: Acquired lock")
            self._schedule_restore()

    def close(self) -> None:
        try:
            super().close()
        except UNREACHABLE as exc:  # stopping during an outage: the lock expires on its own
            logger.warning("beat: could not release the lock (%s); it expires on its own", exc)
            self.lock = None


# --- /health/ready: a scheduler that stopped -------------------------------------------------------


def tick_key() -> str:
    return f"{getattr(settings, 'CELERY_REDBEAT_KEY_PREFIX', 'redbeat:')}:tick"


def stale_seconds() -> float:
    """How long without a beat's loop before readiness warns: six loops, at least a minute."""
    return max(60.0, 6.0 * float(settings.CELERY_BEAT_MAX_LOOP_INTERVAL))


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


def ready_check() -> bool | None:
    """/health/ready's `scheduler` check (HEALTH_READY_CHECKS): a warning when no beat has run
    its loop for `stale_seconds()` (none started, or all stopped): the periodic tasks (the
    sweeps, the crisis escalations) wait. Skipped without RedBeat (the embedded default)."""
    from core.health import CheckFailed, CheckWarning

    if settings.CELERY_BEAT_SCHEDULER != "tutor.beat:Scheduler":
        return False
    try:
        ticked = _client(getattr(settings, "CELERY_REDBEAT_REDIS_URL", "")).exists(tick_key())
    except UNREACHABLE as exc:
        raise CheckFailed(f"unreachable: {type(exc).__name__}") from exc
    if not ticked:
        raise CheckWarning(
            f"no scheduler ran in the last {stale_seconds():.0f} s: the periodic tasks wait (start celery beat)"
        )
    return None
