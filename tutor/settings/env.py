"""Typed reads of the environment for the settings: a bad value stops start-up.

Each `env_*` function reads one variable and returns its value, or `default` when the variable is
unset (typed values: unset or blank; strings: unset only, so that an empty string can turn a
feature off). A value that does not parse raises SettingsError, Django's ImproperlyConfigured,
naming the variable and what it expects. Casting is django-environ's (`environ.Env.parse_value`)
with stricter edges: a boolean must be one of BOOL_TRUE or BOOL_FALSE (anything else is an error,
not false), a number must be a whole, finite number.

Secrets (`secret=True`) may come from a file instead, as container secrets are mounted:
`<NAME>_FILE=/run/secrets/name` reads the value from that file, without its trailing newline.
Setting both `<NAME>` (not empty) and `<NAME>_FILE` is an error, and an error about a secret never
shows its value.
"""

from __future__ import annotations

import json
import math
import os
import re
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "SettingsError",
    "env_bool",
    "env_choice",
    "env_decimal",
    "env_float",
    "env_int",
    "env_json",
    "env_list",
    "env_origins",
    "env_prices",
    "env_rate",
    "env_str",
    "env_url",
]

BOOL_TRUE = frozenset(environ.Env.BOOLEAN_TRUE_STRINGS)
BOOL_FALSE = frozenset({"false", "off", "no", "n", "0"})
RATE_UNITS = ("second", "minute", "hour", "day")
_RATE = re.compile(rf"^[1-9][0-9]*/({'|'.join(RATE_UNITS)})$")


class SettingsError(ImproperlyConfigured, RuntimeError):
    """A variable with a value the settings cannot use. A RuntimeError too, for callers that
    catch start-up failures as one."""


def _fail(name: str, expected: str, raw: str, *, secret: bool = False) -> SettingsError:
    shown = "" if secret else f", got {raw!r}"
    return SettingsError(f"{name} must be {expected}{shown}")


def _raw(name: str, *, secret: bool = False) -> str | None:
    """The variable's text, None if unset; a secret's from the file `<name>_FILE` names if set."""
    file_name = f"{name}_FILE"
    if secret and os.environ.get(file_name):
        if os.environ.get(name, "").strip():
            raise SettingsError(f"{name} and {file_name} are both set: set one of them")
        try:
            return str(environ.FileAwareMapping(cache=False)[name]).rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{file_name} must name a readable UTF-8 file: {exc}") from exc
    return os.environ.get(name)


def env_str(name: str, default: str = "", *, secret: bool = False) -> str:
    """The value without surrounding whitespace; `default` only when unset."""
    raw = _raw(name, secret=secret)
    return default if raw is None else raw.strip()


def _typed(name: str) -> str | None:
    raw = _raw(name)
    return raw.strip() if raw is not None and raw.strip() else None


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """An integer (at least `minimum` if given)."""
    raw = _typed(name)
    if raw is None:
        return default
    expected = "an integer" if minimum is None else f"an integer >= {minimum}"
    try:
        value = int(environ.Env.parse_value(raw, int))
    except ValueError as exc:
        raise _fail(name, expected, raw) from exc
    if minimum is not None and value < minimum:
        raise _fail(name, expected, raw)
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    """A finite number (at least `minimum` if given). Python's float(): django-environ's float cast
    drops every character that is not a digit, a sign or a separator, so "5x" would read as 5."""
    raw = _typed(name)
    if raw is None:
        return default
    expected = "a number" if minimum is None else f"a number >= {minimum:g}"
    try:
        value = float(raw)
    except ValueError as exc:
        raise _fail(name, expected, raw) from exc
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        raise _fail(name, expected, raw)
    return value


def env_bool(name: str, default: bool) -> bool:
    """One of BOOL_TRUE or BOOL_FALSE, in any case."""
    raw = _typed(name)
    if raw is None:
        return default
    word = raw.lower()
    if word not in BOOL_TRUE | BOOL_FALSE:
        raise _fail(name, f"a boolean ({', '.join(sorted(BOOL_TRUE))} or {', '.join(sorted(BOOL_FALSE))})", raw)
    return word in BOOL_TRUE


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices`, in any case; returned as written in `choices`."""
    raw = _typed(name)
    if raw is None:
        return default
    by_folded = {choice.casefold(): choice for choice in choices}
    if raw.casefold() not in by_folded:
        raise _fail(name, f"one of {', '.join(choices)}", raw)
    return by_folded[raw.casefold()]


def env_list(name: str, default: str = "") -> list[str]:
    """Comma-separated items, each stripped, the empty ones dropped; `default` is such a text,
    used only when the variable is unset."""
    raw = _raw(name)
    items: list[str] = environ.Env.parse_value(default if raw is None else raw, [str])
    return [item.strip() for item in items if item.strip()]


def env_url(
    name: str,
    default: str = "",
    *,
    schemes: tuple[str, ...] = (),
    host: bool = True,
    secret: bool = False,
) -> str:
    """A URL `scheme://...` with one of `schemes` (any if empty) and a host if `host`; empty (or
    unset with an empty default) is returned as such, meaning none."""
    value = env_str(name, default, secret=secret)
    if not value:
        return value
    parts = urlsplit(value)
    ok = bool(parts.scheme) and value.lower().startswith(f"{parts.scheme.lower()}://")
    ok = ok and (not schemes or parts.scheme.lower() in schemes) and (bool(parts.hostname) or not host)
    if not ok:
        kind = " or ".join(f"{scheme}://" for scheme in schemes) if schemes else "scheme://"
        raise _fail(name, f"a {kind} URL{' with a host' if host else ''}", value, secret=secret)
    return value


def env_origins(name: str, default: str = "") -> list[str]:
    """Comma-separated web origins, each `scheme://host[:port]` with no path."""
    origins = env_list(name, default)
    for origin in origins:
        parts = urlsplit(origin)
        if not (parts.scheme and parts.netloc) or parts.path or parts.query or parts.fragment:
            raise _fail(name, "comma-separated origins scheme://host[:port] (no path)", origin)
    return origins


def env_rate(name: str, default: str) -> str:
    """A rate "<count>/<second|minute|hour|day>"; empty means no limit."""
    value = env_str(name, default)
    if value and not _RATE.match(value):
        raise _fail(name, f"a rate <count>/<{'|'.join(RATE_UNITS)}> (empty: no limit)", value)
    return value


def env_json(name: str, default: Any, *, secret: bool = False) -> Any:
    """A JSON object."""
    raw = _raw(name, secret=secret)
    if raw is None or not raw.strip():
        return default
    try:
        value = environ.Env.parse_value(raw, json.loads)
    except ValueError as exc:
        raise _fail(name, "a JSON object", raw, secret=secret) from exc
    if not isinstance(value, dict):
        raise _fail(name, "a JSON object", raw, secret=secret)
    return value


def env_decimal(name: str) -> Decimal:
    """A non-negative amount; unset or empty is 0."""
    raw = _typed(name) or "0"
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise _fail(name, "an amount in USD", raw) from exc
    if not value.is_finite() or value < 0:
        raise _fail(name, "a non-negative amount in USD", raw)
    return value


def env_prices(name: str) -> dict[str, tuple[Decimal, Decimal]]:
    """JSON {"model": [input, output]}, non-negative USD per million tokens; unset or empty is {}."""
    raw = _typed(name) or "{}"
    expected = 'JSON {"model": [input, output]}, in non-negative USD per million tokens'
    try:
        table = json.loads(raw, parse_float=Decimal, parse_int=Decimal)
        if any(len(pair) != 2 for pair in table.values()):
            raise ValueError("two prices per model")
        prices = {str(model): (Decimal(pair[0]), Decimal(pair[1])) for model, pair in table.items()}
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, InvalidOperation) as exc:
        raise _fail(name, expected, raw) from exc
    if any(not p.is_finite() or p < 0 for pair in prices.values() for p in pair):
        raise _fail(name, expected, raw)
    return prices
