"""The web's way in: session login and logout with CSRF, token revocation, and CORS."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def web_client() -> Client:
    return Client(enforce_csrf_checks=True)


def csrf(client: Client) -> str:
    resp = client.get("/api/v1/auth/csrf/")
    assert resp.status_code == 200
    token = resp.json()["csrf_token"]
    assert client.cookies["csrftoken"].value
    return token


def login(client: Client, username: str) -> str:
    token = csrf(client)
    resp = client.post(
        "/api/v1/auth/login/",
        {"username": username, "password": f"pw-{username}"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["user"]["username"] == username
    return resp.json()["csrf_token"]


@pytest.mark.parametrize("who", ["alice", "teacher_a"])
def test_session_login_for_every_role_then_logout(school, who):
    """A student and a teacher log in with a session, read their profile, and log out: the
    session no longer authenticates."""
    client = web_client()
    token = login(client, who)
    assert client.get("/api/v1/me/").json()["username"] == who
    assert (
        client.post("/api/v1/auth/logout/", content_type="application/json", HTTP_X_CSRFTOKEN=token).status_code == 204
    )
    assert client.get("/api/v1/me/").status_code == 401


def test_login_needs_the_csrf_token_and_right_password(school):
    """Login without the CSRF token is a 403 csrf_failed; a wrong password is a 400 in the envelope."""
    client = web_client()
    body = {"username": "alice", "password": "pw-alice"}
    resp = client.post("/api/v1/auth/login/", body, content_type="application/json")
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "csrf_failed"
    token = csrf(client)
    wrong = client.post(
        "/api/v1/auth/login/",
        {"username": "alice", "password": "nope"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "invalid"
    assert client.get("/api/v1/me/").status_code == 401


def test_session_write_with_and_without_csrf(school, llm):
    """A session-authenticated write without X-CSRFToken is refused (403 csrf_failed) and
    changes nothing; with it, it goes through. This holds for the chat send too."""
    client = web_client()
    token = login(client, "alice")
    refused = client.post("/api/v1/conversations/", {"subject": "x"}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "csrf_failed"
    created = client.post(
        "/api/v1/conversations/", {"subject": "x"}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert created.status_code == 201
    cid = created.json()["id"]
    assert client.get("/api/v1/conversations/").json()["count"] == 1
    url = f"/api/v1/conversations/{cid}/messages/"
    body = {"content": "hello", "client_message_id": "w1"}
    send = client.post(url, body, content_type="application/json")
    assert send.status_code == 403 and send.json()["error"]["code"] == "csrf_failed"
    assert llm.calls("chat") == []
    sent = client.post(url, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert sent.status_code == 201, sent.content


def test_logout_revokes_the_token(school):
    """Logging out with a token deletes it: the token stops working everywhere."""
    client = APIClient()
    key = client.post("/api/v1/auth/token/", {"username": "bob", "password": "pw-bob"}, format="json").json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/me/").status_code == 200
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert not Token.objects.filter(key=key).exists()
    again = client.get("/api/v1/me/")
    assert again.status_code == 401 and again.json()["error"]["code"] == "authentication_failed"


def test_cross_origin_preflight_and_request(school, settings):
    """A browser app on an allowed origin gets its preflight answered (no login needed) and
    the CORS headers on the real request; another origin gets none."""
    settings.CORS_ALLOWED_ORIGINS = ["https://app.school.example"]
    client = Client()
    preflight = client.options(
        "/api/v1/conversations/",
        HTTP_ORIGIN="https://app.school.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == "https://app.school.example"
    assert "POST" in preflight["Access-Control-Allow-Methods"]
    assert "authorization" in preflight["Access-Control-Allow-Headers"]
    key = Token.objects.create(user=school["alice"]).key
    real = client.get(
        "/api/v1/conversations/", HTTP_ORIGIN="https://app.school.example", HTTP_AUTHORIZATION=f"Token {key}"
    )
    assert real.status_code == 200
    assert real["Access-Control-Allow-Origin"] == "https://app.school.example"
    other = client.options(
        "/api/v1/conversations/", HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )
    assert "Access-Control-Allow-Origin" not in other
