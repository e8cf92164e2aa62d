"""Single sign-on in Chromium, driven by tests/sso/sign_in.mjs (playwright-core), against the
production server and the real test provider (tests/oidc_provider) in their own processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accounts.services import classroom_create
from tests.conftest import ROOT
from tests.sso.conftest import PASSWORD, make_provider
from tests.web.conftest import artifacts_dir, browser, run_browser_script

__all__ = ["artifacts_dir", "browser"]  # the browser tests' fixtures, used here

SCRIPT = ROOT / "tests" / "sso" / "sign_in.mjs"


@pytest.fixture
def provider_env(worker_env: dict[str, str]) -> dict[str, str]:
    """The server may fetch the provider, on 127.0.0.1 over http (a server of its own)."""
    worker_env["OIDC_ALLOW_PRIVATE_ISSUERS"] = "true"
    return worker_env


@pytest.mark.browser
def test_a_teacher_signs_in_with_the_school_provider_and_sees_their_classes(
    browser: dict[str, str],
    provider_env: dict[str, str],
    server: str,
    school: dict[str, Any],
    oidc_provider: Any,
    artifacts_dir: Path,
) -> None:
    """On the teacher page's sign-in form, teacher_a (known to the roster by the provider's
    `sub`) clicks the school's provider button, signs in on the provider's own form and comes
    back signed in on the teacher page, with their two classes and 5A's students. Someone the
    school does not know gets the refusal page, and no session."""
    teacher = school["teacher_a"]
    teacher.external_id = "hopper-sub"
    teacher.save(update_fields=["external_id"])
    classroom_create(name="6 Maths", school=school["school"], teachers=[teacher])
    make_provider(school["school"], oidc_provider.issuer, name="School Google")
    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "button": "Sign in with School Google",
        "teacher": {"username": "ms.hopper", "password": PASSWORD},
        "stranger": {"username": "stranger", "password": PASSWORD},
    }
    seen = run_browser_script(browser, SCRIPT, config, artifacts_dir, "single sign-on")["seen"]
    assert seen["ms.hopperProviderHost"] == oidc_provider.base.removeprefix("http://")
    assert seen["address"] == f"{server}/app/teacher/"
    assert "teacher_a" in seen["whoami"]
    assert sorted(seen["classes"]) == ["5A", "6 Maths"]
    assert seen["roster"] == ["alice", "bob"]
    assert "not known" in seen["refusal"]
    assert seen["strangerMeStatus"] in (401, 403)
