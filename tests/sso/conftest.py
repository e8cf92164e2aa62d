"""A real OpenID Connect provider in its own process (tests/oidc_provider: django-oauth-toolkit,
an RS256 key generated here), a proxy that can alter its answers, and a person signing in on
its form."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from accounts.models import School
from sso.models import IdentityProvider
from tests.conftest import ROOT, free_port, terminate

CLIENT_ID = "tutor-client"
CLIENT_SECRET = "tutor-client-secret-0123456789"
PASSWORD = "provider-password"
# The provider's accounts and the claims of their ID tokens (Entra-like `oid` too).
ACCOUNTS: dict[str, dict[str, Any]] = {
    "ms.hopper": {"sub": "hopper-sub", "oid": "oid-hopper", "email": "hopper@a.test", "email_verified": True},
    "mr.mail": {"sub": "mail-sub", "email": "mail.teacher@a.test", "email_verified": True},
    "unverified": {"sub": "unverified-sub", "email": "unverified@a.test", "email_verified": False},
    "stranger": {"sub": "stranger-sub", "email": "stranger@elsewhere.test", "email_verified": True},
    "gone": {"sub": "gone-sub", "email": "gone@a.test", "email_verified": True},
    "outsider": {"sub": "outsider-sub", "email": "outsider@b.test", "email_verified": True},
    "pupil": {"sub": "pupil-sub", "email": "pupil@a.test", "email_verified": True},
}
CALLBACKS = ["http://testserver/auth/oidc/callback/", "http://127.0.0.1/auth/oidc/callback/"]


@dataclass
class Provider:
    base: str
    key_pem: bytes

    @property
    def issuer(self) -> str:
        return f"{self.base}/o"


@pytest.fixture(scope="module")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """The provider, started for the module and stopped after it: a new RS256 key, its accounts
    (ACCOUNTS) and the tutor's confidential client, whose redirect URIs are the callback on the
    test client's host and on 127.0.0.1 (any port: RFC 8252)."""
    folder = tmp_path_factory.mktemp("oidc-provider")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (folder / "key.pem").write_bytes(key_pem)
    seed = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uris": CALLBACKS,
        "users": {name: {"password": PASSWORD, "claims": claims} for name, claims in ACCOUNTS.items()},
    }
    (folder / "seed.json").write_text(json.dumps(seed))
    port = free_port()
    env = {**os.environ, "OIDC_PROVIDER_DIR": str(folder), "OIDC_PROVIDER_KEY_FILE": str(folder / "key.pem")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    log = folder / "provider.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.oidc_provider.serve", str(port)], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    provider = Provider(base=f"http://127.0.0.1:{port}", key_pem=key_pem)
    try:
        _wait_ready(proc, f"{provider.issuer}/.well-known/openid-configuration", log)
        yield provider
    finally:
        terminate(proc)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if requests.get(url, timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the provider did not start:\n{log.read_text()}")


class TamperingProxy:
    """An HTTP proxy in front of the provider, on a port of its own. The provider sees the
    proxy's host (the Host header is kept), so the issuer it announces and signs is the proxy's.
    `alter`, when set, rewrites the token endpoint's JSON answer before the tutor reads it."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.alter: Callable[[dict[str, Any]], Any] | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection(proxy.upstream.netloc, timeout=30)
                conn.request(self.command, self.path, body=body, headers=dict(self.headers))
                upstream = conn.getresponse()
                data = upstream.read()
                if proxy.alter is not None and self.path.startswith("/o/token/") and upstream.status == 200:
                    altered = proxy.alter(json.loads(data))
                    data = altered if isinstance(altered, bytes) else json.dumps(altered).encode()
                self.send_response(upstream.status)
                for name, value in upstream.getheaders():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = _forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def issuer(self) -> str:
        return f"{self.base}/o"


@pytest.fixture(scope="module")
def proxy(oidc_provider: Provider) -> Iterator[TamperingProxy]:
    running = TamperingProxy(oidc_provider.base)
    running.thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


@pytest.fixture
def sso_settings(settings: Any) -> Any:
    """The provider and the proxy are on 127.0.0.1, over http."""
    settings.OIDC_ALLOW_PRIVATE_ISSUERS = True
    settings.OIDC_APP_REDIRECT_URIS = ["org.example.tutor:/oidc", "http://127.0.0.1/app-callback"]
    return settings


def make_provider(school: School, issuer: str, **extra: Any) -> IdentityProvider:
    return IdentityProvider.objects.create(
        school=school,
        name=extra.pop("name", "School Google"),
        issuer=issuer,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        **extra,
    )


def sign_in_at_provider(authorize_url: str, username: str, password: str = PASSWORD) -> str:
    """What a person does at the provider: open the authorization URL, sign in on its form; the
    URL the provider then sends the browser to (the tutor's callback with code and state)."""
    session = requests.Session()
    response = session.get(authorize_url, allow_redirects=False, timeout=30)
    assert response.status_code == 302, response.text
    login_url = urljoin(authorize_url, response.headers["Location"])
    form = session.get(login_url, timeout=30)
    assert form.status_code == 200, form.text
    posted = session.post(
        login_url,
        data={
            "csrfmiddlewaretoken": session.cookies["provider_csrftoken"],
            "username": username,
            "password": password,
            "next": urlsplit(authorize_url).path + "?" + urlsplit(authorize_url).query,
        },
        headers={"Referer": login_url},
        allow_redirects=False,
        timeout=30,
    )
    assert posted.status_code == 302, posted.text
    authorized = session.get(urljoin(login_url, posted.headers["Location"]), allow_redirects=False, timeout=30)
    assert authorized.status_code == 302, authorized.text
    return str(authorized.headers["Location"])
