"""The test LMS (tests/lti_platform, on lti1p3platform) as its own process, on `localhost` while
the tool (the `server` fixture) is on `127.0.0.1`: two sites, so its frame is cross-site as in
a real LMS. `lti_platform` starts it for a test, with a course of the tests' own making, and
`launch_flow` runs a launch without a browser (httpx) for the server-side tests."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from jwcrypto.jwk import JWK
from lti_tool.models import LtiDeployment, LtiRegistration

from accounts.models import School
from lti.models import Platform
from tests.conftest import ROOT, free_port, terminate
from tests.web.conftest import artifacts_dir, browser  # noqa: F401 (the browser tests' fixtures)

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
MENTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"


@dataclass
class LtiPlatform:
    """The running test LMS: its URLs, its registration values, and its state files."""

    url: str
    client_id: str
    deployment_id: str
    state_dir: Path
    tool: str
    log: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def issuer(self) -> str:
        return self.url

    def _update(self, name: str, change: Any, default: Any) -> None:
        path = self.state_dir / name
        value = json.loads(path.read_text()) if path.exists() else default
        change(value)
        path.write_text(json.dumps(value, indent=2))

    def course(self, context_id: str, *, title: str, label: str = "", section_sourcedid: str = "") -> None:
        self._update(
            "contexts.json",
            lambda c: c.update({context_id: {"title": title, "label": label, "section_sourcedid": section_sourcedid}}),
            {},
        )

    def member(
        self,
        context_id: str,
        user_id: str,
        *,
        roles: list[str],
        given_name: str,
        family_name: str,
        email: str = "",
        sourcedid: str = "",
    ) -> None:
        entry = {
            "user_id": user_id,
            "roles": roles,
            "status": "Active",
            "name": f"{given_name} {family_name}",
            "given_name": given_name,
            "family_name": family_name,
            "email": email,
            "lis_person_sourcedid": sourcedid,
        }
        self._update(f"members-{context_id}.json", lambda m: m.append(entry), [])

    def link(self, context_id: str, link_id: str, *, title: str, custom: dict[str, str] | None = None) -> None:
        self._update(
            f"links-{context_id}.json",
            lambda links: links.update({link_id: {"title": title, "custom": custom or {}}}),
            {},
        )

    def links(self, context_id: str) -> dict[str, Any]:
        path = self.state_dir / f"links-{context_id}.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def course_url(self, context_id: str, user_id: str, **query: Any) -> str:
        suffix = f"?{urlencode(query)}" if query else ""
        return f"{self.url}/course/{context_id}/{user_id}/{suffix}"

    def deep_link_url(self, context_id: str, user_id: str) -> str:
        return f"{self.url}/course/{context_id}/{user_id}/deep-link/"

    def register(self, school: School, *, deployment_ids: tuple[str, ...] | None = None) -> Platform:
        """Register this LMS with the tool for `school`, as its administrator would."""
        registration = LtiRegistration.objects.create(
            name="Test LMS",
            issuer=self.issuer,
            client_id=self.client_id,
            auth_url=f"{self.url}/authorize/",
            token_url=f"{self.url}/token/",
            keyset_url=f"{self.url}/jwks/",
        )
        for deployment_id in deployment_ids or (self.deployment_id,):
            LtiDeployment.objects.create(registration=registration, deployment_id=deployment_id, is_active=True)
        return Platform.objects.create(registration=registration, school=school)


@pytest.fixture
def lti_platform(server: str, tmp_path: Path) -> Iterator[LtiPlatform]:
    """The test LMS, started for this test (its own process, `django-admin runserver` on
    `localhost`), configured for the tool at `server`; stopped after."""
    port = free_port()
    key = JWK.generate(kty="RSA", size=2048)
    state_dir = tmp_path / "lms-state"
    state_dir.mkdir()
    platform = LtiPlatform(
        url=f"http://localhost:{port}",
        client_id="tutor-client",
        deployment_id="deployment-1",
        state_dir=state_dir,
        tool=server,
        log=tmp_path / "lms.log",
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.lti_platform.settings",
        "PYTHONPATH": str(ROOT),
        "LTI_PLATFORM_URL": platform.url,
        "LTI_PLATFORM_ISSUER": platform.issuer,
        "LTI_PLATFORM_CLIENT_ID": platform.client_id,
        "LTI_PLATFORM_DEPLOYMENT_ID": platform.deployment_id,
        "LTI_PLATFORM_PRIVATE_KEY": key.export_to_pem(private_key=True, password=None).decode(),
        "LTI_PLATFORM_PUBLIC_KEY": key.export_to_pem().decode(),
        "LTI_PLATFORM_STATE_DIR": str(state_dir),
        "LTI_TOOL_LOGIN_URL": f"{server}/lti/login/",
        "LTI_TOOL_LAUNCH_URL": f"{server}/lti/launch/",
        "LTI_TOOL_DEEP_LINK_URL": f"{server}/lti/deep-link/",
        "LTI_TOOL_JWKS_URL": f"{server}/lti/jwks/",
    }
    with platform.log.open("wb") as out:
        platform.proc = subprocess.Popen(
            [sys.executable, "-m", "django", "runserver", "--noreload", f"localhost:{port}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert platform.proc.poll() is None, platform.log.read_text()
            try:
                if httpx2.get(f"{platform.url}/jwks/", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, platform.log.read_text()
            time.sleep(0.1)
        yield platform
    finally:
        terminate(platform.proc)


@dataclass
class Posted:
    """A launch's form post, as the platform's page would send it, and its state cookie."""

    action: str
    fields: dict[str, str]
    cookie: str


class LaunchFlow:
    """A launch driven by hand, step by step, as a browser would: the course page's frame URL
    (the tool's login initiation), the tool's redirect to the platform with its state cookie,
    the platform's launch form, and the post of that form to the tool. The state cookie is
    `Secure`, which httpx's jar keeps for HTTPS only, so it is carried by hand."""

    def __init__(self, platform: LtiPlatform) -> None:
        self.platform = platform

    def login(self, url: str) -> httpx2.Response:
        """The tool's answer to a login initiation URL."""
        return httpx2.get(url, follow_redirects=False, timeout=30)

    def preflight(self, course_url: str) -> str:
        page = httpx2.get(course_url, timeout=30)
        assert page.status_code == 200, page.text
        found = re.search(r'<p id="preflight" hidden>([^<]*)</p>', page.text)
        assert found, page.text
        return html.unescape(found.group(1))

    def form(self, course_url: str) -> Posted:
        """The launch form the platform answers with, after the tool's login redirect."""
        login = self.login(self.preflight(course_url))
        assert login.status_code == 302, login.text
        set_cookies = login.headers.get_list("set-cookie")
        assert all("SameSite=None; Secure" in c and c.endswith("; Partitioned") for c in set_cookies), set_cookies
        # http.cookies cannot parse the Partitioned attribute (Python 3.14 can): name=value by hand.
        cookie = "; ".join(header.split(";", 1)[0] for header in set_cookies)
        authorize = httpx2.get(login.headers["location"], timeout=30)
        assert authorize.status_code == 200, authorize.text
        action = re.search(r'action="([^"]+)"', authorize.text)
        assert action, authorize.text
        fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', authorize.text))
        return Posted(action=html.unescape(action.group(1)), fields=fields, cookie=cookie)

    def post(self, posted: Posted, **changes: str | None) -> httpx2.Response:
        """Post the form to the tool; `changes` replace fields (None drops one)."""
        fields = {**posted.fields, **changes}
        data = {key: value for key, value in fields.items() if value is not None}
        return httpx2.post(
            posted.action, data=data, headers={"Cookie": posted.cookie}, follow_redirects=False, timeout=30
        )


@pytest.fixture
def launch_flow(lti_platform: LtiPlatform) -> LaunchFlow:
    return LaunchFlow(lti_platform)
