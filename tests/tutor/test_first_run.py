"""A first run says where to go and shows the product without bringing a model: GET / names the
site's entry points (a page of links in a browser), `make run` (scripts/run_dev.sh) prints them
with the demo accounts and which model answers once the server answers, starts the demo model
when none is configured, and keeps its banner on screen; seed_demo gives the demo students a
past; the embedded broker starts without warnings."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.models import TUTOR_STAFF_GROUP, User
from conversations.models import Conversation
from learning.models import Quiz, Task
from memory.models import AIMemory
from tests.conftest import ROOT, free_port, wait_for
from tests.conversations.test_turn import send, start
from tests.schema import published_schema

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

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


def test_root_shows_a_browser_a_page_of_links(db, settings):
    """A browser (Accept prefers text/html) gets a page linking each entry point, and the demo
    model's notice when it answers; an answer that depends on Accept says so (Vary)."""
    resp = Client().get("/", HTTP_ACCEPT=BROWSER_ACCEPT)
    assert resp.status_code == 200 and resp["Content-Type"].startswith("text/html")
    page = resp.content.decode()
    for path in ENTRY_POINTS.values():
        assert f'href="http://testserver{path}"' in page
    assert "Demo model" not in page and "Accept" in resp["Vary"]
    settings.LLM_DEMO_MODEL = True
    assert "Demo model." in Client().get("/", HTTP_ACCEPT=BROWSER_ACCEPT).content.decode()
    for accept in ("application/json", "*/*"):
        assert Client().get("/", HTTP_ACCEPT=accept)["Content-Type"] == "application/json"


def test_the_pages_say_when_the_demo_model_answers(db, settings):
    """The student and teacher pages hold the demo model's notice (filled in by their scripts
    in the user's language) when it answers, and not otherwise."""
    for path in ("/app/", "/app/teacher/"):
        assert 'id="demo-model"' not in Client().get(path).content.decode()
    settings.LLM_DEMO_MODEL = True
    for path in ("/app/", "/app/teacher/"):
        page = Client().get(path).content.decode()
        assert 'data-i18n="demo_model_title"' in page and 'data-i18n="demo_model_text"' in page


def test_seed_demo_gives_the_students_a_past(staff_group, settings):
    """seed_demo gives alice (in English) and bob (in French) an ended conversation with its
    summary, a fact drawn from it, a teacher's note, a quiz to answer and a task; a second run
    adds nothing."""
    settings.ALLOW_DEMO_DATA = True
    for _ in range(2):
        call_command("seed_demo", stdout=StringIO())
    for username, word in (("alice", "fractions"), ("bob", "fractions")):
        student = User.objects.get(username=username)
        conversation = Conversation.objects.get(student=student)
        assert conversation.is_ended and conversation.messages.count() == 4
        memories = AIMemory.objects.filter(student=student)
        assert sorted(memories.values_list("kind", flat=True)) == sorted(
            [AIMemory.Kind.SUMMARY, AIMemory.Kind.FACT, AIMemory.Kind.TEACHER_NOTE]
        )
        summary = memories.get(kind=AIMemory.Kind.SUMMARY)
        assert word in summary.title and summary.source_conversation_id == conversation.pk
        assert not summary.needs_review
        assert Quiz.objects.get(student=student).status == Quiz.Status.OPEN
        assert Task.objects.filter(student=student).count() == 1
    assert "Additionner" in Conversation.objects.get(student__username="bob").subject


def test_a_streamed_reply_is_capped_at_llm_max_reply_tokens(clients, llm, settings):
    """LLM_MAX_REPLY_TOKENS bounds the reply asked of the model (max_tokens), below what the
    window leaves; 0 leaves the window's figure."""
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m1").status_code == 201
    assert llm.calls("chat")[-1]["max_tokens"] > 400
    settings.LLM_MAX_REPLY_TOKENS = 400
    assert send(clients["alice"], start(clients["alice"]), "Hello", "m2").status_code == 201
    assert llm.calls("chat")[-1]["max_tokens"] == 400


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


@pytest.mark.worker
def test_make_run_without_a_model_answers_with_the_demo_model(
    worker_env: dict[str, Any], staff_group: None, tmp_path: Path
):
    """With no model configured, `make run` starts the demo model: the banner names it and says
    how to plug a real one in; alice's seeded past is there; her message gets the demo model's
    reply and her ended conversation a summary from it, written by the worker; the student page
    says the demo model answers, GET / in a browser is a page of links. The worker's and the
    scheduler's lines of each task do not follow the banner, and the local embedder stays off."""
    port = free_port()
    log = tmp_path / "run.log"
    unset = ("LLM_", "EMBEDDINGS_BACKEND", "DEMO_MODEL")
    env = {key: value for key, value in worker_env.items() if not key.startswith(unset)}
    env.update(
        RUN_ADDR=f"127.0.0.1:{port}",
        WEB_CONCURRENCY="1",
        PYTHONUNBUFFERED="1",
        TUTOR_VAR_DIR=str(tmp_path / "var"),
        VENV=str(Path(worker_env.get("VIRTUAL_ENV", ROOT / ".venv"))),
    )
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ROOT / "scripts" / "run_dev.sh")], cwd=ROOT, env=env, stdout=out, stderr=out, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    last_line = re.compile(rf"^ +admin +{re.escape(base)}/admin/.*\n", re.MULTILINE)

    def banner_end() -> int | None:
        assert proc.poll() is None, log.read_text(errors="replace")
        found = last_line.search(log.read_text(errors="replace"))
        return found.end() if found else None

    try:
        try:
            end = wait_for(banner_end, 90)
        except AssertionError:
            raise AssertionError(f"no address printed:\n{log.read_text(errors='replace')[-5000:]}") from None
        text = log.read_text(errors="replace")
        assert "Model: the demo model at http://127.0.0.1:" in text and "To plug in a real model" in text
        assert "embedder: none" in text
        alice = User.objects.get(username="alice")
        assert Conversation.objects.filter(student=alice, status=Conversation.Status.ENDED).count() == 1
        auth = {"Authorization": f"Token {Token.objects.get(user=alice).key}", "Accept": "application/json"}
        with httpx2.Client(base_url=base, headers=auth, timeout=60, trust_env=False) as http:
            cid = http.post("/api/v1/conversations/", json={"subject": "Fractions"}).json()["id"]
            message = {"content": "What is 1/2 + 1/4?", "client_message_id": "d1"}
            resp = http.post(f"/api/v1/conversations/{cid}/messages/", json=message)
            assert resp.status_code == 201, resp.text
            reply = resp.json()["reply"]
            assert reply["model"] == "demo" and reply["content"].startswith("(Demo model:")
            # The prompt showed her seeded memories, which the demo model names.
            assert "Adding fractions with unlike denominators" in reply["content"]
            assert http.post(f"/api/v1/conversations/{cid}/end/").status_code == 202
            page = http.get("/app/", headers={"Accept": BROWSER_ACCEPT}).text
            assert 'id="demo-model"' in page
            root = http.get("/", headers={"Accept": BROWSER_ACCEPT})
            assert root.headers["Content-Type"].startswith("text/html") and f"{base}/app/teacher/" in root.text

        def summarised() -> bool:
            return AIMemory.objects.filter(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY).exists()

        wait_for(summarised, 60)
        summary = AIMemory.objects.get(source_conversation_id=cid, kind=AIMemory.Kind.SUMMARY)
        assert summary.title.startswith("Demo session about") and not summary.needs_review
        after = log.read_text(errors="replace")[end:]
        assert "received" not in after and "succeeded in" not in after and "Sending due task" not in after, after
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)

    def everything_stopped() -> bool:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(everything_stopped, 30)
    assert "Traceback" not in log.read_text(errors="replace")
