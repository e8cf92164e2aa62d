"""The streaming model client's sockets on asyncio's own transports (an httpcore2 network
backend), in place of anyio's.

The openai SDK's client (httpx2 over httpcore2) stays what calls the model; only the layer that
reads and writes its connections changes. Each read and write through anyio's streams enters a
cancel scope and looks the event loop's library up; here a read takes what the connection's
protocol has buffered, or waits on one future with a timer only when a timeout is set. A
request's writes (its headers, then its body) are held until it reads its answer, and sent in
one write to the socket: one system call per request instead of two.

The contract is anyio's backend's (httpcore2._backends.anyio): the same httpcore2 errors for
the same failures (a refused connection is ConnectError, a reset one ReadError, a read past its
timeout ReadTimeout, the peer's end of stream an empty read), TLS through `start_tls`, and
`is_readable` true for an idle connection the server closed or wrote to. `install` sets it on a
client's direct connections only: a connection through a proxy (HTTP_PROXY and the like) keeps
httpcore2's own backend.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import httpcore2
import httpx2

# A request's pending writes are sent at once past this many bytes (a long prompt), not held.
_WRITE_HELD_BYTES = 64 * 1024
# Reading from the socket pauses while this many bytes wait to be read, and resumes below a quarter.
_READ_BUFFER_BYTES = 256 * 1024


class _Connection(asyncio.Protocol):
    """One connection's state, as asyncio's transport reports it: the bytes received and not
    read yet, whether the peer ended, the error that closed it, and who waits for what."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = bytearray()
        self.ended = False
        self.error: BaseException | None = None
        self.reader: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.writing_paused = False
        self.reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if len(self.received) > _READ_BUFFER_BYTES and self.transport is not None and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake_reader()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        if exc is not None:
            self.error = exc
        self._wake_reader()
        self._wake_writer()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake_writer()

    def _wake_reader(self) -> None:
        if self.reader is not None and not self.reader.done():
            self.reader.set_result(None)

    def _wake_writer(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def _wait(connection: _Connection, waiter: str, timeout: float | None, timed_out: type[Exception]) -> None:
    """Until the connection wakes its `waiter` ("reader" or "drained"); `timed_out` after
    `timeout` seconds (None: no limit)."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    setattr(connection, waiter, future)
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future) if timeout is not None else None
    try:
        await future
    except TimeoutError:
        raise timed_out(f"waited {timeout} s") from None
    finally:
        setattr(connection, waiter, None)
        if timer is not None:
            timer.cancel()


class AsyncioStream(httpcore2.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection
        connection.transport = transport  # after `start_tls`, reading pauses on the TLS transport
        self._held: list[bytes] = []
        self._held_bytes = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            await self._send_held(timeout)
        connection = self._connection
        if not connection.received and not connection.ended:
            await _wait(connection, "reader", timeout, httpcore2.ReadTimeout)
        received = connection.received
        if received:
            data = bytes(received[:max_bytes])
            del received[:max_bytes]
            if connection.reading_paused and len(received) < _READ_BUFFER_BYTES // 4:
                connection.reading_paused = False
                self._transport.resume_reading()
            return data
        if connection.error is not None:
            raise httpcore2.ReadError(str(connection.error) or type(connection.error).__name__) from connection.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        if self._held_bytes >= _WRITE_HELD_BYTES:
            await self._send_held(timeout)

    async def _send_held(self, timeout: float | None) -> None:
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        self._held_bytes = 0
        connection = self._connection
        if connection.error is not None or self._transport.is_closing():
            raise httpcore2.WriteError("the connection is closed") from connection.error
        try:
            self._transport.write(data)
        except (OSError, RuntimeError) as exc:
            raise httpcore2.WriteError(str(exc)) from exc
        if connection.writing_paused:
            await _wait(connection, "drained", timeout, httpcore2.WriteTimeout)
            if connection.error is not None:
                raise httpcore2.WriteError(str(connection.error)) from connection.error

    async def aclose(self) -> None:
        self._held.clear()
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        if self._held:
            await self._send_held(timeout)
        loop = asyncio.get_running_loop()
        try:
            transport = await loop.start_tls(
                self._transport,
                self._connection,
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError as exc:
            self._transport.close()
            raise httpcore2.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError) as exc:
            self._transport.close()
            raise httpcore2.ConnectError(str(exc)) from exc
        if transport is None:  # the connection closed during the handshake
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        return AsyncioStream(cast(asyncio.Transport, transport), self._connection)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # An idle connection with bytes waiting or ended by the peer cannot take a request.
            return bool(self._connection.received) or self._connection.ended
        return None


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        # asyncio sets TCP_NODELAY on its TCP sockets, as anyio does.
        local = (local_address, 0) if local_address else None
        return await _connect(
            lambda loop, connection: loop.create_connection(lambda: connection, host, port, local_addr=local),
            timeout,
            socket_options,
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return await _connect(
            lambda loop, connection: loop.create_unix_connection(lambda: connection, path), timeout, socket_options
        )

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connect(
    open_connection: Callable[[asyncio.AbstractEventLoop, _Connection], Awaitable[tuple[Any, Any]]],
    timeout: float | None,
    socket_options: Iterable[Any] | None,
) -> AsyncioStream:
    """A connection opened by `open_connection` on this loop with a `_Connection`, within
    `timeout`: ConnectTimeout past it, ConnectError when refused or unreachable."""
    connection = _Connection()
    try:
        async with asyncio.timeout(timeout):
            transport, _ = await open_connection(asyncio.get_running_loop(), connection)
    except TimeoutError as exc:
        raise httpcore2.ConnectTimeout(f"not connected in {timeout} s") from exc
    except OSError as exc:
        raise httpcore2.ConnectError(str(exc)) from exc
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return AsyncioStream(transport, connection)


def install(client: httpx2.AsyncClient) -> bool:
    """Have `client`'s direct connections (its default transport and the mounts without a proxy)
    made with `AsyncioBackend`, from their next connection on. Whether it was set on any: a
    client built otherwise (a transport of its own, every URL through a proxy) keeps its own."""
    mounts: dict[Any, Any] = getattr(client, "_mounts", {})
    done = False
    for transport in [getattr(client, "_transport", None), *mounts.values()]:
        pool = getattr(transport, "_pool", None) if isinstance(transport, httpx2.AsyncHTTPTransport) else None
        if type(pool) is httpcore2.AsyncConnectionPool and hasattr(pool, "_network_backend"):
            pool._network_backend = AsyncioBackend()
            done = True
    return done
