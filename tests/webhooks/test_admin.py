"""The webhooks in the Django admin: a webhook's page shows its delivery log and never its
secret; the action turns a disabled webhook on again. Who sees which webhook is in the admin's
tenancy matrix (tests/accounts/test_admin_tenancy.py)."""

from __future__ import annotations

from django.test import Client

from accounts.models import User
from tests.conftest import make_user
from webhooks.models import Webhook, WebhookDelivery

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_the_admin_shows_the_log_never_the_secret_and_turns_a_webhook_on(school):
    hook = Webhook.objects.create(
        school=school["school"],
        url="https://sis.example.org/events",
        secret=SECRET,
        events=["memory.created"],
        active=False,
        consecutive_failures=10,
        disabled_reason="disabled after 10 failed deliveries in a row",
    )
    WebhookDelivery.objects.create(
        webhook=hook, event_type="memory.created", message_id="msg_log1", payload={}, status="failed", attempts=9
    )
    operator = make_user("operator", User.Role.STAFF, is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(operator)
    page = client.get(f"/admin/webhooks/webhook/{hook.pk}/change/")
    assert page.status_code == 200
    assert b"msg_log1" in page.content and SECRET.encode() not in page.content
    assert client.get("/admin/webhooks/webhook/add/").status_code == 403
    done = client.post("/admin/webhooks/webhook/", {"action": "turn_on", "_selected_action": [hook.pk]})
    assert done.status_code == 302
    hook.refresh_from_db()
    assert (hook.active, hook.consecutive_failures, hook.disabled_reason) == (True, 0, "")
