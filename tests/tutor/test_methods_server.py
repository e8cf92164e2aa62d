"""Methods a URL does not support, through the production server (uvicorn): 405 with the `Allow`
header RFC 9110 requires, listing what the URL does support, on every operation of the schema
and on the pages."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.conftest import headers, new_conversation
from tests.schema import published_schema

UNSUPPORTED = ["TRACE", "PROPFIND", "CONNECT"]


def schema_urls(conversation_id: int, alice_id: int) -> dict[str, set[str]]:
    """Each path of the schema with its ids filled in, and the methods the schema gives it."""
    ids = {"conversation_id": conversation_id, "student_id": alice_id}
    urls: dict[str, set[str]] = {}
    for path, operations in published_schema()["paths"].items():
        url = re.sub(r"\{(\w+)\}", lambda m: str(ids.get(str(m.group(1)), 1)), path)
        urls[url] = {method.upper() for method in operations if method != "parameters"}
    return urls


@pytest.mark.worker
def test_an_unsupported_method_is_a_405_with_allow(server, school) -> None:
    """TRACE (and other methods no URL takes) answers 405 in the envelope with `Allow`, which
    names the methods of the schema for that URL (and never the refused one), for the API, the
    chat turn's URL (an async view of its own) and the web pages."""
    alice = school["alice"]
    conversation_id = new_conversation(server, alice)
    urls = schema_urls(conversation_id, alice.pk)
    assert f"/api/v1/conversations/{conversation_id}/messages/" in urls
    missing = []
    for url, documented in sorted(urls.items()):
        for method in UNSUPPORTED:
            resp = httpx2.request(method, f"{server}{url}", headers=headers(alice), timeout=10)
            assert resp.status_code == 405, (method, url, resp.status_code, resp.text[:300])
            assert resp.json()["error"]["code"] == "method_not_allowed", (method, url)
            allow = {m.strip() for m in resp.headers.get("Allow", "").split(",") if m.strip()}
            if not allow:
                missing.append(f"{method} {url}")
                continue
            assert method not in allow and documented <= allow, (method, url, allow, documented)
    assert missing == []
    for page in ("/app/", "/app/teacher/", "/api/docs/", "/api/redoc/", "/api/schema/"):
        resp = httpx2.request("TRACE", f"{server}{page}", timeout=10)
        assert resp.status_code == 405 and "GET" in resp.headers.get("Allow", ""), (page, resp.headers)
