"""Token authentication (core.auth.TokenAuthentication): DRF's answers, from one statement."""

from __future__ import annotations

from django.test import Client
from rest_framework.authtoken.models import Token

from core.auth import TokenAuthentication


def test_a_token_gives_its_user_and_itself_in_one_query(school, django_assert_num_queries):
    """One query finds the token's user, every field loaded; the token is the request's `auth`:
    its creation time read when asked, and deleting it (a sign-out) revokes it."""
    token = Token.objects.create(user=school["alice"])
    with django_assert_num_queries(1):
        user, auth = TokenAuthentication().authenticate_credentials(token.key)
        assert user == school["alice"] and user.get_deferred_fields() == set()
        assert user.username == "alice" and user.school_id == school["school"].pk
        assert auth.key == token.key and auth.user is user
    assert auth.created == token.created
    auth.delete()
    assert not Token.objects.filter(key=token.key).exists()


def test_an_unknown_token_or_an_inactive_users_is_refused_as_drf_refuses_it(school):
    """An unknown key, or the key of a deactivated user, is a 401 `authentication_failed` with
    DRF's own message."""
    token = Token.objects.create(user=school["bob"])
    unknown = Client().get("/api/v1/me/", HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert unknown.status_code == 401
    assert unknown.json()["error"] | {"details": {}} == {
        "code": "authentication_failed",
        "message": "Invalid token.",
        "details": {},
        "retry_safe": False,
    }
    school["bob"].is_active = False
    school["bob"].save(update_fields=["is_active"])
    inactive = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert inactive.status_code == 401
    assert inactive.json()["error"]["message"] == "User inactive or deleted."
