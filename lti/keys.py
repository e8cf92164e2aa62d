"""The tool's signing key (django-lti's `Key`): the JWKS serves the active ones, the newest
signs. One is made on first use when none is active, so a new deployment needs no manual step;
`manage.py rotate_keys` (django-lti) makes a new one and retires the old. Two processes making
the first key at once leave two active keys, both served: harmless."""

from __future__ import annotations

from typing import Any

from lti_tool.models import Key


def tool_key_ensure() -> None:
    """An active key exists after this call."""
    if not Key.objects.active().exists():
        Key.objects.generate()


def tool_jwks() -> dict[str, Any]:
    """The tool's public keys, as a JWKS (a key made first if none is active)."""
    tool_key_ensure()
    jwks: dict[str, Any] = Key.objects.as_jwks()
    return jwks
