"""The Redis transport of the Celery broker: kombu's, with one repair, registered for the
`redis://` and `rediss://` URLs by `tutor.celery` before any connection is made.

The repair (docs/operations.md, "Redis"): when a worker loses its broker connection, Celery
collects the connection (which also detaches the transport from it) and then closes it. If the
first close of the channel stopped early (Redis refusing a command while it restarts), the
second one restores the unacknowledged messages on a transport with no connection left, and
kombu raises AttributeError ("'NoneType' object has no attribute 'hostname'"), which Celery
treats as unrecoverable: the worker process exits. Here that case raises the broker's
ConnectionError instead, which the close ignores like any other connection error; the worker
reconnects, and the messages it held stay in Redis's unacknowledged set, delivered again after
the visibility timeout (every task is idempotent).
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            raise redis.exceptions.ConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]


class Transport(kombu_redis.Transport):
    Channel = Channel


def register() -> None:
    """Use this transport for redis:// and rediss:// broker URLs (kombu's alias table)."""
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = "tutor.broker:Transport"
