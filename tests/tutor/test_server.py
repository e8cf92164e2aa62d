"""The production server (scripts/serve.sh) over real HTTP: what uvicorn refuses itself is in
the envelope too, and the schema, the docs and their assets are served by the process."""

from __future__ import annotations

import json
import socket

import httpx2
import pytest

pytestmark = pytest.mark.worker


def raw(base: str, request: bytes) -> bytes:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_refusals_of_the_http_server_are_json(server):
    """A URL over WEB_MAX_URL_BYTES is a JSON 414 `url_too_long`; a request the parser cannot
    read is a JSON 400 `bad_request` (uvicorn's own answer is plain text)."""
    for size in (20_000, 70_000):
        answer = raw(server, b"GET /api/v1/memories/?q=" + b"a" * size + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 414"), head
        assert b"content-type: application/json" in head.lower()
        assert json.loads(body)["error"]["code"] == "url_too_long"
    answer = raw(server, b"GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["code"] == "bad_request"
    # A URL within the limit reaches Django.
    assert httpx2.get(f"{server}/api/v1/memories/?q={'a' * 10_000}").status_code == 401


def test_schema_docs_and_assets_are_served(server):
    """/api/schema/, /api/docs/ and the docs' JavaScript come from this server (no CDN)."""
    assert httpx2.get(f"{server}/api/schema/").status_code == 200
    docs = httpx2.get(f"{server}/api/docs/")
    assert docs.status_code == 200
    asset = httpx2.get(f"{server}/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200 and len(asset.content) > 100_000


def test_cross_origin_preflight_through_the_server(server, monkeypatch):
    """The preflight of an unknown origin gets no CORS headers and no 401 either."""
    resp = httpx2.options(
        f"{server}/api/v1/conversations/",
        headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"},
    )
    assert resp.status_code == 200
    assert "access-control-allow-origin" not in resp.headers
