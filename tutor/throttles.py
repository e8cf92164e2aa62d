"""Per-user throttles, with their rates read from the settings at each request (so that they can
be changed per environment and in tests). A throttled request gets 429 in the error envelope
with `Retry-After`."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import ngettext
from rest_framework.throttling import UserRateThrottle

from tutor.errors import ApplicationError


class SendRateThrottle(UserRateThrottle):
    """Chat sends per user (THROTTLE_SEND_RATE, e.g. "30/minute"; empty: no limit)."""

    scope = "send"

    def get_rate(self) -> str | None:
        return settings.THROTTLE_SEND_RATE or None


class TooManyLoginFailures(ApplicationError):
    status_code = 429
    code = "throttled"

    def __init__(self, wait: int) -> None:
        message = ngettext(
            "Too many failed logins. Try again in %(wait)s second.",
            "Too many failed logins. Try again in %(wait)s seconds.",
            wait,
        )
        super().__init__(message % {"wait": wait}, details={"retry_after_seconds": wait})
        self.retry_after = wait


def _keys(username: str, address: str) -> list[str]:
    return [f"login-failures:user:{username.strip().lower()[:150]}", f"login-failures:addr:{address}"]


def login_check(*, username: str, address: str) -> None:
    """Refuse any login (right password or not) for a username or address that failed
    LOGIN_FAILURE_LIMIT times within LOGIN_FAILURE_WINDOW_SECONDS: a guesser learns nothing."""
    limit = settings.LOGIN_FAILURE_LIMIT
    if limit <= 0:
        return
    for key in _keys(username, address):
        entry: Any = cache.get(key)
        if entry and entry[0] >= limit:
            raise TooManyLoginFailures(max(1, int(entry[1] - _now())))


def login_failed(*, username: str, address: str) -> None:
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    for key in _keys(username, address):
        entry: Any = cache.get(key)
        count, until = (entry[0] + 1, entry[1]) if entry and entry[1] > _now() else (1, _now() + window)
        cache.set(key, (count, until), timeout=max(1, int(until - _now())))


def login_succeeded(*, username: str) -> None:
    cache.delete(_keys(username, "")[0])


def _now() -> float:
    return time.time()
