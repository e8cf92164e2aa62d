"""Every error is the JSON envelope, one code per meaning, and no crafted input makes a 500."""

from __future__ import annotations

import json

import pytest
from django.test import Client

BIG = 5 * 1024 * 1024


def assert_envelope(resp, status: int, code: str) -> dict:
    assert resp.status_code == status, resp.content[:300]
    assert resp["Content-Type"].startswith("application/json")
    body = resp.json()["error"]
    assert body["code"] == code, body
    assert body["message"]
    return body


@pytest.mark.parametrize("debug", [False, True])
def test_unknown_urls_are_json_404_in_and_outside_the_api(db, settings, debug):
    """Unknown URLs answer 404 in the envelope, under /api/ and elsewhere, DEBUG on or off."""
    settings.DEBUG = debug
    for url in ("/api/v1/nope/", "/nope", "/app-nope/x"):
        assert_envelope(Client().get(url), 404, "not_found")


def test_post_without_the_trailing_slash_names_the_right_url(school):
    """A POST without the trailing slash is a 404 that names the URL with it (not a CSRF page,
    not a redirect that would lose the body)."""
    client = Client(enforce_csrf_checks=True)
    body = assert_envelope(
        client.post("/api/v1/auth/token", {"username": "a"}, content_type="application/json"), 404, "not_found"
    )
    assert body["details"]["did_you_mean"] == "/api/v1/auth/token/"


@pytest.mark.parametrize(
    "url", ["/api/v1/auth/token/", "/api/v1/auth/login/", "/api/v1/memories/", "/api/v1/conversations/{cid}/messages/"]
)
def test_an_oversized_body_is_a_413(clients, url, settings):
    """A 5 MB body is a 413 `request_too_large` naming the limit, on every JSON endpoint (the
    login ones without any session or token)."""
    cid = clients["alice"].post("/api/v1/conversations/", {}, format="json").json()["id"]
    payload = json.dumps({"content": "x" * BIG, "client_message_id": "big"})
    client = clients["alice"] if "{cid}" in url else clients["teacher_a"]
    if "auth" in url:
        client = Client()
    resp = client.post(url.format(cid=cid), payload, content_type="application/json")
    body = assert_envelope(resp, 413, "request_too_large")
    assert body["details"]["limit_bytes"] == settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_deeply_nested_json_is_a_400(clients, depth):
    """JSON nested deeper than JSON_MAX_DEPTH is a 400 `json_too_deep`, logged in or not, and
    never a RecursionError."""
    assert_envelope(
        Client().post("/api/v1/auth/token/", nested(depth), content_type="application/json"), 400, "json_too_deep"
    )
    body = '{"title": ' + nested(depth) + "}"
    assert_envelope(
        clients["teacher_a"].post("/api/v1/memories/", body, content_type="application/json"), 400, "json_too_deep"
    )


def test_json_within_the_depth_bound_is_parsed(clients):
    """32 levels is allowed: the request fails validation (a title is text), not parsing."""
    body = '{"student": 1, "title": ' + nested(31) + ', "content": "x"}'
    resp = clients["teacher_a"].post("/api/v1/memories/", body, content_type="application/json")
    assert_envelope(resp, 400, "invalid")


@pytest.mark.parametrize("number", [2**63, 2**63 - 1, 10**30, 0])
def test_out_of_range_ids_are_404(clients, number):
    """Ids past a 64-bit key (or 0) are a 404 on every detail URL, never a database error."""
    for url in (
        f"/api/v1/conversations/{number}/",
        f"/api/v1/conversations/{number}/messages/",
        f"/api/v1/conversations/{number}/end/",
        f"/api/v1/memories/{number}/",
        f"/api/v1/students/{number}/",
    ):
        assert_envelope(clients["alice"].get(url) if "end" not in url else clients["alice"].post(url), 404, "not_found")
    send = clients["alice"].post(
        f"/api/v1/conversations/{number}/messages/", {"content": "hi", "client_message_id": "r"}, format="json"
    )
    assert_envelope(send, 404, "not_found")


def test_out_of_range_filters_are_400(clients):
    """An id filter past a 64-bit key is a 400 naming the field."""
    body = assert_envelope(clients["teacher_a"].get(f"/api/v1/memories/?student={2**63}"), 400, "invalid")
    assert "student" in body["details"]


def test_forbidden_has_one_code(clients, school):
    """A role refused (a student writing a teacher note) is `forbidden`, the same code as DRF's
    permission refusals."""
    resp = clients["alice"].post(
        "/api/v1/memories/", {"student": school["alice"].pk, "title": "t", "content": "c"}, format="json"
    )
    assert_envelope(resp, 403, "forbidden")


@pytest.mark.parametrize("debug", [False, True])
def test_a_server_error_is_the_envelope_and_logged(clients, settings, monkeypatch, caplog, debug):
    """An unexpected exception is a logged 500 `server_error` in the envelope, DEBUG on or off."""
    from conversations import selectors

    settings.DEBUG = debug

    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "conversation_list", broken)
    clients["alice"].raise_request_exception = False
    assert_envelope(clients["alice"].get("/api/v1/conversations/"), 500, "server_error")
    assert "boom" in caplog.text
