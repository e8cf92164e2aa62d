"""Fixtures for the browser tests: Node.js and Chromium (skipped without them, failed with
REQUIRE_BROWSER=1 as in CI), and a folder for the screenshots (`test-artifacts/web/`, or
TEST_ARTIFACTS_DIR), listed at the end of the run. The server is the production one (uvicorn,
serving /static/ itself), from the ASGI server tests' `server` fixture."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CLIENT_DIR = ROOT / "clients" / "typescript"
# What each browser test left, for the summary at the end of the run.
artefacts: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in artefacts:
        terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _fast_password_hashing() -> None:
    """Overrides tests/conftest.py's: users sign in through the server, a process of its own,
    which knows Django's default password hashers only (not the fast MD5 one)."""


def _missing_browser_tools() -> tuple[list[str], str, str]:
    missing = []
    node = shutil.which("node") or ""
    if not node:
        missing.append("node (apt-get install nodejs)")
    else:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
        if int(version.lstrip("v").split(".")[0] or 0) < 20:
            missing.append(f"node >= 20 (found {version})")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        missing.append(f"{chromium} (apt-get install chromium)")
    if not (CLIENT_DIR / "node_modules" / "playwright-core").is_dir():
        missing.append("playwright-core (npm ci in clients/typescript, or make client)")
    return missing, node, chromium


@pytest.fixture
def browser() -> dict[str, str]:
    """The paths of node and chromium. Missing ones skip the test, or fail it with REQUIRE_BROWSER=1."""
    missing, node, chromium = _missing_browser_tools()
    _skip_or_fail("browser test", missing)
    return {"node": node, "chromium": chromium}


@pytest.fixture
def node() -> str:
    """The path of node, with the client's packages installed (esbuild bundles the typed client
    for Node.js). Missing ones skip the test, or fail it with REQUIRE_BROWSER=1."""
    missing, node, _ = _missing_browser_tools()
    missing = [m for m in missing if "chromium" not in m]
    if not (CLIENT_DIR / "node_modules" / "esbuild").is_dir():
        missing.append("esbuild (npm ci in clients/typescript, or make client)")
    _skip_or_fail("client test", missing)
    return node


def _skip_or_fail(what: str, missing: list[str]) -> None:
    """Skip a test whose tools are `missing`, or fail it with REQUIRE_BROWSER=1 (CI)."""
    if not missing:
        return
    message = f"{what} needs " + ", ".join(missing)
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(message + " (REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(message)


@pytest.fixture
def artifacts_dir(request: pytest.FixtureRequest) -> Path:
    """An empty folder for this test's screenshots and logs, kept after the run."""
    base = Path(os.environ.get("TEST_ARTIFACTS_DIR", ROOT / "test-artifacts"))
    folder = base / "web" / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def run_browser_script(
    browser: dict[str, str], script: Path, config: dict[str, Any], artifacts_dir: Path, what: str
) -> dict[str, Any]:
    """Run a Playwright script (`node script config`) that prints `RESULT <json>` last; keep its
    output in `artifacts_dir`/browser.log, name `what` in the run's summary, and fail with the
    script's error unless it exited 0 with `ok`. Returns the result."""
    run = subprocess.run(
        [browser["node"], str(script), json.dumps(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    (artifacts_dir / "browser.log").write_text(run.stdout + run.stderr)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT ")) if lines else {}
    artefacts.append(f"{what} in Chromium; screenshots and logs in {artifacts_dir}")
    assert run.returncode == 0 and result.get("ok"), (
        f"{result.get('error') or run.stderr[-3000:]}\n(screenshots and logs in {artifacts_dir})"
    )
    return result
