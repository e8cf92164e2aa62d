"""The webhooks API (/api/v1/webhooks/): who may subscribe a school's systems, the secret shown
once, the URLs refused, and the tenancy matrix (a school administrator gets 404 on another
school's webhook; teachers and students manage none). Every response is checked against the
OpenAPI schema (tests/schema.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook as Signer

from accounts.models import School, User
from tests.conftest import client_for, make_user
from webhooks.models import Webhook, WebhookDelivery

URL = "https://hooks.example.org/tutor"
EVENTS = ["memory.created", "quiz.graded"]


@pytest.fixture
def admins(school: dict[str, Any]) -> dict[str, Any]:
    """An administrator of the test school (A) and one of another school (B), with clients."""
    school_b = School.objects.create(name="Other school")
    admin_a = make_user("admin_a", User.Role.ADMINISTRATOR, school=school["school"])
    admin_b = make_user("admin_b", User.Role.ADMINISTRATOR, school=school_b)
    staff = make_user("staff", User.Role.STAFF, is_staff=True)
    return {
        "school_a": school["school"],
        "school_b": school_b,
        "a": client_for(admin_a),
        "b": client_for(admin_b),
        "staff": client_for(staff),
    }


def create(client: APIClient, **body: Any) -> Any:
    return client.post("/api/v1/webhooks/", {"url": URL, "events": EVENTS, **body}, format="json")


def test_an_administrator_subscribes_a_school_and_sees_the_secret_once(admins):
    """An administrator subscribes their school: the answer holds a generated whsec_ secret that
    the standardwebhooks library accepts; the detail and the list never show it again."""
    resp = create(admins["a"], school=admins["school_a"].pk)
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["secret"].startswith("whsec_")
    Signer(body["secret"])
    assert body["events"] == EVENTS and body["school"] == admins["school_a"].pk and body["active"] is True
    detail = admins["a"].get(f"/api/v1/webhooks/{body['id']}/")
    assert detail.status_code == 200
    assert "secret" not in detail.json()
    listed = admins["a"].get("/api/v1/webhooks/").json()["results"]
    assert [hook["id"] for hook in listed] == [body["id"]] and "secret" not in listed[0]


def test_a_given_secret_is_kept_and_an_invalid_one_refused(admins):
    """A whsec_ secret given is the one stored; one that is not base64 is a 400 on `secret`."""
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    resp = create(admins["a"], school=admins["school_a"].pk, secret=secret)
    assert resp.status_code == 201
    assert Webhook.objects.get(pk=resp.json()["id"]).secret == secret
    bad = create(admins["a"], school=admins["school_a"].pk, secret="whsec_not base64!")
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid" and "secret" in bad.json()["error"]["details"]


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/hook", "http://[::1]/x", "ftp://x.org/"],
)
def test_a_private_loopback_or_non_http_url_is_refused(admins, url):
    """A receiver on a loopback or private address (or not http/https) is refused with a 400 in
    the envelope, and nothing is stored."""
    resp = create(admins["a"], school=admins["school_a"].pk, url=url)
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid"
    assert not Webhook.objects.exists()


def test_a_private_url_is_accepted_when_the_setting_allows(admins, settings):
    """WEBHOOKS_ALLOW_PRIVATE_URLS lets a receiver on the school's own network subscribe."""
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    resp = create(admins["a"], school=admins["school_a"].pk, url="http://127.0.0.1:8080/hook")
    assert resp.status_code == 201, resp.content


def test_an_unknown_event_or_none_is_refused(admins):
    """Events are chosen among the product's; an unknown one, or none, is a 400 on `events`."""
    for events in (["memory.deleted"], []):
        resp = create(admins["a"], school=admins["school_a"].pk, events=events)
        assert resp.status_code == 400
        assert "events" in resp.json()["error"]["details"]


def test_an_administrator_of_school_b_gets_404_on_school_a_s_webhook(admins):
    """Another school's webhook is not revealed to an administrator: its detail, its deletion and
    its delivery log are 404, its list does not show it, and they cannot subscribe school A."""
    hook_id = create(admins["a"], school=admins["school_a"].pk).json()["id"]
    b = admins["b"]
    for resp in (
        b.get(f"/api/v1/webhooks/{hook_id}/"),
        b.delete(f"/api/v1/webhooks/{hook_id}/"),
        b.patch(f"/api/v1/webhooks/{hook_id}/", {"active": False}, format="json"),
        b.get(f"/api/v1/webhooks/{hook_id}/deliveries/"),
        create(b, school=admins["school_a"].pk),
    ):
        assert resp.status_code == 404, resp.content
        assert resp.json()["error"]["code"] == "not_found"
    assert b.get("/api/v1/webhooks/").json()["results"] == []
    assert Webhook.objects.filter(pk=hook_id).exists()


def test_teachers_and_students_manage_no_webhook(admins, clients):
    """A teacher or a student gets a 403 on the list and on a create, a 404 on a webhook."""
    hook_id = create(admins["a"], school=admins["school_a"].pk).json()["id"]
    for name in ("teacher_a", "alice"):
        client = clients[name]
        assert client.get("/api/v1/webhooks/").status_code == 403
        resp = create(client, school=admins["school_a"].pk)
        assert resp.status_code == 403 and resp.json()["error"]["code"] == "forbidden"
        assert client.get(f"/api/v1/webhooks/{hook_id}/").status_code == 404
        assert client.delete(f"/api/v1/webhooks/{hook_id}/").status_code == 404
        assert client.patch(f"/api/v1/webhooks/{hook_id}/", {"active": False}, format="json").status_code == 404
    assert Webhook.objects.get(pk=hook_id).active
    assert APIClient().get("/api/v1/webhooks/").status_code == 401


def test_staff_subscribe_every_school_an_administrator_must_choose_one(admins):
    """Staff may subscribe every school (no school) and see every webhook; an administrator
    without a school is a 400 on `school`."""
    resp = create(admins["staff"])
    assert resp.status_code == 201 and resp.json()["school"] is None
    create(admins["a"], school=admins["school_a"].pk)
    assert len(admins["staff"].get("/api/v1/webhooks/").json()["results"]) == 2
    missing = create(admins["a"])
    assert missing.status_code == 400 and "school" in missing.json()["error"]["details"]


def test_deleting_removes_the_webhook_and_its_log(admins):
    """DELETE is a 204; the webhook and its deliveries are gone, and it is a 404 after."""
    hook_id = create(admins["a"], school=admins["school_a"].pk).json()["id"]
    WebhookDelivery.objects.create(webhook_id=hook_id, event_type="memory.created", message_id="msg_1", payload={})
    assert admins["a"].delete(f"/api/v1/webhooks/{hook_id}/").status_code == 204
    assert not WebhookDelivery.objects.exists()
    assert admins["a"].get(f"/api/v1/webhooks/{hook_id}/").status_code == 404


def test_the_delivery_log_shows_status_tries_error_and_answer(admins):
    """The delivery log lists a webhook's deliveries newest first with their status, tries, last
    error, the receiver's answer and their times."""
    hook_id = create(admins["a"], school=admins["school_a"].pk).json()["id"]
    WebhookDelivery.objects.create(
        webhook_id=hook_id,
        event_type="quiz.graded",
        message_id="msg_a",
        payload={"type": "quiz.graded"},
        status=WebhookDelivery.Status.FAILED,
        attempts=3,
        last_error="webhook: HTTP 500 (after 3 tries)",
        response_code=500,
    )
    resp = admins["a"].get(f"/api/v1/webhooks/{hook_id}/deliveries/")
    assert resp.status_code == 200
    (row,) = resp.json()["results"]
    assert row["status"] == "failed" and row["attempts"] == 3 and row["response_code"] == 500
    assert row["last_error"].startswith("webhook: HTTP 500") and row["message_id"] == "msg_a"


def test_a_disabled_webhook_is_turned_on_again_with_its_failures_cleared(admins):
    """PATCH `active: true` on a webhook disabled after failures clears its count and reason;
    `active: false` turns it off by hand, saying so; events and URL change, a private URL is a
    400 that changes nothing."""
    hook_id = create(admins["a"], school=admins["school_a"].pk).json()["id"]
    Webhook.objects.filter(pk=hook_id).update(
        active=False, consecutive_failures=8, disabled_reason="disabled after 8 failed deliveries in a row"
    )
    url = f"/api/v1/webhooks/{hook_id}/"
    on = admins["a"].patch(url, {"active": True}, format="json")
    assert on.status_code == 200, on.content
    assert on.json()["active"] is True and on.json()["consecutive_failures"] == 0
    assert on.json()["disabled_reason"] == "" and on.json()["disabled_at"] is None
    off = admins["a"].patch(url, {"active": False}, format="json").json()
    assert off["active"] is False and off["disabled_reason"] == "disabled by admin_a" and off["disabled_at"]
    changed = admins["a"].patch(url, {"events": ["flag.raised"], "url": URL + "/v2"}, format="json").json()
    assert changed["events"] == ["flag.raised"] and changed["url"] == URL + "/v2"
    refused = admins["a"].patch(url, {"url": "http://10.0.0.1/hook"}, format="json")
    assert refused.status_code == 400 and "url" in refused.json()["error"]["details"]
    assert Webhook.objects.get(pk=hook_id).url == URL + "/v2"
