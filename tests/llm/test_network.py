"""The streaming model client's sockets on asyncio's transports (llm.network): installed on the
chat client's direct connections, and the same httpcore2 errors as anyio's backend."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpcore2
import httpx2
import openai
import pytest

from llm import gateway, network

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _request_head(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    return head + await reader.readexactly(length)


def _run(handler: Handler, client_side: Callable[[str], Awaitable[object]]) -> object:
    async def main() -> object:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await client_side(f"http://127.0.0.1:{port}")
        finally:
            server.close()

    return asyncio.run(main())


def test_the_chat_client_connects_through_asyncio_transports(settings):
    """The streaming chat client's direct connections use the asyncio backend; a connection
    through a proxy keeps httpcore2's own."""
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "m"

    async def pools() -> list[object]:
        client = gateway._async_client(gateway.chat_profile())
        return [client._client._transport._pool._network_backend]  # type: ignore[attr-defined]

    assert isinstance(asyncio.run(pools())[0], network.AsyncioBackend)
    proxied = openai.DefaultAsyncHttpxClient(proxy="http://127.0.0.1:9")
    network.install(proxied)
    (proxy,) = [t for t in proxied._mounts.values() if t is not None]
    assert not isinstance(proxy._pool._network_backend, network.AsyncioBackend)


def test_a_request_and_its_streamed_answer():
    """Headers and body reach the server whole (sent in one write); a chunked answer is read
    piece by piece, then the connection is reused for the next request."""
    requests: list[bytes] = []
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while not reader.at_eof():
            try:
                requests.append(await _request_head(reader))
            except asyncio.IncompleteReadError:
                break
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for piece in (b"data: one\n\n", b"data: two\n\n"):
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(0.01)
            writer.write(b"0\r\n\r\n")
        writer.close()

    async def client_side(base: str) -> object:
        http = openai.DefaultAsyncHttpxClient()
        assert network.install(http)
        lines = []
        for _ in range(2):
            async with http.stream("POST", f"{base}/v1/chat", json={"a": "é" * 10}) as response:
                lines += [line async for line in response.aiter_lines() if line]
        await http.aclose()
        return lines

    assert _run(handler, client_side) == ["data: one", "data: two"] * 2
    assert connections == 1
    assert all(r.endswith('{"a":"éééééééééé"}'.encode()) for r in requests)


def test_errors_are_httpcore_errors_as_with_anyio():
    """A refused connection is ConnectError, an answer cut mid-body RemoteProtocolError (the
    peer's end of stream), a server that says nothing ReadTimeout."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _request_head(reader)
        if b"/cut" in head:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            await writer.drain()
            writer.close()
            return
        await asyncio.sleep(5)

    async def client_side(base: str) -> object:
        http = openai.DefaultAsyncHttpxClient(timeout=httpx2.Timeout(0.3))
        network.install(http)
        errors = []
        for url in ("http://127.0.0.1:9/refused", f"{base}/cut", f"{base}/silent"):
            try:
                response = await http.get(url)
                await response.aread()
            except httpx2.TransportError as exc:
                errors.append(type(exc))
        await http.aclose()
        return errors

    assert _run(handler, client_side) == [httpx2.ConnectError, httpx2.RemoteProtocolError, httpx2.ReadTimeout]


def test_an_idle_connection_the_server_closed_is_readable():
    """httpcore2 drops an idle connection that `is_readable` says the server closed, rather
    than sending a request on it."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async def client_side(base: str) -> object:
        port = int(base.rsplit(":", 1)[1])
        stream = await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        assert await stream.read(10, timeout=5) == b""
        readable = stream.get_extra_info("is_readable")
        await stream.aclose()
        return readable

    assert _run(handler, client_side) is True


def test_a_connection_reset_is_a_read_error():
    async def client_side(base: str) -> object:
        port = int(base.rsplit(":", 1)[1])
        stream = await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        stream._connection.connection_lost(ConnectionResetError("reset"))  # type: ignore[attr-defined]
        with pytest.raises(httpcore2.ReadError, match="reset"):
            await stream.read(10, timeout=5)
        await stream.aclose()
        return True

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    assert _run(handler, client_side) is True
