"""Signing in with a school's OpenID Connect provider, in the browser and from a native app,
against a real provider in its own process (tests/oidc_provider, django-oauth-toolkit): who may
sign in, and every answer refused (a replayed or foreign callback, a tampered, expired,
misaddressed or foreign ID token, a provider down or answering garbage), never a 500."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from accounts.models import School, User
from tests.conftest import make_user
from tests.sso.conftest import make_provider, sign_in_at_provider


@pytest.fixture
def people(school: dict[str, Any], oidc_provider: Any, sso_settings: Any) -> dict[str, Any]:
    """School A's provider (the real one), and the people the roster knows."""
    a = school["school"]
    teacher = school["teacher_a"]
    teacher.external_id = "hopper-sub"
    teacher.save(update_fields=["external_id"])
    other = School.objects.create(name="Other school")
    return {
        **school,
        "provider": make_provider(a, oidc_provider.issuer),
        "mailed": make_user("mailed", User.Role.TEACHER, school=a, email="Mail.Teacher@a.test"),
        "unverified": make_user("unverified", User.Role.TEACHER, school=a, email="unverified@a.test"),
        "gone": make_user("gone", User.Role.TEACHER, school=a, external_id="gone-sub", is_active=False),
        "outsider": make_user("outsider", User.Role.TEACHER, school=other, external_id="outsider-sub"),
        "other_school": other,
    }


def start(client: Client, provider_id: int, **params: str) -> str:
    response = client.get(f"/auth/oidc/{provider_id}/login/", params)
    assert response.status_code == 302, response.content
    return str(response["Location"])


def callback_path(url: str) -> str:
    parts = urlsplit(url)
    assert parts.path == "/auth/oidc/callback/", url
    return f"{parts.path}?{parts.query}"


def signed_in_user(client: Client) -> int | None:
    me = client.get("/api/v1/me/")
    return me.json()["id"] if me.status_code == 200 else None


def test_a_teacher_known_by_external_id_signs_in_and_lands_on_next(people):
    """The provider's `sub` is the teacher's external id: signed in with a session, sent to the
    `next` page asked for."""
    client = Client()
    authorize = start(client, people["provider"].pk, next="/app/teacher/#class-5")
    back = sign_in_at_provider(authorize, "ms.hopper")
    response = client.get(callback_path(back))
    assert response.status_code == 302, response.content
    assert response["Location"] == "/app/teacher/#class-5"
    assert signed_in_user(client) == people["teacher_a"].pk


def finish(client: Client, provider_id: int, username: str, **params: str) -> Any:
    """A whole browser sign-in as `username` at the provider: the callback's answer."""
    return client.get(callback_path(sign_in_at_provider(start(client, provider_id, **params), username)))


def test_a_teacher_known_by_verified_email_signs_in_on_their_page(people):
    """No external id matches; the provider says the address is verified: the person with that
    email (whatever its case) is signed in and sent to the teachers' page."""
    client = Client()
    response = finish(client, people["provider"].pk, "mr.mail")
    assert response.status_code == 302 and response["Location"] == "/app/teacher/"
    assert signed_in_user(client) == people["mailed"].pk


def test_an_entra_provider_matches_its_oid_claim(people):
    """With `external_id_claim` oid (Microsoft Entra), the `oid` claim is the external id."""
    people["teacher_a"].external_id = "oid-hopper"
    people["teacher_a"].save(update_fields=["external_id"])
    people["provider"].external_id_claim = "oid"
    people["provider"].save()
    client = Client()
    assert finish(client, people["provider"].pk, "ms.hopper").status_code == 302
    assert signed_in_user(client) == people["teacher_a"].pk


@pytest.mark.parametrize(
    ("username", "why"),
    [
        ("stranger", "not known"),  # no one has this id or address
        ("unverified", "not known"),  # the address matches, but the provider does not vouch for it
        ("outsider", "not known"),  # known, in another school than the provider's
        ("gone", "deactivated"),
    ],
)
def test_a_person_the_school_does_not_let_in_is_refused(people, username, why):
    """Unknown, unverified email, another school's, deactivated: a 403 page saying why, nobody
    signed in, no account made."""
    users = User.objects.count()
    client = Client()
    response = finish(client, people["provider"].pk, username)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert why in response.content.decode()
    assert signed_in_user(client) is None
    assert User.objects.count() == users


def test_a_district_provider_signs_in_the_people_of_its_schools(people):
    """A district's provider lets in the people of the schools under it."""
    district = School.objects.create(name="District", kind=School.Kind.DISTRICT)
    people["school"].parent = district
    people["school"].save(update_fields=["parent"])
    people["provider"].school = district
    people["provider"].save()
    client = Client()
    assert finish(client, people["provider"].pk, "ms.hopper").status_code == 302
    assert signed_in_user(client) == people["teacher_a"].pk


def test_a_replayed_callback_is_refused(people):
    """The same callback (code and state) a second time, in the same browser or another, is a
    400; so is the used code with the state of a new sign-in (the provider refuses it)."""
    client = Client()
    back = callback_path(sign_in_at_provider(start(client, people["provider"].pk), "ms.hopper"))
    assert client.get(back).status_code == 302
    again = client.get(back)
    assert again.status_code == 400 and "already used" in again.content.decode()
    stranger = Client()
    assert stranger.get(back).status_code == 400
    assert signed_in_user(stranger) is None
    fresh_state = parse_qs(urlsplit(start(stranger, people["provider"].pk)).query)["state"][0]
    used_code = parse_qs(urlsplit(back).query)["code"][0]
    replayed = stranger.get("/auth/oidc/callback/", {"code": used_code, "state": fresh_state})
    assert replayed.status_code == 400 and "no longer accepts" in replayed.content.decode()
    assert signed_in_user(stranger) is None


def test_a_state_that_does_not_match_is_refused(people):
    """A callback whose state is not the one this browser started with: 400, nobody signed in,
    and the browser's own sign-in still works afterwards."""
    client = Client()
    back = sign_in_at_provider(start(client, people["provider"].pk), "ms.hopper")
    query = parse_qs(urlsplit(back).query)
    forged = client.get("/auth/oidc/callback/", {"code": query["code"][0], "state": "not-the-state"})
    assert forged.status_code == 400
    assert signed_in_user(client) is None
    assert client.get(callback_path(back)).status_code == 302


def test_an_error_from_the_provider_is_a_clear_400(people):
    """The provider sends the browser back with `error` (the person cancelled): 400 page."""
    client = Client()
    state = parse_qs(urlsplit(start(client, people["provider"].pk)).query)["state"][0]
    response = client.get("/auth/oidc/callback/", {"error": "access_denied", "state": state})
    assert response.status_code == 400 and "access_denied" in response.content.decode()


@pytest.mark.parametrize(
    "next_page",
    [
        "https://evil.test/app/",
        "//evil.test/app/",
        "/admin/",
        "/app/../admin/",
        "/app/%2E%2e/admin/",
        "/\\evil.test/app/",
    ],
)
def test_a_next_page_off_the_app_is_ignored(people, next_page):
    """`next` is followed only to a page of the app on this site; else the role's page."""
    client = Client()
    response = finish(client, people["provider"].pk, "ms.hopper", next=next_page)
    assert response["Location"] == "/app/teacher/"


def test_an_inactive_provider_offers_no_sign_in(people):
    """An inactive provider's login is a 404 page."""
    people["provider"].active = False
    people["provider"].save()
    response = Client().get(f"/auth/oidc/{people['provider'].pk}/login/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_guardian_known_by_external_id_lands_on_the_guardians_page(people):
    """A guardian whose external id the school's provider knows signs in with it, as anyone
    does, and lands on the guardian's page."""
    guardian = make_user("parent", User.Role.GUARDIAN, school=people["school"], external_id="pupil-sub")
    client = Client()
    response = finish(client, people["provider"].pk, "pupil")
    assert response.status_code == 302 and response["Location"] == "/app/guardian/"
    assert signed_in_user(client) == guardian.pk
