"""How uvicorn serves the application: what it refuses itself, and how it stops.

- `HttpProtocol`, uvicorn's HTTP protocol (httptools), answering what it refuses itself in the
  error envelope. A request line or headers the parser rejects never reach Django: uvicorn
  answers a plain-text 400. This protocol answers a JSON 400 `bad_request` instead, and a URL
  longer than WEB_MAX_URL_BYTES a JSON 414 `url_too_long`, before the parser buffers more of it.
  scripts/serve.sh passes it to uvicorn (`--http tutor.server:HttpProtocol`).
- `drain`, the shutdown of a worker process as the application sees it (SIGTERM, SIGINT), so
  that nothing is cut without a word: see `Drain` and docs/operations.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from core.drain import DRAIN_RETRY_AFTER_SECONDS

MAX_URL_BYTES = int(os.environ.get("WEB_MAX_URL_BYTES", "") or 16384)


logger = logging.getLogger("uvicorn.error")


def _error(code: str, message: str, details: dict[str, Any] | None = None, retry_safe: bool = False) -> bytes:
    # The envelope of core.errors.error_body, written here without Django (not loaded yet in
    # the protocol) and in English (no user, no language is known yet).
    body = {"error": {"code": code, "message": message, "details": details or {}, "retry_safe": retry_safe}}
    return json.dumps(body).encode()


class HttpProtocol(HttpToolsProtocol):
    url_too_long = False

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > MAX_URL_BYTES:
            self.url_too_long = True
            raise httptools.HttpParserError("URL too long")

    def send_400_response(self, msg: str) -> None:
        if self.url_too_long:
            status = STATUS_LINE[414]
            body = _error("url_too_long", f"The URL is longer than {MAX_URL_BYTES} bytes.")
        else:
            status = STATUS_LINE[400]
            body = _error("bad_request", "The HTTP request could not be parsed.")
        content = [status]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()


# --- Stopping -------------------------------------------------------------------------------------

# The part of the graceful timeout kept, at most, for ending the turns still running and for
# uvicorn's own shutdown.
DRAIN_MARGIN_SECONDS = 5.0


class Drain:
    """How a worker process stops, as the application sees it (one per process: `drain`).

    Left to itself, uvicorn on SIGTERM (or SIGINT) closes its listening socket at once, so that
    requests still coming in wait unanswered in the queue of a socket the supervisor holds open,
    and cuts whatever runs past --timeout-graceful-shutdown (WEB_GRACEFUL_TIMEOUT) without a
    word. `install`, called from the ASGI lifespan's startup, puts a handler before uvicorn's:

    1. at the signal, `started` is set: the application answers each new request at once with a
       503 `server_shutting_down` (`retry_safe`, `Retry-After`; `refuse`), while uvicorn still
       accepts connections;
    2. the requests in progress, and the turns still running without their client (`busy`),
       may end by themselves until the graceful timeout less a margin (DRAIN_MARGIN_SECONDS, or
       a third of the timeout if smaller);
    3. then `on_deadline` ends the rest (conversations.turn.drive.turns_interrupt: each stream
       ends with an `error` event, `retry_safe`), and their responses are given the margin;
    4. then uvicorn's handler runs, with what is left of the timeout as its own: it closes the
       socket and the idle connections, and exits.
    During the drain a second SIGINT (Ctrl+C) hands over to uvicorn at once (and a third quits,
    as uvicorn does); a second SIGTERM changes nothing: systemd signals every process of a
    unit, and the supervisor passes its own on, so each worker process may get two.
    """

    def __init__(self) -> None:
        self.started = False
        # HTTP requests being answered in this process, the refused ones aside (`track`).
        self.active = 0
        self._previous: dict[int, Callable[[int, FrameType | None], Any]] = {}
        self._server: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._busy: Callable[[], bool] = lambda: False
        self._on_deadline: Callable[[], Awaitable[object]] | None = None
        self._task: asyncio.Task[None] | None = None

    def install(self, *, busy: Callable[[], bool], on_deadline: Callable[[], Awaitable[object]]) -> bool:
        """Chain the drain before uvicorn's SIGTERM and SIGINT handlers. `busy()`: whether work
        other than the requests in progress (turns whose client left) should be waited for;
        `on_deadline()`: end that work and the requests waiting for it. Returns False, changing
        nothing, outside uvicorn's Server (another server, a test client, not the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
        servers = {getattr(handler, "__self__", None) for handler in previous.values()}
        server = servers.pop() if len(servers) == 1 else None
        if not isinstance(server, uvicorn.Server):
            return False
        self._server, self._loop = server, asyncio.get_running_loop()
        self._busy, self._on_deadline = busy, on_deadline
        for sig, handler in previous.items():
            assert callable(handler)
            self._previous[sig] = handler
            signal.signal(sig, self._signalled)
        return True

    def _signalled(self, sig: int, frame: FrameType | None) -> None:
        # A signal handler runs on the main thread, between two bytecodes of whatever the event
        # loop was doing: it only sets the flag and hands the drain to the loop.
        if self._loop is None:
            self._previous[sig](sig, frame)
        elif not self.started:
            self.started = True
            self._loop.call_soon_threadsafe(self._begin, sig)
        elif sig == signal.SIGINT:
            self._previous[sig](sig, frame)

    def _begin(self, sig: int) -> None:
        self._task = asyncio.ensure_future(self._drain(sig))

    async def _drain(self, sig: int) -> None:
        assert self._server is not None and self._loop is not None
        loop = self._loop
        begun = loop.time()
        timeout = self._server.config.timeout_graceful_shutdown
        logger.info("Draining: new requests are answered 503; %s in progress", self.active)
        try:
            if timeout is None:  # uvicorn waits as long as it takes: so does the drain
                while self.active or self._busy():
                    await asyncio.sleep(0.1)
            else:
                margin = min(DRAIN_MARGIN_SECONDS, timeout / 3)
                deadline = begun + timeout - margin
                while (self.active or self._busy()) and loop.time() < deadline:
                    await asyncio.sleep(0.1)
                if (self.active or self._busy()) and self._on_deadline is not None:
                    logger.warning("Draining: the graceful timeout is near; ending the turns still running")
                    await self._on_deadline()
                    while self.active and loop.time() < begun + timeout - margin / 2:
                        await asyncio.sleep(0.05)
                # uvicorn's own wait gets what is left of WEB_GRACEFUL_TIMEOUT, not all of it again.
                self._server.config.timeout_graceful_shutdown = max(1, math.ceil(begun + timeout - loop.time()))
        except Exception:
            logger.exception("Draining failed; shutting down at once")
        finally:
            if not self._server.should_exit:  # not handed over already by a second Ctrl+C
                self._previous[sig](sig, None)

    async def track(self, call: Awaitable[None]) -> None:
        """Answer a request, counted as in progress while it is."""
        self.active += 1
        try:
            await call
        finally:
            self.active -= 1

    async def refuse(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """The 503 of a request that arrived during the drain; the connection is closed after it."""
        body = _error(
            "server_shutting_down",
            "The server is restarting; send the request again in a moment.",
            {"retry_after_seconds": DRAIN_RETRY_AFTER_SECONDS},
            retry_safe=True,
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"retry-after", str(DRAIN_RETRY_AFTER_SECONDS).encode("ascii")),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})


drain = Drain()
