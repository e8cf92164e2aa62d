"""Signing in under load, through the production server (`scripts/serve.sh`: uvicorn, two worker
processes) over real HTTP: parallel guesses cannot get past the lockout, a burst of logins does
not starve other requests of database connections, and a cache outage fails login closed and
the chat's send throttle open."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

import httpx2
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from accounts.models import User
from tests.conftest import free_port, headers, new_conversation
from tests.tutor.test_throttles import redis_location

pytestmark = pytest.mark.worker

# The server checks passwords with Django's default hasher (PBKDF2), as in production; the users
# made here get such a hash (the suite's own fixtures use MD5, which the server does not accept).
PASSWORD = "right-password"


def pbkdf2_users(prefix: str, count: int, cost: int = 1) -> list[str]:
    """`count` new students whose password is PASSWORD, hashed once with PBKDF2 at `cost` times
    Django's iterations (a check takes as many times longer; a successful one then stores the
    password again at Django's own cost)."""
    hasher = PBKDF2PasswordHasher()
    encoded = hasher.encode(PASSWORD, hasher.salt(), iterations=hasher.iterations * cost)
    names = [f"{prefix}-{uuid.uuid4().hex[:8]}" for _ in range(count)]
    User.objects.bulk_create([User(username=name, password=encoded, role=User.Role.STUDENT) for name in names])
    return names


@pytest.fixture
def server_env(worker_env: dict[str, str], request: pytest.FixtureRequest) -> dict[str, str]:
    """The server's environment (the `server` fixture reads it): the lockout on, with keys of its
    own in the cache, which is the test's parameter: "files" (the embedded default), "redis", or
    "down" (a Redis on a closed port)."""
    worker_env["CACHE_KEY_PREFIX"] = uuid.uuid4().hex
    worker_env["LOGIN_FAILURE_LIMIT"] = "5"
    worker_env["LOGIN_FAILURE_WINDOW_SECONDS"] = "600"
    worker_env["THROTTLE_SEND_RATE"] = "30/minute"
    cache = getattr(request, "param", "files")
    urls = {"files": "", "down": f"redis://127.0.0.1:{free_port()}/0"}
    worker_env["CACHE_URL"] = urls[cache] if cache in urls else redis_location()
    return worker_env


def token_login(base: str, username: str, password: str, timeout: float = 30) -> httpx2.Response:
    return httpx2.post(f"{base}/api/v1/auth/token/", json={"username": username, "password": password}, timeout=timeout)


def at_once(count: int, fn: Any) -> list[Any]:
    """`fn(i)` for i in range(count), each in its own thread, all released together."""
    barrier = threading.Barrier(count)

    def go(i: int) -> Any:
        barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(go, range(count)))


@pytest.mark.parametrize("server_env", ["files", "redis"], indirect=True)
def test_parallel_wrong_passwords_evaluate_at_most_the_limit(server_env, server):
    """30 wrong passwords for one account at once, spread over the server's two processes: at
    most LOGIN_FAILURE_LIMIT (5) of them are checked (400), every other one is 429 with
    Retry-After, and then the right password is 429 too. With the file cache as with Redis."""
    (name,) = pbkdf2_users("guess", 1)
    responses = at_once(30, lambda i: token_login(server, name, f"wrong-{i}"))
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {400, 429}, statuses
    assert statuses.count(400) <= 5, statuses
    assert all(0 < int(r.headers["Retry-After"]) <= 600 for r in responses if r.status_code == 429)
    assert token_login(server, name, PASSWORD).status_code == 429


# The pool's wait before a 503 in the burst test: far longer than any wait for a connection
# between short database steps, on a loaded machine too.
POOL_TIMEOUT_SECONDS = 2
# The burst's passwords cost this many times Django's PBKDF2 iterations: each check takes 1.5
# times POOL_TIMEOUT_SECONDS on a fast core (Django's million iterations in 0.15 s), and more on
# a slower or loaded one, so that a login holding its connection while it hashes would make the
# others wait past the pool's timeout.
SLOW_HASH_COST = 20
# Five logins over the server's two processes: one of them gets at least three, one more than
# its pool's connections.
BURST = 5


@pytest.fixture
def small_pool(server_env: dict[str, str]) -> None:
    """Two connections per server process, a request that waits POOL_TIMEOUT_SECONDS for one
    gets 503, and no bound on the wait for a hashing slot (not what the burst test is about)."""
    server_env.update(
        DB_POOL_MIN_SIZE="1",
        DB_POOL_MAX_SIZE="2",
        DB_POOL_TIMEOUT_SECONDS=str(POOL_TIMEOUT_SECONDS),
        LOGIN_HASH_WAIT_SECONDS="3600",
    )


@pytest.mark.postgresql_only
def test_a_burst_of_logins_leaves_connections_for_everyone(small_pool, server, school):
    """5 logins at once with distinct usernames, each a PBKDF2 check longer than the pool's
    timeout, on a pool of two connections per process: every login succeeds (none is a
    503 `database_unavailable`, which a login holding its connection while it hashes would
    cause), and another student's GET /memories/, sent while the burst is being checked, is
    answered before the burst ends."""
    names = pbkdf2_users("burst", BURST, cost=SLOW_HASH_COST)
    bob = headers(school["bob"])
    with ThreadPoolExecutor(len(names)) as pool:
        futures = [
            pool.submit(lambda n=n: (token_login(server, n, PASSWORD, timeout=3600), time.monotonic())) for n in names
        ]
        wait(futures, return_when=FIRST_COMPLETED)
        other = httpx2.get(f"{server}/api/v1/memories/", headers=bob, timeout=3600)
        served = time.monotonic()
        results = [f.result() for f in futures]
    refused = [(r.status_code, r.text) for r, _ in results if r.status_code != 200]
    assert refused == [], refused
    # Answered, not a 503 after the pool's timeout, and without waiting for the burst to end.
    assert other.status_code == 200, other.text
    assert max(done for _, done in results) > served


@pytest.mark.parametrize("server_env", ["down"], indirect=True)
def test_a_cache_outage_fails_login_closed_and_the_send_throttle_open(server_env, server, llm, school, tmp_path):
    """With the cache (Redis) unreachable and both throttles on, a chat send is answered (its
    throttle lets it through and logs `cache_unavailable`), and a login is refused with a 503
    `service_unavailable` that is safe to retry, with Retry-After: no guess goes uncounted."""
    alice = school["alice"]
    cid = new_conversation(server, alice)
    body = {"content": "How do I add 1/2 and 1/3?", "client_message_id": "m1"}
    sent = httpx2.post(f"{server}/api/v1/conversations/{cid}/messages/", json=body, headers=headers(alice), timeout=30)
    assert sent.status_code == 201, sent.text
    login = token_login(server, "alice", "pw-alice")
    assert login.status_code == 503, login.text
    error = login.json()["error"]
    assert error["code"] == "service_unavailable" and error["retry_safe"] is True
    assert int(login.headers["Retry-After"]) > 0
    log = (tmp_path / "serve.log").read_text()
    assert "cache_unavailable op=take key=throttle_send_ " in log and "cache_unavailable login" in log


@pytest.fixture
def proxy_env(worker_env: dict[str, str], request: pytest.FixtureRequest) -> dict[str, str]:
    """The server's environment: two sign-ins per address and minute, and the proxies uvicorn
    trusts (WEB_FORWARDED_ALLOW_IPS) as the test's parameter."""
    worker_env["CACHE_KEY_PREFIX"] = uuid.uuid4().hex
    worker_env["CACHE_URL"] = ""
    worker_env["LOGIN_ADDRESS_RATE"] = "2/minute"
    worker_env["WEB_FORWARDED_ALLOW_IPS"] = request.param
    return worker_env


@pytest.mark.parametrize(
    ("proxy_env", "trusted"), [("127.0.0.1,::1", True), ("10.9.9.9", False)], indirect=["proxy_env"]
)
def test_the_client_address_is_the_forwarded_one_from_a_trusted_proxy_only(proxy_env, server, trusted):
    """Behind a proxy that WEB_FORWARDED_ALLOW_IPS lists (here the test itself, on 127.0.0.1),
    each client's address is the one X-Forwarded-For names, so one client beyond the address
    rate leaves another signing in. From a peer it does not list, the header is ignored: every
    request counts against the peer's own address."""
    (name,) = pbkdf2_users("proxied", 1)

    def from_address(address: str) -> int:
        resp = httpx2.post(
            f"{server}/api/v1/auth/token/",
            json={"username": name, "password": PASSWORD},
            headers={"X-Forwarded-For": address},
            timeout=30,
        )
        return resp.status_code

    assert [from_address("203.0.113.1") for _ in range(3)] == [200, 200, 429]
    assert from_address("203.0.113.2") == (200 if trusted else 429)
