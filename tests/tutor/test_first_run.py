"""A first run says where to go: GET / names the site's entry points, `make run` (scripts/run_dev.sh)
prints them with the demo accounts once the server answers, and the embedded broker starts
without warnings."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.models import TUTOR_STAFF_GROUP, User
from tests.conftest import ROOT, free_port, wait_for
from tests.schema import published_schema

ENTRY_POINTS = {
    "student_app": "/app/",
    "teacher_app": "/app/teacher/",
    "api_docs": "/api/docs/",
    "api_reference": "/api/redoc/",
    "api_schema": "/api/schema/",
    "admin": "/admin/",
}


@pytest.fixture
def staff_group(transactional_db: None) -> None:
    """The group seed_demo gives its teacher: made by a data migration, which the flush after an
    earlier transactional test removes."""
    Group.objects.get_or_create(name=TUTOR_STAFF_GROUP)


def test_root_names_the_entry_points(db):
    """GET / answers 200 in JSON with the site's name and the absolute URL of each entry point,
    each of which answers (the admin by sending to its sign-in page)."""
    resp = Client().get("/")
    assert resp.status_code == 200
    assert resp["Content-Type"] == "application/json"
    body = resp.json()
    assert body["name"] == "Tutor API"
    assert body["links"] == {key: f"http://testserver{path}" for key, path in ENTRY_POINTS.items()}
    for key, path in ENTRY_POINTS.items():
        assert Client().get(path).status_code == (302 if key == "admin" else 200), path


def test_root_only_answers_reads_and_is_not_an_api_operation(db):
    """HEAD / answers like GET; POST / is a 405 in the envelope naming GET and HEAD. / is not in
    the API's schema (the API is under /api/v1/)."""
    assert Client().head("/").status_code == 200
    resp = Client(enforce_csrf_checks=True).post("/")
    assert resp.status_code == 405
    assert {m.strip() for m in resp["Allow"].split(",")} == {"GET", "HEAD"}
    assert resp.json()["error"]["code"] == "method_not_allowed"
    assert "/" not in published_schema()["paths"]


def test_seed_demo_waits_for_the_server_then_prints_where_to_go(live_server, staff_group, settings, capsys):
    """`seed_demo --wait-for URL` prints, after the demo accounts, each entry point the server at
    URL names, with the demo accounts that sign in there."""
    settings.ALLOW_DEMO_DATA = True
    call_command("seed_demo", "--wait-for", live_server.url + "/")
    out = capsys.readouterr().out
    accounts, where = out.split(f"Tutor is up at {live_server.url}/", 1)
    for user in User.objects.all():
        assert Token.objects.get(user=user).key in accounts
    lines = [line.split() for line in where.strip().splitlines()]
    assert [line[:3] for line in lines[:4]] == [
        ["student", "app", f"{live_server.url}/app/"],
        ["teacher", "app", f"{live_server.url}/app/teacher/"],
        ["API", "docs", f"{live_server.url}/api/docs/"],
        ["API", "reference", f"{live_server.url}/api/redoc/"],
    ]
    assert lines[-1][:2] == ["admin", f"{live_server.url}/admin/"]
    assert "(alice, bob)" in where and "(teacher)" in where


def test_seed_demo_names_a_server_that_does_not_answer(db, settings):
    """With nothing listening at the URL, `--wait-for` gives up after `--wait-seconds` with an
    error naming the URL."""
    settings.ALLOW_DEMO_DATA = True
    url = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(CommandError, match=re.escape(f"No server answered at {url}")):
        call_command("seed_demo", "--wait-for", url, "--wait-seconds", "0.5")


def test_the_default_broker_names_its_host(tmp_path):
    """The embedded default broker (filesystem) connects without kombu's "No hostname was
    supplied" warning, which a worker logged three times at each start."""
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "REDIS_URL")}
    env.update(TUTOR_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="tutor.settings.base")
    code = "import logging; logging.basicConfig(); from tutor.celery import app; print(app.connection().as_uri())"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("filesystem://")
    assert "No hostname" not in result.stderr, result.stderr


@pytest.mark.worker
def test_make_run_prints_where_to_go_last_and_stops_everything(
    worker_env: dict[str, Any], staff_group: None, tmp_path: Path
):
    """scripts/run_dev.sh (`make run`) starts the server and a worker; once the server answers it
    prints the demo accounts, then the site's addresses at RUN_ADDR, after the server's start-up
    lines. SIGTERM stops the script and every process it started."""
    port = free_port()
    log = tmp_path / "run.log"
    env = {
        **worker_env,
        "RUN_ADDR": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "EMBEDDINGS_BACKEND": "none",
        "PYTHONUNBUFFERED": "1",
        "VENV": str(Path(worker_env.get("VIRTUAL_ENV", ROOT / ".venv"))),
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ROOT / "scripts" / "run_dev.sh")], cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    last_line = re.compile(rf"^ +admin +{re.escape(base)}/admin/", re.MULTILINE)

    def banner_printed() -> bool:
        assert proc.poll() is None, log.read_text(errors="replace")
        return last_line.search(log.read_text(errors="replace")) is not None

    try:
        try:
            wait_for(banner_printed, 90)
        except AssertionError:
            raise AssertionError(f"no address printed:\n{log.read_text(errors='replace')[-5000:]}") from None
        text = log.read_text(errors="replace")
        started = text.index("Application startup complete.")
        accounts = text.index("Demo data ready")
        where = text.index(f"Tutor is up at {base}/")
        assert started < accounts < where
        for path in ("/app/", "/app/teacher/", "/api/docs/", "/admin/"):
            assert f"{base}{path}" in text[where:]
        for user in User.objects.all():
            assert Token.objects.get(user=user).key in text[accounts:where]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        text = log.read_text(errors="replace")

    def everything_stopped() -> bool:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(everything_stopped, 30)
    assert "Traceback" not in text, text
    assert "No hostname was supplied" not in text, text
