"""Sign-in cards: a code a young student types (or scans) instead of a username and password.

A code is 16 characters of Crockford's base 32 (digits and capital letters without I, L, O and
U), printed in 4 groups of 4 (`7K3M-Q9TX-2HCV-8WNP`): 80 random bits from `secrets`. What a
child types is read leniently: case, spaces and dashes are ignored, and O is read as 0, I and L
as 1 (the letters the alphabet leaves out for looking like them).

Only a keyed hash of each code is stored (HMAC-SHA256 under SECRET_KEY, `code_hash`): a copy
of the database signs no one in, and the code is shown once, when it is made. A code this
random needs no slow hash (a password does, because people choose guessable ones); the key
makes a stolen table useless without the settings. See docs/security.md.

Guessing goes through the password sign-in's throttles (accounts.backends.SignInCodeBackend).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from django.utils.crypto import salted_hmac

from accounts.models import Classroom, SignInCode, User
from accounts.selectors import enrollments_current

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
GROUPS, GROUP_SIZE = 4, 4
LENGTH = GROUPS * GROUP_SIZE
BITS = 80  # LENGTH * log2(len(ALPHABET))
DAYS_DEFAULT, DAYS_MAX = 7, 90
# What a child may type for a character the alphabet leaves out.
_READ_AS = str.maketrans({"O": "0", "I": "1", "L": "1"})
_KEY_SALT = "accounts.codes.SignInCode"


def code_generate() -> str:
    """A new code, 4 groups of 4 joined by dashes."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
    return "-".join(raw[i : i + GROUP_SIZE] for i in range(0, LENGTH, GROUP_SIZE))


def code_normalize(code: str) -> str:
    """The code as stored before hashing: upper case, without spaces or dashes, look-alike
    letters read as the digits they stand for. Not checked: see `code_valid`."""
    return "".join(code.split()).replace("-", "").upper().translate(_READ_AS)


def code_valid(normalized: str) -> bool:
    return len(normalized) == LENGTH and all(c in ALPHABET for c in normalized)


def code_hash(normalized: str, *, secret: str | bytes | None = None) -> str:
    """The stored form of a normalized code: HMAC-SHA256 under `secret` (SECRET_KEY)."""
    return salted_hmac(_KEY_SALT, normalized, secret=secret, algorithm="sha256").hexdigest()


def code_lockout_key(code: str) -> str:
    """The name the sign-in lockout counts a code's failures under (core.throttles.LoginAttempt):
    its first three groups. They name one card, so someone who read most of a card cannot try
    the rest of it more than the lockout allows, and a child who mistypes the end of their own
    code locks only that card, for the lockout's window. A colon is in no username."""
    return "sign-in-code:" + code_normalize(code)[: LENGTH - GROUP_SIZE]


@dataclass(frozen=True)
class IssuedCode:
    student: User
    code: str
    expires_at: datetime


def sign_in_codes_create(*, classroom: Classroom, created_by: User, days: int = DAYS_DEFAULT) -> list[IssuedCode]:
    """A new code for each active student actively enrolled in `classroom`, valid for `days`
    days, by first name; the class's earlier codes for those students are revoked. The codes are
    returned in clear, the only time they are: only their hashes are stored.

    The class's row is locked, so that two teachers printing cards at once each revoke the
    other's earlier codes in turn and a student is left with one working code of the class."""
    if not 1 <= days <= DAYS_MAX:
        raise ValueError(f"days must be 1 to {DAYS_MAX}")
    now = timezone.now()
    expires_at = now + timedelta(days=days)
    with transaction.atomic():
        Classroom.objects.select_for_update().filter(pk=classroom.pk).first()
        current = enrollments_current().filter(classroom=classroom).values("student")
        students = list(User.objects.filter(pk__in=current).order_by("first_name", "last_name", "username", "pk"))
        SignInCode.objects.filter(classroom=classroom, student__in=students, revoked_at__isnull=True).update(
            revoked_at=now
        )
        issued = [IssuedCode(student=student, code=code_generate(), expires_at=expires_at) for student in students]
        SignInCode.objects.bulk_create(
            [
                SignInCode(
                    student=card.student,
                    classroom=classroom,
                    code_hash=code_hash(code_normalize(card.code)),
                    created_by=created_by,
                    expires_at=expires_at,
                )
                for card in issued
            ]
        )
    return issued


def sign_in_code_use(*, code: str) -> User | None:
    """The student `code` signs in, counted as a use of it; None if it signs no one in: not a
    code, unknown, revoked, expired, or its student deactivated, no longer enrolled in its class
    (actively) or the class inactive. Codes made before SECRET_KEY was rotated still work while
    the old key is in SECRET_KEY_FALLBACKS."""
    normalized = code_normalize(code)
    if not code_valid(normalized):
        return None
    hashes = [code_hash(normalized, secret=secret) for secret in (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS)]
    now = timezone.now()
    enrolled = enrollments_current().filter(classroom=OuterRef("classroom"), student=OuterRef("student"))
    found = (
        SignInCode.objects.filter(Exists(enrolled), code_hash__in=hashes, revoked_at__isnull=True, expires_at__gt=now)
        .select_related("student")
        .first()
    )
    if found is None:
        return None
    SignInCode.objects.filter(pk=found.pk).update(used_count=F("used_count") + 1, last_used_at=now)
    return found.student
