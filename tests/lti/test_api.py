"""The LMS platforms API (/api/v1/lti/platforms/): a school's administrator (or staff) registers
an LMS and is told what to type into it; the tenancy matrix (another school's administrator
gets 404, teachers and students manage none); and the launch code's exchange refusing a wrong
code. Every response is checked against the OpenAPI schema (tests/schema.py)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from lti_tool.models import Key, LtiDeployment, LtiRegistration
from rest_framework.test import APIClient

from accounts.models import User
from lti.models import Platform
from tests.conftest import client_for, make_user

BODY = {
    "name": "Moodle",
    "issuer": "https://moodle.school.example",
    "client_id": "abc123",
    "deployment_ids": ["1"],
    "auth_url": "https://moodle.school.example/mod/lti/auth.php",
    "token_url": "https://moodle.school.example/mod/lti/token.php",
    "keyset_url": "https://moodle.school.example/mod/lti/certs.php",
}


@pytest.fixture
def people(schools: dict[str, Any]) -> dict[str, Any]:
    staff = make_user("staff", User.Role.STAFF, is_staff=True)
    return {
        **schools,
        "clients": {
            name: client_for(user)
            for name, user in {
                "admin_a": schools["admin_a"],
                "admin_b": schools["admin_b"],
                "teacher_a": schools["teacher_a"],
                "alice": schools["alice"],
                "staff": staff,
            }.items()
        },
    }


def create(client: APIClient, school: Any, **changes: Any) -> Any:
    return client.post("/api/v1/lti/platforms/", {**BODY, "school": school.pk, **changes}, format="json")


def test_an_administrator_registers_their_schools_lms(people):
    """The answer holds what was registered and the tool's URLs to type into the LMS; the
    registration is django-lti's, with its deployment, tied to the school; the tool's signing
    key exists from now on."""
    resp = create(people["clients"]["admin_a"], people["school"])
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert {key: body[key] for key in BODY} == BODY
    assert (body["school"], body["active"]) == (people["school"].pk, True)
    assert body["tool"] == {
        "login_url": "http://testserver/lti/login/",
        "launch_url": "http://testserver/lti/launch/",
        "deep_link_url": "http://testserver/lti/deep-link/",
        "jwks_url": "http://testserver/lti/jwks/",
    }
    platform = Platform.objects.get(pk=body["id"])
    assert (platform.school, platform.registration.client_id) == (people["school"], "abc123")
    assert list(platform.registration.deployments.values_list("deployment_id", "is_active")) == [("1", True)]
    assert Key.objects.active().count() == 1
    listed = people["clients"]["admin_a"].get("/api/v1/lti/platforms/").json()["results"]
    assert [p["id"] for p in listed] == [body["id"]]


def test_a_changed_deployment_list_retires_the_others_and_a_duplicate_is_a_409(people):
    """PATCH deployment_ids replaces the list (one left out is kept, inactive); registering the
    same issuer and client id again is a 409."""
    client = people["clients"]["admin_a"]
    platform_id = create(client, people["school"]).json()["id"]
    resp = client.patch(f"/api/v1/lti/platforms/{platform_id}/", {"deployment_ids": ["2", "3"]}, format="json")
    assert resp.status_code == 200, resp.content
    assert resp.json()["deployment_ids"] == ["2", "3"]
    assert LtiDeployment.objects.get(deployment_id="1").is_active is False
    assert create(client, people["school"]).status_code == 409
    assert (
        client.patch(f"/api/v1/lti/platforms/{platform_id}/", {"auth_url": "not a url"}, format="json").status_code
        == 400
    )
    assert client.delete(f"/api/v1/lti/platforms/{platform_id}/").status_code == 204
    assert not LtiRegistration.objects.exists()


def test_the_tenancy_matrix(people):
    """Another school's administrator gets 404 on the platform (read, change, delete: nothing
    changes) and cannot register one for school A (404); a teacher and a student get 403 on the
    list and a create and 404 on the platform; staff see and change it."""
    platform_id = create(people["clients"]["admin_a"], people["school"]).json()["id"]
    url = f"/api/v1/lti/platforms/{platform_id}/"
    for name in ("admin_b", "teacher_a", "alice"):
        client = people["clients"][name]
        assert client.get(url).status_code == 404, name
        assert client.patch(url, {"name": "Taken"}, format="json").status_code == 404, name
        assert client.delete(url).status_code == 404, name
    assert create(people["clients"]["admin_b"], people["school"], client_id="x").status_code == 404
    assert people["clients"]["admin_b"].get("/api/v1/lti/platforms/").json()["results"] == []
    for name in ("teacher_a", "alice"):
        assert people["clients"][name].get("/api/v1/lti/platforms/").status_code == 403, name
        assert create(people["clients"][name], people["school"], client_id="y").status_code == 403, name
    assert LtiRegistration.objects.get().name == "Moodle"
    staff = people["clients"]["staff"]
    assert staff.get(url).status_code == 200
    assert staff.patch(url, {"active": False}, format="json").json()["active"] is False


def test_a_wrong_launch_code_is_a_400(db):
    """An unknown code is a 400 on `code`, in the envelope; no token is given."""
    resp = APIClient().post("/api/v1/lti/token/", {"code": "not-a-code"}, format="json")
    assert resp.status_code == 400
    assert resp.json()["error"]["details"]["code"]


def test_only_the_framed_pages_allow_the_registered_platforms_as_frame_ancestors(people, client):
    """Once an LMS is registered, the student and teacher pages and the LTI pages may be framed
    by its origin (and not refused by X-Frame-Options); every other page keeps
    `frame-ancestors 'none'`; with no platform, nothing changes."""
    assert "frame-ancestors 'none'" in client.get("/app/")["Content-Security-Policy"]
    create(people["clients"]["admin_a"], people["school"])
    for url in ("/app/", "/app/teacher/"):
        resp = client.get(url)
        assert "frame-ancestors 'self' https://moodle.school.example;" in resp["Content-Security-Policy"] + ";"
        assert "X-Frame-Options" not in resp
    assert "frame-ancestors 'none'" in client.get("/api/docs/")["Content-Security-Policy"]
    assert client.get("/api/docs/")["X-Frame-Options"] == "DENY"


def test_rotating_keys_serves_the_new_key_beside_the_old(db, client):
    """The first request makes the tool's key; `manage.py rotate_keys` (django-lti) adds a new one,
    which signs from then on, while the old one stays in the JWKS until it is older than
    `--deactivate-after` days, so that an LMS holding it still checks what it signed."""
    first = client.get("/lti/jwks/").json()["keys"]
    assert len(first) == 1
    call_command("rotate_keys", stdout=StringIO())
    keys = client.get("/lti/jwks/").json()["keys"]
    assert len(keys) == 2 and first[0] in keys
    assert Key.objects.active().latest().as_jwk() in keys and Key.objects.active().latest().as_jwk() != first[0]
    call_command("rotate_keys", "--deactivate-after", "0", stdout=StringIO())
    assert len(client.get("/lti/jwks/").json()["keys"]) == 1
