"""/static/ as the production server (scripts/serve.sh, SERVE_STATIC=1) serves it: the files of
the apps' static folders, and for any other path, a traversal or a NUL byte included, a JSON 404
in the error envelope (never uvicorn's plain-text 500)."""

from __future__ import annotations

import json

import pytest

from tests.tutor.test_server import raw

pytestmark = pytest.mark.worker

# Encoded shapes of "..", a backslash, a NUL byte and an empty name, alone and reaching for files
# that exist outside the static folders (the project's manage.py and settings).
NOT_STATIC_FILES = [
    "/static/%2e%2e/",
    "/static/%2e%2e",
    "/static/%2e%2e%2f",
    "/static/%2e%2e%2fmanage.py",
    "/static/%2e%2e/%2e%2e/manage.py",
    "/static/..%2f..%2ftutor%2fsettings%2fbase.py",
    "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/static/..%5c",
    "/static/..%5c..%5cmanage.py",
    "/static/%5c..%5cmanage.py",
    "/static/%00",
    "/static/web/%00.js",
    "/static/..%00/",
    "/static/%2e%2e%00",
    "/static/",
    "/static/web/",
    "/static/%ff%fe",
    "/static/no-such-file.js",
]


def status_and_body(base: str, path: str) -> tuple[bytes, bytes]:
    """The head and body of `GET path` sent byte for byte (no client normalises it)."""
    answer = raw(base, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    head, _, body = answer.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        chunks, rest = [], body
        while True:
            size, _, rest = rest.partition(b"\r\n")
            if int(size, 16) == 0:
                break
            chunks.append(rest[: int(size, 16)])
            rest = rest[int(size, 16) + 2 :]
        body = b"".join(chunks)
    return head, body


def test_paths_that_name_no_static_file_are_json_404s(server):
    """Each path is a 404 `not_found` in the envelope, as JSON; no file outside the static
    folders is served, and the server logs no traceback (the fixture checks its log)."""
    for path in NOT_STATIC_FILES:
        head, body = status_and_body(server, path)
        assert head.startswith(b"HTTP/1.1 404"), (path, head, body[:300])
        assert b"content-type: application/json" in head.lower(), (path, head)
        assert json.loads(body)["error"]["code"] == "not_found", (path, body)


def test_a_static_file_is_still_served(server):
    """A file of a static folder is served as before."""
    head, body = status_and_body(server, "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"content-type: text/css" in head.lower() and len(body) > 1000
