"""The one-time code that hands a launch's sign-in to the page in the LMS's frame.

The launch redirects to the page with the code in the URL's fragment (`#lti=...`), which
browsers never send to a server; the page exchanges it at once for an API token
(POST /api/v1/lti/token/) and sends `Authorization: Token` from then on. No cookie is needed,
so the frame works where third-party cookies are blocked (docs/lti.md). The code is 128 random
bits, lives HANDOFF_SECONDS, is kept only as its SHA-256 in the cache, and works once: the
first redeemer deletes it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.core.cache import cache

from accounts.models import User

HANDOFF_SECONDS = 60


@dataclass(frozen=True)
class Handoff:
    """What the page is told along with its token: where the launch leads."""

    user: User
    classroom_id: int | None
    conversation_id: int | None


def _key(code: str) -> str:
    return "lti:handoff:" + hashlib.sha256(code.encode()).hexdigest()


def handoff_issue(*, user: User, classroom_id: int | None, conversation_id: int | None) -> str:
    """A new code for `user`, valid HANDOFF_SECONDS, once."""
    code = secrets.token_urlsafe(16)
    cache.set(
        _key(code),
        {"user": user.pk, "classroom": classroom_id, "conversation": conversation_id},
        timeout=HANDOFF_SECONDS,
    )
    return code


def handoff_redeem(code: str) -> Handoff | None:
    """The hand-off of `code`, consumed; None for an unknown, expired or used code, or a person
    deactivated since. Of two concurrent redeemers only the one whose delete removed the key
    gets it."""
    key = _key(code)
    data = cache.get(key)
    if not isinstance(data, dict) or not cache.delete(key):
        return None
    user = User.objects.filter(pk=data["user"], is_active=True).first()
    if user is None:
        return None
    return Handoff(user=user, classroom_id=data["classroom"], conversation_id=data["conversation"])
