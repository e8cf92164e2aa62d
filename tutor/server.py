"""uvicorn's HTTP protocol (httptools), answering what it refuses itself in the error envelope.

A request line or headers the parser rejects never reach Django: uvicorn answers a plain-text
400. This protocol answers a JSON 400 `bad_request` instead, and a URL longer than
WEB_MAX_URL_BYTES a JSON 414 `url_too_long`, before the parser buffers more of it.
scripts/serve.sh passes it to uvicorn (`--http tutor.server:HttpProtocol`).
"""

from __future__ import annotations

import json
import os

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

MAX_URL_BYTES = int(os.environ.get("WEB_MAX_URL_BYTES", "") or 16384)


def _error(code: str, message: str) -> bytes:
    # The envelope of tutor.errors.error_body, written here without Django (not loaded yet in
    # the protocol) and in English (no user, no language is known yet).
    return json.dumps({"error": {"code": code, "message": message, "details": {}, "retry_safe": False}}).encode()


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
