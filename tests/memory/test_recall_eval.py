"""`manage.py recall_eval` in a throwaway database of its own: no `migrate` first, nothing written
to (or locked in) the configured database, the throwaway one removed at the end, even on Ctrl-C
or SIGTERM, and progress on stderr without colour.

The command runs in a subprocess, as from a shell: in-process it would switch the test's own
connection to the throwaway database. The in-place mode is tested in test_recall.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
# The lexical row over the two non-adversarial questions: both found first.
FIGURES = re.compile(r"^lexical +all-but-adversarial +2 +100\.0 ", re.MULTILINE)
THROWAWAY = re.compile(r"^database: a throwaway (?:SQLite file|PostgreSQL database) ([^\s,]+)", re.MULTILINE)


def _recall_set(path: Path) -> Path:
    """Two conversations, each a student of its own, with a question answered by one memory."""

    def memory(memory_id: str, when: str, content: str) -> dict[str, str]:
        return {"id": memory_id, "created_at": when, "title": f"Session {memory_id}", "content": content}

    def question(question_id: str, text: str, category: str, evidence: str) -> dict[str, Any]:
        return {"id": question_id, "question": text, "category": category, "evidence": [evidence]}

    conversations = [
        {
            "id": "c1",
            "memories": [
                memory("s1", "2024-01-01T10:00:00", "Sam adopted a dog named Rex from the shelter."),
                memory("s2", "2024-02-01T10:00:00", "Sam started violin lessons with a new teacher."),
            ],
            "questions": [question("c1:q1", "When did Sam start the violin?", "single-hop", "s2")],
        },
        {
            "id": "c2",
            "memories": [
                memory("s1", "2024-01-01T10:00:00", "Mia baked a chocolate cake for her grandmother."),
                memory("s2", "2024-03-01T10:00:00", "Mia joined the school chess club on Fridays."),
            ],
            "questions": [
                question("c2:q1", "Which club did Mia join?", "single-hop", "s2"),
                question("c2:q2", "What did Mia bake?", "adversarial", "s1"),
            ],
        },
    ]
    path.write_text(json.dumps({"source": {"dataset": "synthetic"}, "conversations": conversations}))
    return path


def _env(tmp_path: Path, database_url: str) -> dict[str, str]:
    """The development settings on `database_url`, with runtime files and temporary files in
    `tmp_path`, no embedder."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
        "DATABASE_URL": database_url,
        "TUTOR_VAR_DIR": str(tmp_path / "var"),
        "TMPDIR": str(tmp_path / "tmp"),
        "EMBEDDINGS_BACKEND": "none",
        "PYTHONPATH": str(ROOT),
    }


def _command(tmp_path: Path, *extra: str) -> list[str]:
    recall_set = _recall_set(tmp_path / "set.json")
    return [sys.executable, str(ROOT / "manage.py"), "recall_eval", str(recall_set), *extra]


def _run(tmp_path: Path, database_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(tmp_path, "--strategies", "latest,lexical", "--force-color", *extra),
        cwd=ROOT,
        env=_env(tmp_path, database_url),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _interrupted(tmp_path: Path, database_url: str, signum: int) -> tuple[int, str, str]:
    """Start the command, send `signum` once it has named its throwaway database (it is then
    migrating it), and return its exit code, its stderr and the database's name."""
    process = subprocess.Popen(
        _command(tmp_path, "--strategies", "latest,lexical"),
        cwd=ROOT,
        env=_env(tmp_path, database_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job ignores SIGINT, and a child would inherit that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    lines = []
    try:
        for line in process.stderr:
            lines.append(line)
            if match := THROWAWAY.match(line):
                process.send_signal(signum)
                break
        else:
            pytest.fail("no throwaway database named: " + "".join(lines))
        stderr = "".join(lines) + process.stderr.read()
        return process.wait(timeout=60), stderr, match.group(1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _leftovers(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "tmp").glob("tutor-recall-eval-*"))


def test_runs_on_a_database_never_migrated_and_leaves_it_untouched(tmp_path):
    """With a configured SQLite file that does not exist (a fresh clone, no `migrate`), the command
    migrates a throwaway file of its own, prints the figures, and removes it; the configured file
    is never created. Nothing is coloured, even with --force-color."""
    configured = tmp_path / "configured.sqlite3"
    out = tmp_path / "out.json"
    result = _run(tmp_path, f"sqlite:///{configured}", "--json", str(out))
    assert result.returncode == 0, result.stderr
    match = THROWAWAY.search(result.stderr)
    assert match, result.stderr
    assert Path(match.group(1)).parent.parent == tmp_path / "tmp"
    assert FIGURES.search(result.stdout), result.stdout
    assert "recall latency" in result.stdout
    assert json.loads(out.read_text())["lexical"]["all-but-adversarial"]["hit@1"] == 100.0
    assert "] 6/6 searches" in result.stderr
    assert not configured.exists()
    assert not list(tmp_path.glob("configured.sqlite3*"))
    assert _leftovers(tmp_path) == []
    assert "\x1b[" not in result.stdout + result.stderr


def test_a_writer_holding_the_configured_database_is_never_waited_for(tmp_path):
    """The configured SQLite file stays locked by another writer for the whole run (as a server's
    write would be): the command finishes all the same, and the file holds only that writer's
    rows. (Were the command to open the file, it would wait 30 s for the lock and fail.)"""
    configured = tmp_path / "configured.sqlite3"
    writer = sqlite3.connect(configured, isolation_level=None, timeout=1)
    try:
        writer.execute("CREATE TABLE message (body TEXT)")
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("INSERT INTO message VALUES ('before the run')")
        result = _run(tmp_path, f"sqlite:///{configured}")
        writer.execute("INSERT INTO message VALUES ('after the run')")
        writer.execute("COMMIT")
        tables = [row[0] for row in writer.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = writer.execute("SELECT count(*) FROM message").fetchone()[0]
    finally:
        writer.close()
    assert result.returncode == 0, result.stderr
    assert FIGURES.search(result.stdout), result.stdout
    assert tables == ["message"] and rows == 2
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_throwaway_file_is_removed_when_interrupted(tmp_path, signum):
    """Ctrl-C or SIGTERM while the throwaway database is being created and migrated: the command
    stops and removes it."""
    configured = tmp_path / "configured.sqlite3"
    code, stderr, name = _interrupted(tmp_path, f"sqlite:///{configured}", signum)
    assert code == (130 if signum == signal.SIGINT else 128 + signum), stderr
    assert not Path(name).exists()
    assert _leftovers(tmp_path) == []
    assert not configured.exists()


def _databases_named(name: str) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchall()


@pytest.mark.postgresql_only
@pytest.mark.parametrize("signum", [None, signal.SIGINT], ids=["run", "ctrl-c"])
def test_postgresql_throwaway_database_is_dropped(db, tmp_path, signum):
    """On PostgreSQL the command creates `tutor_recall_eval_<random>` on the configured server,
    runs in it, and drops it at the end, also on Ctrl-C."""
    database_url = os.environ["DATABASE_URL"]
    if signum is None:
        result = _run(tmp_path, database_url)
        assert result.returncode == 0, result.stderr
        assert FIGURES.search(result.stdout), result.stdout
        code, stderr = result.returncode, result.stderr
        match = THROWAWAY.search(stderr)
        assert match, stderr
        name = match.group(1)
    else:
        code, stderr, name = _interrupted(tmp_path, database_url, signum)
        assert code == 130, stderr
    assert re.fullmatch(r"tutor_recall_eval_[0-9a-f]{16}", name)
    assert _databases_named(name) == []
