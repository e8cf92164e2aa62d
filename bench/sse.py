"""Server-sent events read from a streamed httpx2 response, for the load tools (bench/load.py,
scripts/cluster/load.py): each event's name and its data lines joined, as the browser's
EventSource gives them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any


async def sse_events(response: Any) -> AsyncIterator[tuple[str, str]]:
    """Yield (event, data) for each named event of `response` as its blank line arrives."""
    event, data = "", []
    async for line in response.aiter_lines():
        line = line.rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and event:
            yield event, "\n".join(data)
            event, data = "", []
