"""A send while PostgreSQL cannot be reached, through the production server (scripts/serve.sh):
the documented 503 `database_unavailable`, `retry_safe: true`, JSON or streamed, never a 500;
and the same message sent again once the database is back is answered."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import pytest

from conversations.models import Message
from tests.conftest import _database_url, headers, new_conversation, wait_for


class Cut:
    """A TCP relay between the server and PostgreSQL that the test can cut: `cut()` closes every
    relayed connection and refuses new ones (as a database host gone), `mend()` relays again."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = threading.Event()
        self.open.set()
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open.is_set():
                client.close()  # refused while cut: the pool's connection attempts fail at once
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.open.clear()
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def mend(self) -> None:
        self.open.set()

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def relay(worker_env: dict[str, str]) -> Iterator[Cut]:
    """The server's database behind a relay the test cuts; a pool that gives up after a second."""
    url = urlsplit(_database_url())
    relay = Cut(url.hostname or "127.0.0.1", url.port or 5432)
    netloc = url.netloc.rsplit("@", 1)
    auth = f"{netloc[0]}@" if len(netloc) == 2 else ""
    worker_env["DATABASE_URL"] = urlunsplit(url._replace(netloc=f"{auth}127.0.0.1:{relay.port}"))
    worker_env["DB_POOL_TIMEOUT_SECONDS"] = "1"
    worker_env["DB_POOL_MIN_SIZE"] = "0"
    yield relay
    relay.close()


def send(base: str, user: Any, cid: int, cmid: str, **extra: str) -> httpx2.Response:
    return httpx2.post(
        f"{base}/api/v1/conversations/{cid}/messages/",
        json={"content": "How do I add 1/2 and 1/3?", "client_message_id": cmid},
        headers=headers(user, **extra),
        timeout=60,
    )


@pytest.mark.postgresql_only
def test_a_send_while_the_database_is_down_is_a_retry_safe_503(relay, server, llm, school):
    """While the database cannot be reached, a send (JSON or `Accept: text/event-stream`) answers
    503 `database_unavailable` with `retry_safe: true`; once the database is back, the same
    message sent again is stored once and answered."""
    alice = school["alice"]
    cid = new_conversation(server, alice)
    relay.cut()
    try:
        for cmid, accept in (("down-json", "application/json"), ("down-sse", "text/event-stream")):
            resp = send(server, alice, cid, cmid, Accept=accept)
            assert resp.status_code == 503, resp.text
            assert resp.headers["Content-Type"].startswith("application/json"), resp.headers
            error = resp.json()["error"]
            assert (error["code"], error["retry_safe"]) == ("database_unavailable", True), error
    finally:
        relay.mend()
    # The pool reconnects on its own schedule: the client retries, as retry_safe allows.
    again = wait_for(lambda: (r := send(server, alice, cid, "down-json")).status_code != 503 and r, timeout=60)
    assert again.status_code == 201, again.text
    assert Message.objects.filter(conversation_id=cid, client_message_id="down-json").count() == 1
    assert not Message.objects.filter(conversation_id=cid, client_message_id="down-sse").exists()
