"""Throttles: per-user sends and failed logins get 429 in the error envelope, with Retry-After."""

from __future__ import annotations

from conversations.models import Message
from tests.conftest import client_for
from tests.conversations.test_turn import send, start


def login(client, username, password):
    return client.post("/api/v1/auth/token/", {"username": username, "password": password}, format="json")


def test_sends_beyond_the_rate_get_429_and_nothing_is_stored(clients, llm, settings):
    """THROTTLE_SEND_RATE caps one user's sends; the refused one is not stored and says when to retry."""
    settings.THROTTLE_SEND_RATE = "2/minute"
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "one", "m1").status_code == 201
    assert send(clients["alice"], cid, "two", "m2").status_code == 201
    resp = send(clients["alice"], cid, "three", "m3")
    assert resp.status_code == 429
    err = resp.json()["error"]
    assert err["code"] == "throttled" and err["retry_safe"] is True
    assert 0 < int(resp["Retry-After"]) <= 60
    assert not Message.objects.filter(client_message_id="m3").exists()
    # Per user: Bob still sends.
    bob_cid = start(clients["bob"])
    assert send(clients["bob"], bob_cid, "hello", "b1").status_code == 201


def test_a_hundred_wrong_passwords_get_429_not_400(school, settings):
    """After LOGIN_FAILURE_LIMIT wrong passwords every attempt is 429 with Retry-After, even the
    right password (a guesser learns nothing); another user is unaffected."""
    settings.LOGIN_FAILURE_LIMIT = 10
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    client = client_for(None)
    statuses = [login(client, "alice", f"wrong-{i}").status_code for i in range(100)]
    assert statuses[:10] == [400] * 10
    assert set(statuses[10:]) == {429}
    resp = login(client, "alice", "pw-alice")
    assert resp.status_code == 429
    assert resp.json()["error"]["code"] == "throttled"
    assert 0 < int(resp["Retry-After"]) <= 600


def test_failures_per_username_do_not_lock_out_other_users(school, settings):
    """The username counter is per user: bob, from another address, logs in while alice is locked."""
    settings.LOGIN_FAILURE_LIMIT = 3
    client = client_for(None)
    for i in range(3):
        assert login(client, "alice", f"wrong-{i}").status_code == 400
    assert login(client, "alice", "pw-alice").status_code == 429
    other = client_for(None)
    other.defaults["REMOTE_ADDR"] = "10.0.0.2"
    assert login(other, "bob", "pw-bob").status_code == 200


def test_a_successful_login_resets_the_count(school, settings):
    """Failures below the limit are forgotten after a successful login."""
    settings.LOGIN_FAILURE_LIMIT = 3
    client = client_for(None)
    for i in range(2):
        assert login(client, "alice", f"wrong-{i}").status_code == 400
    assert login(client, "alice", "pw-alice").status_code == 200
    other = client_for(None)
    other.defaults["REMOTE_ADDR"] = "10.0.0.3"
    for i in range(2):
        assert login(other, "alice", f"wrong-again-{i}").status_code == 400
    assert login(other, "alice", "pw-alice").status_code == 200
