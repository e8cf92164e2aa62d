"""Throttles and sign-in limits (core.throttles, memory.throttles, accounts.backends)."""

from __future__ import annotations

from .env import env_float, env_int, env_rate

# Throttles (core.throttles), "<count>/<second|minute|hour|day>"; empty turns one off.
THROTTLE_SEND_RATE = env_rate("THROTTLE_SEND_RATE", "30/minute")  # chat sends per user
# Memory writes per user, the API's and the MCP tools' together (memory.throttles).
THROTTLE_MEMORY_WRITE_RATE = env_rate("THROTTLE_MEMORY_WRITE_RATE", "30/minute")
# Sign-in, every way in (the API's token and session logins, the admin: accounts.backends).
# Wrong passwords for one username from one client address (LOGIN_FAILURE_LIMIT), or from all
# addresses together (LOGIN_ACCOUNT_FAILURE_LIMIT), before every attempt at that username (from
# that address, or from any) answers 429, even with the right password, until the window has
# passed; parallel attempts count before their password is checked, so no more than the limit
# are ever checked. 0 turns one off. An address alone is never locked out (many users share one).
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=0)
LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("LOGIN_ACCOUNT_FAILURE_LIMIT", 50, minimum=0)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 900, minimum=1)
# Sign-in attempts per client address, right or wrong, before any password is checked: beyond
# it, 429 until the period has passed (a rate, not a lockout; empty: no limit). Behind a proxy
# the address is the client's only if uvicorn trusts the proxy (WEB_FORWARDED_ALLOW_IPS).
LOGIN_ADDRESS_RATE = env_rate("LOGIN_ADDRESS_RATE", "600/minute")
# Passwords hashed at once per process (a check takes about a second of CPU, holding no database
# connection); an attempt that waits longer than LOGIN_HASH_WAIT_SECONDS for its turn gets 503.
LOGIN_HASH_CONCURRENCY = env_int("LOGIN_HASH_CONCURRENCY", 2, minimum=1)
LOGIN_HASH_WAIT_SECONDS = env_float("LOGIN_HASH_WAIT_SECONDS", 10.0, minimum=0)
# Passwords, and the codes of sign-in cards (accounts.codes), behind the same throttles.
AUTHENTICATION_BACKENDS = ["accounts.backends.LockoutBackend", "accounts.backends.SignInCodeBackend"]
