"""Signed webhooks in the Standard Webhooks format (https://www.standardwebhooks.com), as the
safety alerts and the product's webhooks send them: one JSON body, signed with a `whsec_` secret
by the `standardwebhooks` library, POSTed with `webhook-id` (stable across tries, so a receiver
drops a duplicate), `webhook-timestamp` and `webhook-signature`.

`signed_post` raises `PostFailed` on what a retry may fix (the network, a non-2xx answer) and
`PostImpossible` on what no retry fixes (no secret, a secret that is not one, a URL refused).
`url_refusal` says why a target is refused: not http(s), or an address on a loopback, private,
link-local or reserved network, unless `allow_private` (a receiver on the school's own network,
or a test's).

A delivery log (the safety alerts', the webhooks') keeps one row per message with `status`,
`attempts` and `created_at`; `lost_deliveries` finds the pending rows whose task was lost, for
their app's periodic sweep, and `retry_budget` bounds how long a row's tries may take.
"""

from __future__ import annotations

import base64
import ipaddress
import secrets
import socket
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx2
from django.db.models import Q, QuerySet
from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook


class PostFailed(Exception):
    """A failure a retry may fix. `status_code` is the receiver's answer, if it answered."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class PostImpossible(Exception):
    """A failure no retry can fix: no signing secret, an invalid one, or a refused URL."""


def secret_generate() -> str:
    """A new signing secret: `whsec_` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def signer(secret: str) -> Webhook:
    """The library's signer for `secret`; PostImpossible if it is empty or not a whsec_ secret."""
    if not secret:
        raise PostImpossible("webhook: no signing secret")
    try:
        return Webhook(secret)
    except (ValueError, EmptyWebhookSecretError) as exc:  # not base64 (binascii.Error), or empty
        raise PostImpossible(
            f"webhook: the signing secret is not a valid whsec_ secret ({type(exc).__name__})"
        ) from exc


def url_refusal(url: str, *, allow_private: bool, resolve: bool = True) -> str | None:
    """Why a webhook may not be sent to `url`, or None: a scheme other than http(s), no host, or
    (unless `allow_private`) a host that is, or resolves to, an address that is not global
    (loopback, private, link-local, reserved, unspecified). A name is resolved when `resolve` is
    set; one that does not resolve (now) is not refused: sending to it fails as the network
    does, and each send checks again."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "the URL must be http or https"
    host = parts.hostname
    if not host:
        return "the URL has no host"
    if allow_private:
        return None
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        if not resolve:
            return None
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80))
        except (OSError, UnicodeError):
            return None
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    for address in addresses:
        if not address.is_global or address.is_multicast:
            return f"the host {host} is on a private, loopback or reserved network ({address})"
    return None


def signed_post(url: str, *, secret: str, message_id: str, body: str, timeout: float, now: datetime) -> httpx2.Response:
    """POST `body` (JSON text) to `url`, signed with `secret` under `message_id` at `now`. The
    receiver's 2xx answer, or PostFailed (network, timeout, any other status) or PostImpossible
    (the secret)."""
    signature = signer(secret).sign(msg_id=message_id, timestamp=now, data=body)
    headers = {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }
    try:
        response = httpx2.post(url, content=body.encode(), headers=headers, timeout=timeout)
    except httpx2.HTTPError as exc:
        raise PostFailed(f"webhook: {type(exc).__name__}: {exc}") from exc
    if not 200 <= response.status_code < 300:
        raise PostFailed(f"webhook: HTTP {response.status_code}", status_code=response.status_code)
    return response


# A delivery never tried this long after it was made lost its task (the broker was down).
SWEEP_AFTER = timedelta(minutes=5)


def retry_budget(*, retries: int, backoff_seconds: float, try_seconds: float) -> timedelta:
    """The longest a delivery's tries may take: `retries` exponential backoffs from
    `backoff_seconds`, each at its longest (+20% jitter), and every try at its time limit."""
    backoff = sum(backoff_seconds * 2**i * 1.2 for i in range(retries))
    return timedelta(seconds=backoff + (retries + 1) * try_seconds)


def lost_deliveries(pending: QuerySet[Any], *, budget: timedelta, now: datetime, limit: int = 500) -> list[int]:
    """The ids of `pending` rows (a delivery log's pending ones, with `attempts` and
    `created_at`) whose task was lost: never tried SWEEP_AFTER after they were made (the broker
    was down when they were enqueued), or still pending after every retry could have run
    (`budget`: a worker died, or a retry could not be queued). Oldest first, at most `limit`."""
    never_tried = Q(attempts=0, created_at__lt=now - SWEEP_AFTER)
    stalled = Q(attempts__gt=0, created_at__lt=now - SWEEP_AFTER - budget)
    return list(pending.filter(never_tried | stalled).order_by("created_at").values_list("pk", flat=True)[:limit])
