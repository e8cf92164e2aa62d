"""accounts.0005 (schools), run by `manage.py migrate` for real on a database of its own: every
existing class moves into one school with its teacher as its primary teacher, and its people
belong to that school; an empty database gets no school."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _migrate(path: Path, *target: str) -> None:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", *target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_existing_classes_move_into_one_school_with_their_teacher_primary(tmp_path):
    """Two classes of two teachers, before the migration, are after it in one school named
    "School", each taught by its teacher as primary; their teachers and students belong to it,
    and the staff account to none."""
    db = tmp_path / "old.sqlite3"
    _migrate(db, "accounts", "0004")
    with sqlite3.connect(db) as conn:
        for pk, username, role in [
            (1, "t1", "teacher"),
            (2, "t2", "teacher"),
            (3, "s1", "student"),
            (4, "root", "staff"),
        ]:
            conn.execute(
                "INSERT INTO accounts_user (id, password, is_superuser, username, first_name, last_name, email,"
                " is_staff, is_active, date_joined, role, language, is_demo)"
                " VALUES (?, '!', 0, ?, '', '', '', 0, 1, '2026-01-01', ?, 'en', 0)",
                (pk, username, role),
            )
        conn.execute(
            "INSERT INTO accounts_classroom (id, name, teacher_id, created_at) VALUES (1, '5A', 1, '2026-01-01')"
        )
        conn.execute(
            "INSERT INTO accounts_classroom (id, name, teacher_id, created_at) VALUES (2, '5B', 2, '2026-01-01')"
        )
        conn.execute(
            "INSERT INTO accounts_enrollment (classroom_id, student_id, created_at) VALUES (1, 3, '2026-01-01')"
        )
    _migrate(db, "accounts", "0005")
    schools = _rows(db, "SELECT id, name, kind FROM accounts_school")
    assert [(name, kind) for _pk, name, kind in schools] == [("School", "school")]
    school = schools[0][0]
    assert _rows(db, "SELECT id, school_id, active FROM accounts_classroom ORDER BY id") == [
        (1, school, 1),
        (2, school, 1),
    ]
    assert _rows(
        db, 'SELECT classroom_id, teacher_id, "primary", active FROM accounts_teacherenrollment ORDER BY classroom_id'
    ) == [(1, 1, 1, 1), (2, 2, 1, 1)]
    assert _rows(db, "SELECT username, school_id FROM accounts_user ORDER BY id") == [
        ("t1", school),
        ("t2", school),
        ("s1", school),
        ("root", None),
    ]
    assert _rows(db, "SELECT student_id, active FROM accounts_enrollment") == [(3, 1)]


def test_an_empty_database_gets_no_school(tmp_path):
    """A new deployment starts with no school: the first is made by the roster, the provisioning
    API or the admin."""
    db = tmp_path / "new.sqlite3"
    _migrate(db, "accounts", "0005")
    assert _rows(db, "SELECT count(*) FROM accounts_school") == [(0,)]
