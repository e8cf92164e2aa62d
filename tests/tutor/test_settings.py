"""The settings validate the environment: a bad value stops start-up with ImproperlyConfigured
naming the variable, secrets may come from `<NAME>_FILE`, and recall's tuning is code that
tests and production share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

import memory.search.recall as recall_module
from memory.search.recall import RecallConfig, recall
from tests.conftest import ROOT
from tutor.settings import env as settings_env


def start(tmp_path: Path, module: str = "tutor.settings.base", **env: str) -> subprocess.CompletedProcess[str]:
    """`django.setup()` in a new process with these variables; prints SECRET_KEY's length."""
    code = "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": module, "TUTOR_VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("DB_POOL_MAX_SIZE", "six", "an integer"),
        ("DJANGO_DEBUG", "maybe", "a boolean"),
        ("THROTTLE_SEND_RATE", "30/fortnight", "a rate"),
        ("REDIS_URL", "127.0.0.1:6379", "a redis:// or rediss:// URL"),
        ("EMBEDDINGS_BACKEND", "gpu", "one of auto, local, openai, none"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(tmp_path, name, value, expected):
    """The process exits on ImproperlyConfigured, and the message says which variable and what
    it expects."""
    result = start(tmp_path, **{name: value})
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("tutor.settings.env.SettingsError:"), result.stderr
    assert name in last_line and expected in last_line, last_line


def test_good_values_start(tmp_path):
    """The same variables with values they accept: the settings load."""
    result = start(
        tmp_path,
        DB_POOL_MAX_SIZE="4",
        DJANGO_DEBUG="off",
        THROTTLE_SEND_RATE="30/minute",
        REDIS_URL="redis://127.0.0.1:6379/15",
        EMBEDDINGS_BACKEND="NONE",
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("read", "raw"),
    [
        (lambda: settings_env.env_int("X_SETTING", 1), "1.5"),
        (lambda: settings_env.env_float("X_SETTING", 1.0), "5x"),
        (lambda: settings_env.env_float("X_SETTING", 1.0), "nan"),
        (lambda: settings_env.env_bool("X_SETTING", True), "enabled"),
        (lambda: settings_env.env_rate("X_SETTING", ""), "0/minute"),
        (lambda: settings_env.env_url("X_SETTING", schemes=("http", "https")), "ftp://host/"),
        (lambda: settings_env.env_origins("X_SETTING"), "https://app.example.org/path"),
        (lambda: settings_env.env_json("X_SETTING", {}), "[1, 2]"),
        (lambda: settings_env.env_int("X_SETTING", 1, minimum=0), "-1"),
    ],
)
def test_each_kind_refuses_what_it_cannot_use(monkeypatch, read, raw):
    monkeypatch.setenv("X_SETTING", raw)
    with pytest.raises(ImproperlyConfigured, match="X_SETTING must be"):
        read()


def test_booleans_and_blanks(monkeypatch):
    """Booleans are words of a known set in any case; a blank typed value takes the default, a
    blank string stays blank (it turns a feature off)."""
    for raw, value in [("YES", True), ("on", True), ("1", True), ("Off", False), ("no", False), ("0", False)]:
        monkeypatch.setenv("X_SETTING", raw)
        assert settings_env.env_bool("X_SETTING", not value) is value
    monkeypatch.setenv("X_SETTING", " ")
    assert settings_env.env_bool("X_SETTING", True) is True
    assert settings_env.env_int("X_SETTING", 7) == 7
    assert settings_env.env_rate("X_SETTING", "30/minute") == ""
    monkeypatch.delenv("X_SETTING")
    assert settings_env.env_rate("X_SETTING", "30/minute") == "30/minute"


def test_a_secret_comes_from_its_file(tmp_path, monkeypatch):
    """`<NAME>_FILE` names a file whose content, without its trailing newline, is the value."""
    secret = tmp_path / "llm_api_key"
    secret.write_text("sk-from-a-file\n")
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    monkeypatch.setenv("LLM_API_KEY_FILE", str(secret))
    assert settings_env.env_str("LLM_API_KEY", secret=True) == "sk-from-a-file"
    # Only secrets read files.
    assert settings_env.env_str("LLM_API_KEY") == ""


def test_a_secret_set_twice_or_unreadable_is_refused(tmp_path, monkeypatch):
    secret = tmp_path / "key"
    secret.write_text("from-the-file")
    monkeypatch.setenv("LLM_API_KEY_FILE", str(secret))
    monkeypatch.setenv("LLM_API_KEY", "from-the-environment")
    with pytest.raises(ImproperlyConfigured, match="LLM_API_KEY and LLM_API_KEY_FILE are both set"):
        settings_env.env_str("LLM_API_KEY", secret=True)
    monkeypatch.delenv("LLM_API_KEY")
    monkeypatch.setenv("LLM_API_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="LLM_API_KEY_FILE must name a readable"):
        settings_env.env_str("LLM_API_KEY", secret=True)


def test_an_error_about_a_secret_does_not_show_it(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "http://user:hunter2@redis.internal:6379/0")
    with pytest.raises(ImproperlyConfigured, match="REDIS_URL must be") as raised:
        settings_env.env_url("REDIS_URL", schemes=("redis", "rediss"), secret=True)
    assert "hunter2" not in str(raised.value)


def test_production_reads_its_secret_key_from_a_file(tmp_path):
    """The production settings start with DJANGO_SECRET_KEY_FILE (DJANGO_SECRET_KEY empty, as in
    a copy of .env.example), and refuse both set."""
    key = "k" * 50
    (tmp_path / "secret_key").write_text(key + "\n")
    file_env = {"DJANGO_SECRET_KEY_FILE": str(tmp_path / "secret_key")}
    result = start(tmp_path, "tutor.settings.production", DJANGO_SECRET_KEY="", **file_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(key))
    both = start(tmp_path, "tutor.settings.production", DJANGO_SECRET_KEY=key, **file_env)
    assert both.returncode != 0
    assert "DJANGO_SECRET_KEY and DJANGO_SECRET_KEY_FILE are both set" in both.stderr


def test_recall_tuning_is_not_configuration():
    """No RECALL_* setting: recall's tuning is RecallConfig's defaults."""
    assert [name for name in dir(django_settings) if name.startswith("RECALL_")] == []
    assert not hasattr(RecallConfig, "from_settings")


def test_recall_runs_with_the_defaults_tests_build(school, monkeypatch):
    """`recall` given no configuration runs with RecallConfig(), the object tests build."""
    used: list[RecallConfig] = []
    fuse_scores = recall_module.fuse_scores

    def spy(*args, **kwargs):
        used.append(args[3])
        return fuse_scores(*args, **kwargs)

    monkeypatch.setattr(recall_module, "fuse_scores", spy)
    recall(student_id=school["alice"].pk, query="fractions", strategy="lexical")
    assert used == [RecallConfig()]
