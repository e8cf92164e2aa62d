"""A webhook receiver for the tests: an HTTP server on a thread of the test process that keeps
every request and answers each with the next scripted status (then 200). Used by the safety
alerts' tests and the webhooks' tests, which verify each signature with standardwebhooks."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from standardwebhooks.webhooks import Webhook


class Receiver:
    """Listens on 127.0.0.1 once `start()`ed; before that its port is bound but refuses
    connections (a receiver that is down). `wait(n)` blocks until n requests arrived."""

    def __init__(self, path: str = "/hooks/safety") -> None:
        self.statuses: list[int] = []
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.arrived:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    receiver.arrived.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self.server.server_bind()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Self:
        self.server.server_activate()
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def wait(self, count: int = 1, timeout: float = 20.0) -> list[tuple[dict[str, str], bytes]]:
        """The requests, once at least `count` arrived (AssertionError after `timeout`)."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"{len(self.requests)} of {count} webhook requests arrived")
            return list(self.requests)

    def verified(self, secret: str) -> list[dict[str, Any]]:
        """Every request's payload, each signature verified (raises if one does not verify)."""
        return [Webhook(secret).verify(body, headers) for headers, body in self.requests]
