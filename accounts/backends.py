"""How a password is checked, whatever the way in: the API's token and session logins, the admin's
login form, and anything else that calls `django.contrib.auth.authenticate` go through
`LockoutBackend` (AUTHENTICATION_BACKENDS), so they share one lockout and one bound on hashing.
A sign-in card's code goes through `SignInCodeBackend`, behind the same throttles.

A password check is slow on purpose (PBKDF2, about a second on small machines). So that a burst
of sign-ins cannot starve other requests:
- the address's rate and the lockout are checked first (core.throttles.LoginAttempt), before
  the database or the hasher is touched;
- the user is fetched, and the database connection given back to the pool before the password
  is hashed (core.db.connection_release), so no connection waits on the hasher;
- at most LOGIN_HASH_CONCURRENCY passwords are hashed at once per process; an attempt that waits
  LOGIN_HASH_WAIT_SECONDS for a slot is refused with a 503 that is safe to retry.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import BaseBackend, ModelBackend
from django.http import HttpRequest
from django.utils.translation import gettext as _

from accounts.codes import code_lockout_key, sign_in_code_use
from accounts.models import User
from core.db import connection_release
from core.throttles import LoginAttempt, LoginUnavailable

_slots: dict[int, threading.BoundedSemaphore] = {}
_slots_lock = threading.Lock()


@contextmanager
def hashing_slot() -> Iterator[None]:
    """One of this process's LOGIN_HASH_CONCURRENCY password-hashing slots (0: no bound), waited
    for at most LOGIN_HASH_WAIT_SECONDS; LoginUnavailable when none comes free."""
    size = settings.LOGIN_HASH_CONCURRENCY
    if size <= 0:
        yield
        return
    with _slots_lock:
        slots = _slots.setdefault(size, threading.BoundedSemaphore(size))
    if not slots.acquire(timeout=settings.LOGIN_HASH_WAIT_SECONDS):
        raise LoginUnavailable(_("Too many sign-ins at once; try again in a moment."))
    try:
        yield
    finally:
        slots.release()


def client_address(request: HttpRequest | None) -> str:
    return str(request.META.get("REMOTE_ADDR", "")) if request is not None else ""


def _encodable(text: str) -> bool:
    # A lone surrogate ("\ud800" in JSON) is no character: no user has it, and no hasher or
    # database can encode it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class LockoutBackend(ModelBackend):
    """Django's ModelBackend (a username and password against accounts.User, active users only)
    behind the login throttles and the bound on hashing (see the module). Raises the throttles'
    refusals (TooManyLogins, TooManyLoginFailures: 429; LoginUnavailable: 503), which the API's
    error handler and the admin's login form (accounts.admin_login) answer with Retry-After."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> User | None:
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if not isinstance(username, str) or not isinstance(password, str):
            return None
        if not (_encodable(username) and _encodable(password)):
            return None
        attempt = LoginAttempt.start(username=username, address=client_address(request))
        try:
            try:
                user: User | None = User._default_manager.get_by_natural_key(username)
            except User.DoesNotExist:
                user = None
            finally:
                connection_release()
            with hashing_slot():
                if user is None:
                    # As long as a wrong password, so that the time does not tell who exists.
                    User().set_password(password)
                    valid = False
                else:
                    valid = user.check_password(password) and self.user_can_authenticate(user)
        except BaseException:
            attempt.abandoned()
            raise
        if not valid:
            attempt.failed()
            return None
        attempt.succeeded()
        return user


class SignInCodeBackend(BaseBackend):
    """A sign-in card's code (accounts.codes) for a student, behind the password's throttles:
    every attempt counts against the address's rate (LOGIN_ADDRESS_RATE), and the failures of a
    code are counted under its first three groups (`code_lockout_key`) with the lockouts of a
    username (LOGIN_FAILURE_LIMIT from one address, LOGIN_ACCOUNT_FAILURE_LIMIT from all), so a
    guesser is refused with the same 429 and Retry-After as for passwords, the right code
    included. A code is checked by one keyed hash and an indexed read: no hashing slot.

    The credential is `sign_in_secret`, a name Django masks in the `user_login_failed` signal."""

    def authenticate(
        self, request: HttpRequest | None, sign_in_secret: str | None = None, **kwargs: Any
    ) -> User | None:
        if not isinstance(sign_in_secret, str) or not _encodable(sign_in_secret):
            return None
        attempt = LoginAttempt.start(username=code_lockout_key(sign_in_secret), address=client_address(request))
        try:
            user = sign_in_code_use(code=sign_in_secret)
        except BaseException:
            attempt.abandoned()
            raise
        if user is None or not user.is_active:
            attempt.failed()
            return None
        attempt.succeeded()
        return user

    def get_user(self, user_id: int) -> User | None:
        """The session's user, as ModelBackend finds it: an active one only."""
        user = User._default_manager.filter(pk=user_id).first()
        return user if user is not None and user.is_active else None
