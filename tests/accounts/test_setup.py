"""Setting up: demo data, and production settings that refuse to start without a secret."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from accounts.models import Classroom, User
from safety.unrouted import classrooms_without_recipient

ROOT = Path(__file__).resolve().parents[2]


def test_seed_demo_creates_marked_accounts_with_tokens(db, capsys, settings):
    settings.ALLOW_DEMO_DATA = True
    call_command("seed_demo")
    call_command("seed_demo")  # idempotent
    out = capsys.readouterr().out
    users = {u.username: u for u in User.objects.all()}
    assert set(users) == {"teacher", "alice", "bob"}
    assert all(u.is_demo for u in users.values())
    classroom = Classroom.objects.get()
    assert list(classroom.teachers.all()) == [users["teacher"]]
    assert set(classroom.students.values_list("username", flat=True)) == {"alice", "bob"}
    for user in users.values():
        assert Token.objects.get(user=user).key in out
    # The demo class's crisis alerts reach someone: no error at the next start-up.
    assert not classrooms_without_recipient().exists()


def test_seed_demo_refused_when_debug_off(db, settings):
    settings.ALLOW_DEMO_DATA = False
    with pytest.raises(CommandError, match="DEBUG"):
        call_command("seed_demo")
    assert not User.objects.exists()


def _check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tutor.settings.production", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "tutor.settings.production"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_starts_with_a_secret_key():
    result = _check({"DJANGO_SECRET_KEY": "x" * 60, "DJANGO_ALLOWED_HOSTS": "tutor.example"})
    assert result.returncode == 0, result.stderr
