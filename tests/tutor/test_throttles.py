"""Throttles: per-user sends and failed logins get 429 in the error envelope, with Retry-After;
the counters under them are atomic, and a cache outage lets sends through but not sign-ins."""

from __future__ import annotations

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis
from django.contrib.auth.hashers import MD5PasswordHasher

from conversations.models import Message
from core.cache import counter_add, counter_get
from tests.conftest import client_for, free_port, make_user
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


def test_failures_on_unknown_usernames_do_not_lock_the_address_out(school, settings):
    """Many users share one address (a school's NAT): 10 failed sign-ins with usernames that do
    not exist, then the right password from the same address signs in (no lockout of the
    address, only of a username from it)."""
    settings.LOGIN_FAILURE_LIMIT = 10
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 50
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 900
    settings.LOGIN_ADDRESS_RATE = "60/minute"
    client = client_for(None)
    assert [login(client, f"nobody-{i}", "guess").status_code for i in range(10)] == [400] * 10
    assert login(client, "alice", "pw-alice").status_code == 200
    assert login(client, "bob", "pw-bob").status_code == 200


def test_a_username_locked_from_one_address_signs_in_from_another(school, settings):
    """LOGIN_FAILURE_LIMIT failures lock a username from that address only (the right password
    included); from another address it signs in, until LOGIN_ACCOUNT_FAILURE_LIMIT failures from
    all addresses lock it everywhere."""
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 5
    guesser = client_for(None)
    assert [login(guesser, "alice", f"wrong-{i}").status_code for i in range(4)] == [400, 400, 400, 429]
    assert login(guesser, "alice", "pw-alice").status_code == 429
    home = client_for(None)
    home.defaults["REMOTE_ADDR"] = "10.0.0.5"
    assert login(home, "alice", "pw-alice").status_code == 200
    # Her sign-in forgot the account's count: five more failures from two addresses lock it.
    other = client_for(None)
    other.defaults["REMOTE_ADDR"] = "10.0.0.6"
    assert [login(other, "alice", f"again-{i}").status_code for i in range(3)] == [400] * 3
    assert [login(home, "alice", f"again-{i}").status_code for i in range(2)] == [400] * 2
    elsewhere = client_for(None)
    elsewhere.defaults["REMOTE_ADDR"] = "10.0.0.7"
    locked = login(elsewhere, "alice", "pw-alice")
    assert locked.status_code == 429 and 0 < int(locked["Retry-After"]) <= settings.LOGIN_FAILURE_WINDOW_SECONDS


# --- Counters, the cache's outages, and the bounds on sign-in before hashing --------------------


def redis_location() -> str:
    """The suite's Redis (REDIS_URL in CI), else a local one on a database no other test uses."""
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/13"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        if os.environ.get("REQUIRE_REDIS") == "1":
            raise
        pytest.skip(f"no Redis at {url}")
    return url


def use_cache(settings: Any, kind: str, tmp_path: Path) -> None:
    backends = {
        "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "files": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(tmp_path)},
        "redis": {"BACKEND": "core.cache.RedisCache", "LOCATION": redis_location() if kind == "redis" else ""},
        "down": {"BACKEND": "core.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{free_port()}/0"},
    }
    settings.CACHES = {"default": {**backends[kind], "KEY_PREFIX": uuid.uuid4().hex}}


@pytest.mark.parametrize("kind", ["locmem", "files", "redis"])
def test_counters_count_every_one_of_parallel_additions(settings, tmp_path, kind):
    """200 additions from 20 threads at once: each sees a count of its own (1 to 200), and the
    counter ends at 200 with the window it was created with. Given back to zero, it is gone."""
    use_cache(settings, kind, tmp_path)
    barrier = threading.Barrier(20)

    def add(_: int) -> list[int]:
        barrier.wait()
        return [counter_add("k", window=60)[0] for _ in range(10)]

    with ThreadPoolExecutor(20) as pool:
        seen = sorted(n for counts in pool.map(add, range(20)) for n in counts)
    assert seen == list(range(1, 201))
    count, left = counter_get("k")
    assert count == 200 and 0 < left <= 60
    assert counter_add("k", delta=-200, window=60) == (0, 0.0)
    assert counter_get("k") == (0, 0.0)


def test_the_send_throttle_lets_sends_through_when_the_cache_is_down(clients, llm, settings, tmp_path, caplog):
    """With Redis unreachable, a send is answered (the throttle cannot count it, so it lets it
    through), the outage is logged as `cache_unavailable` and counted in the Prometheus counter."""
    from prometheus_client import REGISTRY

    def let_through() -> float:
        labels = {"op": "take", "key": "throttle_send_"}
        return REGISTRY.get_sample_value("tutor_cache_outage_misses_total", labels) or 0.0

    settings.THROTTLE_SEND_RATE = "2/minute"
    use_cache(settings, "down", tmp_path)
    before = let_through()
    cid = start(clients["alice"])
    for i in range(3):
        assert send(clients["alice"], cid, f"question {i}", f"m{i}").status_code == 201
    assert "cache_unavailable op=take key=throttle_send_" in caplog.text
    assert let_through() - before >= 3


def test_sign_in_is_refused_when_the_cache_is_down(school, settings, tmp_path):
    """With the lockout on and Redis unreachable, attempts cannot be counted: every sign-in, the
    right password included, is a 503 `service_unavailable`, safe to retry, with Retry-After."""
    settings.LOGIN_FAILURE_LIMIT = 10
    use_cache(settings, "down", tmp_path)
    resp = login(client_for(None), "alice", "pw-alice")
    assert resp.status_code == 503
    error = resp.json()["error"]
    assert error["code"] == "service_unavailable" and error["retry_safe"] is True
    assert int(resp["Retry-After"]) > 0


class CountingHasher(MD5PasswordHasher):
    """MD5 (the suite's hasher), counting the passwords it checks."""

    checked = 0

    def verify(self, password: str, encoded: str) -> bool:
        type(self).checked += 1
        return super().verify(password, encoded)


def test_an_address_beyond_its_rate_is_refused_before_any_password_is_checked(school, settings):
    """LOGIN_ADDRESS_RATE counts every attempt from an address, right or wrong: beyond it the
    attempt is 429 with Retry-After and no password is hashed; another address signs in."""
    settings.LOGIN_ADDRESS_RATE = "3/minute"
    settings.PASSWORD_HASHERS = ["tests.tutor.test_throttles.CountingHasher"]
    CountingHasher.checked = 0
    client = client_for(None)
    assert [login(client, name, f"pw-{name}").status_code for name in ("alice", "bob", "carol")] == [200] * 3
    refused = login(client, "alice", "pw-alice")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "throttled"
    assert 0 < int(refused["Retry-After"]) <= 60
    assert CountingHasher.checked == 3
    other = client_for(None)
    other.defaults["REMOTE_ADDR"] = "10.0.0.4"
    assert login(other, "alice", "pw-alice").status_code == 200


class GatedHasher(MD5PasswordHasher):
    """MD5, whose checks wait for the test to open the gate."""

    entered = threading.Event()
    gate = threading.Event()

    def verify(self, password: str, encoded: str) -> bool:
        type(self).entered.set()
        assert type(self).gate.wait(30)
        return super().verify(password, encoded)


def test_a_sign_in_that_finds_every_hashing_slot_busy_gets_503(transactional_db, settings):
    """With LOGIN_HASH_CONCURRENCY passwords being hashed, another sign-in waits
    LOGIN_HASH_WAIT_SECONDS and is refused with a 503 `service_unavailable`, safe to retry, with
    Retry-After; its attempt is given back to the lockout, so the retry succeeds."""
    settings.PASSWORD_HASHERS = ["tests.tutor.test_throttles.GatedHasher"]
    settings.LOGIN_HASH_CONCURRENCY = 1
    settings.LOGIN_HASH_WAIT_SECONDS = 0.2
    settings.LOGIN_FAILURE_LIMIT = 1
    make_user("alice")
    make_user("bob")
    GatedHasher.entered.clear()
    GatedHasher.gate.clear()
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(login, client_for(None), "alice", "pw-alice")
        assert GatedHasher.entered.wait(30)
        busy = login(client_for(None), "bob", "pw-bob")
        GatedHasher.gate.set()
        assert first.result().status_code == 200
    assert busy.status_code == 503
    error = busy.json()["error"]
    assert error["code"] == "service_unavailable" and error["retry_safe"] is True
    assert int(busy["Retry-After"]) > 0
    assert login(client_for(None), "bob", "pw-bob").status_code == 200
