"""An in-process feed of server-sent events: what one piece of streamed work (a chat turn, an
answer about a student) publishes, kept from the start so that a late follower sees it all.

Work publishes events (`publish`), then `close`s the feed once; followers read the events in
order, in batches (`follow`: each batch is all that was published since the last one, so a busy
server sends the deltas that piled up as one write), and `sse` encodes them for the wire. The
work runs in its own asyncio task, not in the request: a follower that goes away stops reading,
and the work goes on. One event loop only (asyncio.Event is not thread-safe).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from core.errors import ApplicationError, error_body

Event = tuple[str, dict[str, Any]]


class EventFeed:
    """The events of one piece of work, in order, whether it is over, and its error if it failed."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.closed = False
        self.error: ApplicationError | None = None
        self._changed = asyncio.Event()

    def publish(self, event: str, data: dict[str, Any]) -> None:
        self.events.append((event, data))
        self._changed.set()
        self._changed = asyncio.Event()

    def close(self) -> None:
        self.closed = True
        self._changed.set()

    def fail(self, error: ApplicationError) -> None:
        """End the work with `error`: an `error` event (the envelope, with retry_safe), closed."""
        self.error = error
        self.publish("error", error_body(error.code, error.message, error.details, error.retry_safe))
        self.close()

    async def follow(self) -> AsyncIterator[list[Event]]:
        """The events in order, in batches, until the feed is closed and all were read."""
        seen = 0
        while True:
            changed = self._changed
            if seen < len(self.events):
                batch = self.events[seen:]
                seen += len(batch)
                yield batch
            if self.closed and seen == len(self.events):
                return
            if seen == len(self.events):
                await changed.wait()

    async def wait(self) -> None:
        """Until the feed is closed."""
        while not self.closed:
            await self._changed.wait()


def sse_encode(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def sse(feed: EventFeed) -> AsyncIterator[bytes]:
    """The feed as Server-Sent Events. Cancelled when the client goes away: the work goes on."""
    async for batch in feed.follow():
        yield b"".join(sse_encode(event, data) for event, data in batch)
