"""The identity providers' API (/api/v1/identity-providers/): who manages a school's providers,
the client secret written and never shown, the issuers refused, the tenancy matrix (another
school's administrator gets 404; teachers and students manage none), and the public list a
sign-in page reads (/api/v1/auth/providers/). Every response is checked against the OpenAPI
schema (tests/schema.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import School, User
from sso.models import IdentityProvider
from tests.conftest import client_for, make_user

ISSUER = "https://accounts.google.com"
BODY = {"name": "Google", "issuer": ISSUER, "client_id": "client-1", "client_secret": "secret-1"}


@pytest.fixture
def admins(schools: dict[str, Any]) -> dict[str, Any]:
    staff = make_user("staff", User.Role.STAFF, is_staff=True)
    return {
        **schools,
        "a": client_for(schools["admin_a"]),
        "b": client_for(schools["admin_b"]),
        "staff": client_for(staff),
    }


def create(client: APIClient, school: School, **body: Any) -> Any:
    return client.post("/api/v1/identity-providers/", {**BODY, "school": school.pk, **body}, format="json")


def test_an_administrator_adds_a_provider_whose_secret_is_never_shown(admins):
    """An administrator adds a provider to their school: the secret is stored, and neither the
    answer, the detail nor the list shows it; the claims default to sub and email."""
    resp = create(admins["a"], admins["school"])
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert "client_secret" not in body
    assert body["school"] == admins["school"].pk
    assert (body["external_id_claim"], body["email_claim"], body["active"]) == ("sub", "email", True)
    assert IdentityProvider.objects.get(pk=body["id"]).client_secret == "secret-1"
    detail = admins["a"].get(f"/api/v1/identity-providers/{body['id']}/").json()
    listed = admins["a"].get("/api/v1/identity-providers/").json()["results"]
    assert "client_secret" not in detail and [row["id"] for row in listed] == [body["id"]]
    assert "client_secret" not in listed[0]


def test_an_administrator_changes_and_removes_their_provider(admins):
    """PATCH changes the fields given (a new secret too, not shown); DELETE removes it."""
    provider_id = create(admins["a"], admins["school"]).json()["id"]
    url = f"/api/v1/identity-providers/{provider_id}/"
    resp = admins["a"].patch(url, {"external_id_claim": "oid", "client_secret": "secret-2"}, format="json")
    assert resp.status_code == 200, resp.content
    assert resp.json()["external_id_claim"] == "oid" and "client_secret" not in resp.json()
    assert IdentityProvider.objects.get(pk=provider_id).client_secret == "secret-2"
    assert admins["a"].delete(url).status_code == 204
    assert not IdentityProvider.objects.exists()


def test_another_school_is_a_404_and_a_teacher_or_student_manages_none(admins):
    """School B's administrator: 404 on A's provider (read, change, remove) and on a create for
    school A, nothing changed. A teacher and a student: 403 on the list and a create, 404 on
    the provider. Staff see and change every school's."""
    provider_id = create(admins["a"], admins["school"]).json()["id"]
    url = f"/api/v1/identity-providers/{provider_id}/"
    b = admins["b"]
    assert b.get(url).status_code == 404
    assert b.patch(url, {"name": "Taken"}, format="json").status_code == 404
    assert b.delete(url).status_code == 404
    assert create(b, admins["school"]).status_code == 404
    assert b.get("/api/v1/identity-providers/").json()["results"] == []
    for name in ("teacher_a", "alice"):
        client = client_for(admins[name])
        assert client.get("/api/v1/identity-providers/").status_code == 403
        assert create(client, admins["school"]).status_code == 403
        assert client.get(url).status_code == 404
        assert client.patch(url, {"name": "Taken"}, format="json").status_code == 404
    assert IdentityProvider.objects.get(pk=provider_id).name == "Google"
    assert admins["staff"].patch(url, {"name": "Workspace"}, format="json").status_code == 200
    assert create(admins["staff"], admins["school_b"]).status_code == 201


@pytest.mark.parametrize(
    "issuer", ["http://accounts.google.com", "https://127.0.0.1/o", "https://10.0.0.8/", "ftp://idp.example.org/"]
)
def test_an_issuer_not_https_or_on_a_private_network_is_refused(admins, issuer):
    """An issuer over http, or on a loopback or private address: 400 on `issuer`, nothing stored."""
    resp = create(admins["a"], admins["school"], issuer=issuer)
    assert resp.status_code == 400, resp.content
    assert "issuer" in resp.json()["error"]["details"]
    assert not IdentityProvider.objects.exists()


def test_the_sign_in_page_lists_the_active_providers(admins):
    """Anyone may list the providers to sign in with: the active ones of active schools, each
    with its school and login URL; `school` narrows to that school's and its district's."""
    district = School.objects.create(name="District", kind=School.Kind.DISTRICT)
    admins["school"].parent = district
    admins["school"].save(update_fields=["parent"])
    a = IdentityProvider.objects.create(school=admins["school"], name="A Google", issuer=ISSUER, client_id="a")
    d = IdentityProvider.objects.create(school=district, name="District Entra", issuer=ISSUER, client_id="d")
    b = IdentityProvider.objects.create(school=admins["school_b"], name="B Google", issuer=ISSUER, client_id="b")
    IdentityProvider.objects.create(school=admins["school"], name="Old", issuer=ISSUER, client_id="o", active=False)
    anonymous = APIClient()
    everyone = anonymous.get("/api/v1/auth/providers/")
    assert everyone.status_code == 200
    assert {row["id"] for row in everyone.json()["results"]} == {a.pk, d.pk, b.pk}
    of_a = anonymous.get("/api/v1/auth/providers/", {"school": admins["school"].pk}).json()["results"]
    assert [row["id"] for row in of_a] == [d.pk, a.pk]
    assert of_a[1] == {
        "id": a.pk,
        "name": "A Google",
        "school": admins["school"].pk,
        "school_name": admins["school"].name,
        "login_url": f"/auth/oidc/{a.pk}/login/",
    }
    assert anonymous.get("/api/v1/auth/providers/", {"school": "x"}).status_code == 400


def test_the_admin_keeps_the_secret_and_refuses_a_private_issuer(admin_client, school):
    """In the admin, a new provider needs its secret; a change left empty keeps it and the form
    never shows it; an issuer on a private network is refused there as in the API."""
    url = "/admin/sso/identityprovider/add/"
    form = {"school": school["school"].pk, "name": "Google", "client_id": "c", "external_id_claim": "sub"}
    form |= {"email_claim": "email", "active": "on"}
    assert "client_secret" in admin_client.post(url, {**form, "issuer": ISSUER}).context["adminform"].form.errors
    refused = admin_client.post(url, {**form, "issuer": "https://10.0.0.8/", "client_secret": "secret-never-shown"})
    assert "issuer" in refused.context["adminform"].form.errors
    assert admin_client.post(url, {**form, "issuer": ISSUER, "client_secret": "secret-never-shown"}).status_code == 302
    provider = IdentityProvider.objects.get()
    change = f"/admin/sso/identityprovider/{provider.pk}/change/"
    assert "secret-never-shown" not in admin_client.get(change).content.decode()
    assert admin_client.post(change, {**form, "issuer": ISSUER, "client_secret": ""}).status_code == 302
    assert IdentityProvider.objects.get().client_secret == "secret-never-shown"
