"""Memory writes per user, one rate for every way in: the API's memory writes (a teacher note,
a correction, an archive, a supersession) and the MCP tools `write` and `forget` count against
the same THROTTLE_MEMORY_WRITE_RATE, so an agent cannot write faster than the API allows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import ngettext

from core.errors import ApplicationError
from core.throttles import SendRateThrottle


class MemoryWriteRateThrottle(SendRateThrottle):
    """The send throttle's mechanics (a per-user sliding window in the shared cache; a cache that
    fails lets the write through), with its own rate (THROTTLE_MEMORY_WRITE_RATE, e.g.
    "30/minute"; empty: no limit) and its own bucket."""

    scope = "memory_write"

    def get_rate(self) -> str | None:
        return settings.THROTTLE_MEMORY_WRITE_RATE or None


class MemoryWritesThrottled(ApplicationError):
    status_code = 429
    code = "throttled"

    def __init__(self, wait: int) -> None:
        message = ngettext(
            "Too many memory writes. Try again in %(wait)s second.",
            "Too many memory writes. Try again in %(wait)s seconds.",
            wait,
        )
        super().__init__(message % {"wait": wait}, details={"retry_after_seconds": wait})
        self.retry_after = wait


@dataclass(frozen=True)
class _Caller:
    # What the throttle reads of a request: its user (a DRF request has more; MCP has no request).
    user: Any


def memory_write_check(user: Any) -> None:
    """Count one memory write of `user` outside a DRF view (the MCP tools), against the same
    rate and bucket as the API's memory writes. Raises MemoryWritesThrottled past the rate, with
    the seconds to wait."""
    throttle = MemoryWriteRateThrottle()
    if not throttle.allow_request(_Caller(user), None):
        raise MemoryWritesThrottled(max(1, math.ceil(throttle.wait() or 1)))
