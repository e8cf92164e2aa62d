"""Webhooks (webhooks/): the product's events signed and posted to the schools' receivers
(docs/webhooks.md)."""

from __future__ import annotations

from .env import env_bool, env_float, env_int

# Receivers on a loopback, private, link-local or reserved address are refused (at creation and
# at each send) unless this is on: a receiver on the school's own network, or a test's.
WEBHOOKS_ALLOW_PRIVATE_URLS = env_bool("WEBHOOKS_ALLOW_PRIVATE_URLS", False)
WEBHOOKS_TIMEOUT_SECONDS = env_float("WEBHOOKS_TIMEOUT_SECONDS", 5.0, minimum=0.1)
# Retries of a delivery after its first try, the first after this many seconds, doubled at each
# retry, give or take 20% (8 retries: about 85 minutes in all).
WEBHOOKS_DELIVERY_MAX_RETRIES = env_int("WEBHOOKS_DELIVERY_MAX_RETRIES", 8, minimum=0)
WEBHOOKS_DELIVERY_BACKOFF_SECONDS = env_float("WEBHOOKS_DELIVERY_BACKOFF_SECONDS", 10.0, minimum=0.0)
# A webhook whose deliveries failed (every retry spent) this many times in a row is disabled,
# with the reason shown in the API; 0: never.
WEBHOOKS_DISABLE_AFTER_FAILURES = env_int("WEBHOOKS_DISABLE_AFTER_FAILURES", 10, minimum=0)
