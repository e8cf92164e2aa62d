"""Throttles, with their rates read from the settings at each request (so that they can be changed
per environment and in tests). A throttled request gets 429 in the error envelope with
`Retry-After`.

- Chat sends per user (SendRateThrottle, and the throttles built on it), counted atomically. A
  cache outage lets sends through: it is logged as `cache_unavailable` (core.cache), never a
  failed request.
- Sign-ins (LoginAttempt, used by accounts.backends for every way in), checked before any
  password is: LOGIN_ADDRESS_RATE attempts per client address (a rate, never a lockout), then the
  lockouts of a username within LOGIN_FAILURE_WINDOW_SECONDS: LOGIN_FAILURE_LIMIT failures from
  one address, LOGIN_ACCOUNT_FAILURE_LIMIT from all of them. An attempt is counted (atomically)
  before its password is checked and forgotten only if it succeeds, so parallel guesses cannot
  get more than the limit checked. Without the cache they cannot be counted, so sign-in is
  refused with a 503 instead (fail closed).
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from rest_framework.throttling import UserRateThrottle

from core import metrics
from core.cache import CacheUnavailable, counter_add, counter_delete, rate_take
from core.errors import ApplicationError, ServiceUnavailable

logger = logging.getLogger(__name__)

# Seconds a client is told to wait when sign-in cannot be counted or checked right now.
LOGIN_UNAVAILABLE_RETRY_SECONDS = 5


class SendRateThrottle(UserRateThrottle):
    """Chat sends per user (THROTTLE_SEND_RATE, e.g. "30/minute"; empty: no limit): a sliding
    window in the shared cache, each request recorded and decided in one atomic step
    (core.cache.rate_take), so that parallel requests never get more than the rate through."""

    scope = "send"
    # Set by DRF's SimpleRateThrottle.__init__ from the rate (its stubs do not declare them).
    num_requests: int
    duration: int
    _wait: float | None = None

    def get_rate(self) -> str | None:
        return settings.THROTTLE_SEND_RATE or None

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        try:
            wait = rate_take(key, limit=self.num_requests, window=self.duration)
        except CacheUnavailable:
            # Logged and counted as `cache_unavailable` (core.cache): a request is never refused
            # because its count could not be kept.
            return True
        if not wait:
            return True
        self._wait = wait
        metrics.throttled(self.scope)
        return False

    def wait(self) -> float | None:
        return self._wait


class _LoginThrottled(ApplicationError):
    """A sign-in refused for `wait` seconds: 429 with Retry-After, safe to send again then."""

    status_code = 429
    code = "throttled"
    retry_safe = True

    def __init__(self, wait: int, message: str) -> None:
        super().__init__(message % {"wait": wait}, details={"retry_after_seconds": wait})
        self.retry_after = wait
        metrics.throttled("login")


class TooManyLoginFailures(_LoginThrottled):
    def __init__(self, wait: float) -> None:
        seconds = _seconds(wait)
        message = ngettext(
            "Too many failed logins. Try again in %(wait)s second.",
            "Too many failed logins. Try again in %(wait)s seconds.",
            seconds,
        )
        super().__init__(seconds, message)


class TooManyLogins(_LoginThrottled):
    def __init__(self, wait: float) -> None:
        seconds = _seconds(wait)
        message = ngettext(
            "Too many sign-ins from this address. Try again in %(wait)s second.",
            "Too many sign-ins from this address. Try again in %(wait)s seconds.",
            seconds,
        )
        super().__init__(seconds, message)


class LoginUnavailable(ServiceUnavailable):
    """Sign-in cannot be counted (the cache is unreachable) or checked (every password-hashing
    slot is busy) right now; the same request may be sent again after Retry-After."""

    retry_safe = True
    retry_after = LOGIN_UNAVAILABLE_RETRY_SECONDS

    def __init__(self, message: str) -> None:
        super().__init__(message, details={"retry_after_seconds": self.retry_after})


def _seconds(wait: float) -> int:
    return max(1, int(-(-wait // 1)))


def _period_seconds(rate: str) -> tuple[int, int]:
    """A rate, "<count>/<second|minute|hour|day>" as DRF writes it, as (count, seconds)."""
    count, period = rate.split("/")
    return int(count), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period.strip()[0]]


def _username_key(username: str) -> str:
    # Hashed: the cache holds no usernames (a child's name, often). Case and compatibility
    # forms are folded, so that "Alice" and "alice" share a count.
    folded = unicodedata.normalize("NFKC", username).strip().casefold()
    return "login:user:" + hashlib.sha256(folded.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _pair_key(username_key: str, address: str) -> str:
    # One username from one address: hashed with the username's own key.
    pair = f"{address}\0{username_key}".encode("utf-8", "surrogatepass")
    return "login:pair:" + hashlib.sha256(pair).hexdigest()[:32]


@dataclass
class LoginAttempt:
    """One sign-in attempt, counted before its password is checked. Exactly one of `succeeded`,
    `failed` or `abandoned` ends it.

    `counted` holds the failure counters it added one to: the username's from this address
    (LOGIN_FAILURE_LIMIT) and the username's from every address (LOGIN_ACCOUNT_FAILURE_LIMIT).
    The address alone has no lockout, only its rate (LOGIN_ADDRESS_RATE), so that the many users
    behind one address (a school's NAT, a proxy whose address uvicorn is not told to trust) are
    never locked out by some of them failing."""

    counted: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, *, username: str, address: str) -> LoginAttempt:
        """Count the attempt, or refuse it before any password is checked: TooManyLogins (the
        address's rate), TooManyLoginFailures (a lockout of the username, from this address or
        from all of them: the right password gets it too, so a guesser learns nothing), or
        LoginUnavailable (the cache cannot count). A refused attempt is given back to the
        counters it reached, as it checked no password: an account locked from everywhere does
        not also lock its owner's address once the account's window has passed."""
        attempt = cls()
        username_key = _username_key(username)
        limits = (
            (_pair_key(username_key, address), settings.LOGIN_FAILURE_LIMIT),
            (username_key, settings.LOGIN_ACCOUNT_FAILURE_LIMIT),
        )
        try:
            if settings.LOGIN_ADDRESS_RATE:
                allowed, period = _period_seconds(settings.LOGIN_ADDRESS_RATE)
                count, left = counter_add(f"login:address-rate:{address}", window=period)
                if count > allowed:
                    raise TooManyLogins(left)
            for key, limit in limits:
                if limit <= 0:
                    continue
                count, left = counter_add(key, window=settings.LOGIN_FAILURE_WINDOW_SECONDS)
                attempt.counted.append(key)
                if count > limit:
                    attempt.abandoned()
                    raise TooManyLoginFailures(left)
        except CacheUnavailable as exc:
            logger.warning("cache_unavailable login: sign-in refused until attempts can be counted: %s", exc)
            raise LoginUnavailable(_("Signing in is unavailable for a moment; try again shortly.")) from exc
        return attempt

    def succeeded(self) -> None:
        """The right password: the username's failures are forgotten, from this address and from
        all of them."""
        for key in self.counted:
            self._quietly(counter_delete, key)

    def failed(self) -> None:
        """A wrong password (or an unknown or inactive user): the counts stand until their window
        has passed."""

    def abandoned(self) -> None:
        """No password was checked (the server was busy, the database away, or the attempt was
        refused): the attempt is given back, so that a busy server locks no one out."""
        for key in self.counted:
            self._quietly(counter_add, key, delta=-1, window=settings.LOGIN_FAILURE_WINDOW_SECONDS)

    def _quietly(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        # The password has been checked and its answer stands; the next attempt fails closed if
        # the cache is still away.
        try:
            fn(*args, **kwargs)
        except CacheUnavailable as exc:
            logger.warning("cache_unavailable login: an attempt's outcome was not recorded: %s", exc)
