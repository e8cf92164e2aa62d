"""Fixtures: users and classes, API clients, the scripted model server, a real Celery worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import Classroom, Enrollment, User
from tests.llm_server import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI the suite must run against the real services, not quietly fall back to embedded ones.
    if os.environ.get("REQUIRE_POSTGRES") == "1" and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise pytest.UsageError("REQUIRE_POSTGRES=1 but DATABASE_URL is not a PostgreSQL URL")
    if os.environ.get("REQUIRE_REDIS") == "1" and not os.environ.get("REDIS_URL", "").startswith("redis"):
        raise pytest.UsageError("REQUIRE_REDIS=1 but REDIS_URL is not set")


def make_user(username: str, role: str = User.Role.STUDENT, **extra: Any) -> User:
    return User.objects.create_user(username=username, password="pw-" + username, role=role, **extra)


@pytest.fixture
def school(db: None) -> dict[str, Any]:
    """Two classes: teacher_a teaches alice and bob, teacher_b teaches carol."""
    teacher_a = make_user("teacher_a", User.Role.TEACHER)
    teacher_b = make_user("teacher_b", User.Role.TEACHER)
    alice = make_user("alice")
    bob = make_user("bob")
    carol = make_user("carol")
    class_a = Classroom.objects.create(name="5A", teacher=teacher_a)
    class_b = Classroom.objects.create(name="5B", teacher=teacher_b)
    Enrollment.objects.create(classroom=class_a, student=alice)
    Enrollment.objects.create(classroom=class_a, student=bob)
    Enrollment.objects.create(classroom=class_b, student=carol)
    return {
        "teacher_a": teacher_a,
        "teacher_b": teacher_b,
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "class_a": class_a,
        "class_b": class_b,
    }


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def clients(school: dict[str, Any]) -> dict[str, APIClient]:
    return {name: client_for(user) for name, user in school.items() if isinstance(user, User)}


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def llm(llm_server: ScriptedLLM, settings: Any) -> Iterator[ScriptedLLM]:
    """The scripted model, configured as both the chat and the summary endpoint."""
    llm_server.reset()
    settings.LLM_BASE_URL = llm_server.base_url
    settings.LLM_SUMMARY_BASE_URL = llm_server.base_url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_SUMMARY_API_KEY = "test-key"
    settings.LLM_MODEL = "scripted-tutor"
    settings.LLM_SUMMARY_MODEL = "scripted-summary"
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.LLM_SUMMARY_TIMEOUT_SECONDS = 5.0
    yield llm_server
    llm_server.reset()


@pytest.fixture
def no_llm(settings: Any) -> None:
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_SUMMARY_BASE_URL", "LLM_SUMMARY_API_KEY"):
        setattr(settings, name, "")


def _database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    user = s.get("USER") or ""
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


class Worker:
    """A real `celery worker` process on its own queue, using the test database and model."""

    def __init__(self, llm: ScriptedLLM, queue: str, env: dict[str, str]) -> None:
        self.llm = llm
        self.queue = queue
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = ROOT / "var" / f"worker-{queue}.log"

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tutor", "worker", "-Q", self.queue, "--pool=solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited early:\n{self.log.read_text()[-3000:]}")
            if "ready." in self.log.read_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"celery worker did not start:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def worker_env(llm: ScriptedLLM, transactional_db: None) -> dict[str, str]:
    if not django_settings.CELERY_BROKER_URL.startswith(("redis", "filesystem")):
        raise RuntimeError("worker tests need REDIS_URL or the filesystem broker")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    from tutor.celery import app

    app.conf.task_default_queue = queue
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_QUEUE": queue,
        "LLM_BASE_URL": llm.base_url,
        "LLM_API_KEY": "test-key",
        "LLM_SUMMARY_BASE_URL": llm.base_url,
        "LLM_SUMMARY_API_KEY": "test-key",
        "LLM_MODEL": "scripted-tutor",
        "LLM_SUMMARY_MODEL": "scripted-summary",
        "LLM_SUMMARY_TIMEOUT_SECONDS": "5",
        "SUMMARY_RETRY_BACKOFF_SECONDS": "0.3",
        "SUMMARY_MAX_RETRIES": "3",
        "PYTHONPATH": str(ROOT),
    }
    return env


@pytest.fixture
def worker(worker_env: dict[str, str], llm: ScriptedLLM) -> Iterator[Worker]:
    w = Worker(llm, worker_env["CELERY_QUEUE"], worker_env)
    w.start()
    yield w
    w.stop()
    from tutor.celery import app

    app.conf.task_default_queue = django_settings.CELERY_TASK_DEFAULT_QUEUE


def wait_for(predicate: Any, timeout: float = 20.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")
