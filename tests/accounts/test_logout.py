"""Signing out: of this session (or this token) only, or everywhere (`{"everywhere": true}`):
the user's API token and every session of theirs end, and no one else's."""

from __future__ import annotations

from django.contrib.sessions.models import Session
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.tutor.test_web_auth import login, web_client


def token_client(username: str) -> tuple[APIClient, str]:
    client = APIClient()
    resp = client.post("/api/v1/auth/token/", {"username": username, "password": f"pw-{username}"}, format="json")
    key = resp.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client, key


def logout(client, csrf: str | None = None, **body):
    extra = {"HTTP_X_CSRFTOKEN": csrf} if csrf else {}
    data = body or None
    return client.post("/api/v1/auth/logout/", data, content_type="application/json", **extra)


def test_signing_out_a_session_ends_that_session_only(school):
    """Plain sign-out of a browser: that session ends; the user's other browser and API token
    keep working (documented: a lost phone's token needs `everywhere`)."""
    laptop, phone = web_client(), web_client()
    laptop_csrf = login(laptop, "alice")
    login(phone, "alice")
    api, _ = token_client("alice")
    assert logout(laptop, laptop_csrf).status_code == 204
    assert laptop.get("/api/v1/me/").status_code == 401
    assert phone.get("/api/v1/me/").status_code == 200
    assert api.get("/api/v1/me/").status_code == 200


def test_signing_out_everywhere_from_a_session(school):
    """`{"everywhere": true}` from one browser: the user's token is revoked and every session of
    theirs ends (this browser, the other one); another user's session and token stay."""
    laptop, phone, other = web_client(), web_client(), web_client()
    laptop_csrf = login(laptop, "alice")
    login(phone, "alice")
    login(other, "bob")
    api, key = token_client("alice")
    bob_api, _ = token_client("bob")

    assert logout(laptop, laptop_csrf, everywhere=True).status_code == 204

    assert laptop.get("/api/v1/me/").status_code == 401
    assert phone.get("/api/v1/me/").status_code == 401
    assert api.get("/api/v1/me/").status_code == 401
    assert not Token.objects.filter(key=key).exists()
    assert other.get("/api/v1/me/").status_code == 200
    assert bob_api.get("/api/v1/me/").status_code == 200
    assert all(s.get_decoded().get("_auth_user_id") != str(school["alice"].pk) for s in Session.objects.all())


def test_signing_out_everywhere_with_the_token(school):
    """With the token: the token is revoked and every browser session of the user ends too."""
    browser = web_client()
    login(browser, "alice")
    api, _ = token_client("alice")
    assert logout(api, everywhere=True).status_code == 204
    assert api.get("/api/v1/me/").status_code == 401
    assert browser.get("/api/v1/me/").status_code == 401


def test_everywhere_must_be_a_boolean(school):
    """A flag that is not JSON's true or false (not even 0, 1 or "yes") is a 400 naming it, and
    signs no one out."""
    api, _ = token_client("alice")
    for flag in ([1], 0, 1, "yes", None):
        resp = logout(api, everywhere=flag)
        assert resp.status_code == 400 and list(resp.json()["error"]["details"]) == ["everywhere"], flag
    assert api.get("/api/v1/me/").status_code == 200
