"""Signing in, whatever the way in: the API's token and session logins and the admin's login form
share one lockout (accounts.backends), and no credentials can make a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import client_for


def token_login(client: Any, username: str, password: str) -> Any:
    return client.post("/api/v1/auth/token/", {"username": username, "password": password}, format="json")


def admin_login(client: Client, username: str, password: str) -> Any:
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password, "next": "/admin/"})


@pytest.fixture
def staff(school: dict[str, Any]) -> Any:
    """teacher_a, given the admin (is_staff)."""
    teacher = school["teacher_a"]
    teacher.is_staff = True
    teacher.save(update_fields=["is_staff"])
    return teacher


def test_an_account_locked_through_the_api_cannot_sign_in_to_the_admin(staff, settings):
    """After LOGIN_ACCOUNT_FAILURE_LIMIT wrong passwords on POST /auth/token/, the admin's login
    form refuses the right password too, from another address: 429 with Retry-After, the form
    says why, and no session is opened."""
    settings.LOGIN_FAILURE_LIMIT = 10
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    api = client_for(None)
    for i in range(3):
        assert token_login(api, "teacher_a", f"wrong-{i}").status_code == 400
    browser = Client(REMOTE_ADDR="10.0.0.9")
    resp = admin_login(browser, "teacher_a", "pw-teacher_a")
    assert resp.status_code == 429
    assert 0 < int(resp["Retry-After"]) <= 600
    assert "Too many failed logins" in resp.content.decode()
    assert "_auth_user_id" not in browser.session
    assert browser.get("/admin/").status_code == 302  # to the login page


def test_wrong_passwords_on_the_admin_lock_the_account_everywhere(staff, settings):
    """The admin's login form counts failures with the API's: after the limit it answers 429
    (the right password too) instead of evaluating more guesses, and the API's token login is
    locked for that username as well, from another address once the account's limit is reached."""
    settings.LOGIN_FAILURE_LIMIT = 5
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 5
    browser = Client()
    statuses = [admin_login(browser, "teacher_a", f"wrong-{i}").status_code for i in range(12)]
    assert statuses[:5] == [200] * 5  # the form again, with Django's error
    assert set(statuses[5:]) == {429}
    assert admin_login(browser, "teacher_a", "pw-teacher_a").status_code == 429
    api = client_for(None)
    api.defaults["REMOTE_ADDR"] = "10.0.0.7"
    resp = token_login(api, "teacher_a", "pw-teacher_a")
    assert resp.status_code == 429 and resp.json()["error"]["code"] == "throttled"


def test_the_admin_still_signs_in_below_the_limit(staff, settings):
    """With the lockout on, the right password on the admin's form signs in (a redirect to the
    admin) and resets the count of that username's failures."""
    settings.LOGIN_FAILURE_LIMIT = 3
    browser = Client()
    for i in range(2):
        assert admin_login(browser, "teacher_a", f"wrong-{i}").status_code == 200
    resp = admin_login(browser, "teacher_a", "pw-teacher_a")
    assert resp.status_code == 302 and resp["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200
    other = Client(REMOTE_ADDR="10.0.0.8")
    for i in range(2):
        assert admin_login(other, "teacher_a", f"wrong-again-{i}").status_code == 200
    assert admin_login(other, "teacher_a", "pw-teacher_a").status_code == 302


@pytest.mark.parametrize("limit", [0, 10])
@pytest.mark.parametrize("field", ["username", "password"])
@pytest.mark.parametrize("url", ["/api/v1/auth/token/", "/api/v1/auth/login/"])
def test_a_lone_surrogate_in_the_credentials_is_a_400(school, settings, url, field, limit):
    """A lone UTF-16 surrogate (JSON "\\ud800"), which no text encoding accepts, in the username
    or the password is a 400 `invalid` naming the field, with the lockout on or off."""
    settings.LOGIN_FAILURE_LIMIT = limit
    body = {"username": '"alice"', "password": '"pw-alice"'}
    body[field] = '"ali\\ud800ce"'
    raw = "{" + ", ".join(f'"{key}": {value}' for key, value in body.items()) + "}"
    client = client_for(None)
    if url.endswith("/login/"):
        client = client_for(None)
        client.enforce_csrf_checks = False
    resp = client.post(url, data=raw.encode(), content_type="application/json")
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert error["code"] == "invalid" and field in error["details"]
