"""A native app signs in with a school's provider as RFC 8252 says (the system browser, the
authorization code and PKCE), against the real provider: the backend sends the app's redirect
URI a one-time code of its own, which the app exchanges once, with its verifier, for the same
API token POST /auth/token/ gives."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from sso.models import AppSignInCode
from tests.sso.conftest import make_provider, sign_in_at_provider
from tests.sso.test_sign_in import callback_path, signed_in_user

APP = "org.example.tutor:/oidc"


@pytest.fixture
def provider(school: dict[str, Any], oidc_provider: Any, sso_settings: Any) -> Any:
    school["alice"].external_id = "pupil-sub"
    school["alice"].save(update_fields=["external_id"])
    return make_provider(school["school"], oidc_provider.issuer)


def app_sign_in(provider_id: int, username: str, verifier: str, state: str = "app-state-1") -> dict[str, list[str]]:
    """The system browser's part: the login with the app's redirect URI, challenge and state,
    the provider's form, the callback; the query the app's redirect URI receives."""
    browser = Client()
    params = {"redirect_uri": APP, "code_challenge": create_s256_code_challenge(verifier), "state": state}
    start = browser.get(f"/auth/oidc/{provider_id}/login/", params)
    assert start.status_code == 302, start.content
    back = browser.get(callback_path(sign_in_at_provider(start["Location"], username)))
    assert back.status_code == 302, back.content
    assert back["Location"].startswith(APP + "?"), back["Location"]
    assert signed_in_user(browser) is None  # the browser itself is not signed in
    return parse_qs(urlsplit(back["Location"]).query)


def exchange(code: str, verifier: str) -> Any:
    return APIClient().post("/api/v1/auth/oidc/token/", {"code": code, "code_verifier": verifier}, format="json")


def test_the_app_gets_the_persons_token_once(provider, school):
    """The app's state comes back with a one-time code, stored only as its hash; the code and
    the right verifier give the student's token (that of POST /auth/token/), which works on the
    API; the same code a second time is refused."""
    verifier = secrets.token_urlsafe(48)
    query = app_sign_in(provider.pk, "pupil", verifier)
    assert query["state"] == ["app-state-1"]
    code = query["code"][0]
    assert not AppSignInCode.objects.filter(code_hash=code).exists()
    resp = exchange(code, verifier)
    assert resp.status_code == 200, resp.content
    assert resp.json() == {"token": Token.objects.get(user=school["alice"]).key}
    me = APIClient(HTTP_AUTHORIZATION=f"Token {resp.json()['token']}").get("/api/v1/me/")
    assert me.json()["id"] == school["alice"].pk
    again = exchange(code, verifier)
    assert again.status_code == 400 and again.json()["error"]["code"] == "invalid"


def test_a_wrong_verifier_is_refused_and_spends_the_code(provider):
    """Another verifier than the challenge's: 400; the code is spent, so the right verifier
    after it is refused too."""
    verifier = secrets.token_urlsafe(48)
    code = app_sign_in(provider.pk, "pupil", verifier)["code"][0]
    assert exchange(code, secrets.token_urlsafe(48)).status_code == 400
    assert exchange(code, verifier).status_code == 400


def test_an_expired_code_is_refused(provider, settings):
    """A code older than OIDC_APP_CODE_SECONDS: 400."""
    settings.OIDC_APP_CODE_SECONDS = -1
    verifier = secrets.token_urlsafe(48)
    code = app_sign_in(provider.pk, "pupil", verifier)["code"][0]
    assert exchange(code, verifier).status_code == 400


@pytest.mark.parametrize(
    "body",
    [{}, {"code": "x"}, {"code": "x", "code_verifier": "short"}, {"code": 5, "code_verifier": "a" * 43}],
)
def test_a_malformed_exchange_is_a_400(db, body):
    """A missing or malformed code or verifier: 400 in the envelope."""
    resp = APIClient().post("/api/v1/auth/oidc/token/", body, format="json")
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid"


def test_someone_refused_goes_back_to_the_app_with_the_error(provider):
    """A person the school does not let in: the app's redirect URI gets `error=access_denied`,
    its description and the app's state; no code is made."""
    verifier = secrets.token_urlsafe(48)
    browser = Client()
    params = {"redirect_uri": APP, "code_challenge": create_s256_code_challenge(verifier), "state": "s-2"}
    start = browser.get(f"/auth/oidc/{provider.pk}/login/", params)
    back = browser.get(callback_path(sign_in_at_provider(start["Location"], "stranger")))
    query = parse_qs(urlsplit(back["Location"]).query)
    assert back["Location"].startswith(APP + "?")
    assert query["error"] == ["access_denied"] and query["state"] == ["s-2"] and "code" not in query
    assert "not known" in query["error_description"][0]
    assert not AppSignInCode.objects.exists()


@pytest.mark.parametrize(
    "params",
    [
        {"redirect_uri": "org.evil.app:/steal", "code_challenge": "a" * 43},  # not an allowed redirect URI
        {"redirect_uri": APP},  # no PKCE
        {"redirect_uri": APP, "code_challenge": "a" * 43, "code_challenge_method": "plain"},
        {"redirect_uri": APP, "code_challenge": "too-short"},
    ],
)
def test_an_app_login_without_an_allowed_redirect_or_pkce_is_a_400(provider, params):
    """The app's redirect URI must be one of OIDC_APP_REDIRECT_URIS and PKCE S256 is required:
    a 400 page, and the browser is not sent to the provider."""
    resp = Client().get(f"/auth/oidc/{provider.pk}/login/", params)
    assert resp.status_code == 400 and resp["Content-Type"].startswith("text/html")
