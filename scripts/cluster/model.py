# ruff: noqa: S104  (listens on its namespace's addresses)
"""The scripted model (tests/llm_server.py) for the cluster, on every address of its namespace:
streamed chat replies spread over 1-2 s, and every other model request (summary, extraction,
safety...) answered after 0.2-0.5 s (the background work of 200 students must fit in the
workers of a 2-core machine). Runs until killed; prints its port first.

    python -m scripts.cluster.model PORT
"""

from __future__ import annotations

import random
import sys
from http.server import ThreadingHTTPServer
from typing import Any

from tests.llm_server import ScriptedLLM

SECONDS = (1.0, 2.0)
BACKGROUND_SECONDS = (0.2, 0.5)


class ClusterLLM(ScriptedLLM):
    def __init__(self, port: int) -> None:
        super().__init__()
        self.stream_seconds = SECONDS
        self.server.server_close()

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # many web and worker processes connect at once
            daemon_threads = True

        self.server = Server(("0.0.0.0", port), self._handler())

    def _next(self, kind: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        step = dict(super()._next(kind, body))
        streamed = bool(body and body.get("stream"))
        if kind not in ("embeddings", "moderations") and not streamed:
            step.setdefault("delay", random.uniform(*BACKGROUND_SECONDS))
        with self.lock:
            self.requests.clear()  # the tests' record of bodies: not needed, and it would grow
        return step


def main() -> None:
    llm = ClusterLLM(int(sys.argv[1]))
    print(llm.server.server_address[1], flush=True)
    llm.server.serve_forever()


if __name__ == "__main__":
    main()
