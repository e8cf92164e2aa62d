"""The migrations that move vectors into pgvector columns, run by `manage.py migrate` for real.

Each test migrates a database of its own (a new database on the test server, or a new SQLite
file) in subprocesses, as an operator would.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
from django.db import connection

from tests.conftest import ROOT, _database_url

pytestmark = pytest.mark.django_db(transaction=True)

DIM = 8


def _manage(url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    if check and done.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)}:\n{done.stdout}\n{done.stderr}")
    return done


class _Database:
    """A database of the test's own, with SQL access that needs no Django model."""

    def __init__(self, url: str) -> None:
        self.url = url

    def sql(self, statement: str, params: tuple = ()) -> list[tuple]:
        if self.url.startswith("sqlite"):
            with sqlite3.connect(urlparse(self.url).path) as conn:
                return conn.execute(statement.replace("%s", "?"), params).fetchall()
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else []


def _server_admin_url() -> str:
    return _database_url().rsplit("/", 1)[0] + "/postgres"


@pytest.fixture
def fresh_database(tmp_path: Path) -> Iterator[_Database]:
    if connection.vendor == "sqlite":
        yield _Database(f"sqlite:///{tmp_path / 'migrate.sqlite3'}")
        return
    import psycopg

    name = f"tutor_migrate_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(_server_admin_url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _Database(_database_url().rsplit("/", 1)[0] + f"/{name}")
    finally:
        with psycopg.connect(_server_admin_url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _memories_with_byte_vectors(db: _Database, count: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """`count` memories of a new student, each with a vector and 2 sentence vectors stored as the
    byte columns held them before the move; their values by memory id."""
    # The user through the ORM (its model has not changed since); the memories in SQL, with the
    # columns memory 0009 has (the model has more today).
    script = (
        "from accounts.models import User;"
        "print(User.objects.create_user(username='mig', password='x', role='student').pk)"
    )
    student = int(_manage(db.url, "shell", "-c", script).stdout.split()[-1])
    for i in range(count):
        db.sql(
            "INSERT INTO memory_aimemory (student_id, kind, title, content, source, token_count, status, visibility,"
            " archived_reason, source_ref, needs_review, confidence, created_at, updated_at, revision)"
            " VALUES (%s, 'note', %s, 'Text.', 'teacher', 0, 'active', 'student', '', '', %s, 1.0,"
            " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0)",
            (student, f"Note {i}", False),
        )
    rng = np.random.default_rng(7)
    stored = {}
    for (memory_id,) in db.sql("SELECT id FROM memory_aimemory ORDER BY id"):
        vector = rng.standard_normal(DIM).astype("<f4")
        sentences = rng.standard_normal((2, DIM)).astype("<f4")
        db.sql(
            "INSERT INTO memory_memoryembedding (memory_id, student_id, model, dim, vector, sentences,"
            " sentence_vectors, text_hash, updated_at, revision) VALUES (%s, %s, 'test', %s, %s, 2, %s, 'h',"
            " CURRENT_TIMESTAMP, 0)",
            (memory_id, student, DIM, vector.tobytes(), sentences.tobytes()),
        )
        stored[memory_id] = (vector, sentences)
    return stored


def _read_vectors(db: _Database) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    script = (
        "import json; from memory.models import MemoryEmbedding;"
        "print(json.dumps({e.memory_id: [e.vector.tolist(), e.sentence_vectors.tolist()]"
        " for e in MemoryEmbedding.objects.all()}))"
    )
    import json

    rows = json.loads(_manage(db.url, "shell", "-c", script).stdout.strip().splitlines()[-1])
    return {int(pk): (np.array(v, np.float32), np.array(s, np.float32).reshape(-1, DIM)) for pk, (v, s) in rows.items()}


def test_migrate_moves_byte_vectors_and_resumes_where_it_stopped(fresh_database):
    """Vectors stored as bytes come out of `migrate` equal, in the new columns. A copy that was
    interrupted (some rows copied already) goes on with the rows not copied yet."""
    db = fresh_database
    _manage(db.url, "migrate", "--noinput")
    _manage(db.url, "migrate", "memory", "0009", "--noinput")
    stored = _memories_with_byte_vectors(db, 5)

    _manage(db.url, "migrate", "memory", "0010", "--noinput")
    # As if a run had copied the first row and stopped: it must not be copied again.
    first = min(stored)
    marker = np.full(DIM, 0.5, np.float32)
    if db.url.startswith("sqlite"):
        db.sql(
            "UPDATE memory_memoryembedding SET vector_new = %s, sentence_vectors_new = X'' WHERE memory_id = %s",
            (marker.tobytes(), first),
        )
    else:
        text = "[" + ",".join(["0.5"] * DIM) + "]"
        db.sql(
            "UPDATE memory_memoryembedding SET vector_new = %s::vector, sentence_vectors_new = '{}'"
            " WHERE memory_id = %s",
            (text, first),
        )
    _manage(db.url, "migrate", "--noinput")

    moved = _read_vectors(db)
    assert sorted(moved) == sorted(stored)
    assert np.array_equal(moved[first][0], marker) and moved[first][1].size == 0
    for pk, (vector, sentences) in stored.items():
        if pk != first:
            assert np.array_equal(moved[pk][0], vector), pk
            assert np.array_equal(moved[pk][1], sentences), pk


@pytest.mark.postgresql_only
def test_a_postgresql_without_pgvector_gets_a_clear_error_and_no_half_migration():
    """On a PostgreSQL server without pgvector (Debian's own, on 127.0.0.1:5432 in CI, or
    PG_WITHOUT_PGVECTOR_URL), migrate stops at the vectors' migration with a message that says
    what to do, and leaves the database at the migration before it. It skips only where no such
    server is reachable and REQUIRE_POSTGRES is not set (a developer's machine); CI sets it."""
    import psycopg

    server = os.environ.get("PG_WITHOUT_PGVECTOR_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=3) as conn:
            available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    except psycopg.OperationalError:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            raise
        pytest.skip(f"no PostgreSQL at {server}")
    if available:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"the PostgreSQL at {server} has pgvector: set PG_WITHOUT_PGVECTOR_URL to one without")
        pytest.skip(f"the PostgreSQL at {server} has pgvector")
    name = f"tutor_nopgvector_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = server.rsplit("/", 1)[0] + f"/{name}"
    try:
        done = _manage(url, "migrate", "--noinput", check=False)
        assert done.returncode != 0
        assert "has no pgvector extension" in done.stderr and "CREATE EXTENSION vector" in done.stderr
        assert "Nothing of this migration was applied" in done.stderr
        db = _Database(url)
        applied = {row[0] for row in db.sql("SELECT name FROM django_migrations WHERE app = 'memory'")}
        assert "0009_record_memories" in applied and "0010_pgvector_columns" not in applied
        columns = {
            row[0]
            for row in db.sql(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory_memoryembedding'"
            )
        }
        assert "vector" in columns and "vector_new" not in columns
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgresql_only
def test_migrate_copies_the_vectors_to_half_precision_in_batches(fresh_database):
    """0019 copies every vector stored before 0018 into memory_halfvector, more than one batch of
    them; a vector written after 0018 (whose trigger copied it already) keeps its copy."""
    db = fresh_database
    _manage(db.url, "migrate", "--noinput")
    _manage(db.url, "migrate", "memory", "0017", "--noinput")
    script = "from accounts.models import User; print(User.objects.create_user(username='half', password='x').pk)"
    student = int(_manage(db.url, "shell", "-c", script).stdout.split()[-1])
    count = 2100  # more than 0019's batch of 2,000
    db.sql(
        "INSERT INTO memory_aimemory (student_id, kind, title, content, source, token_count, status, visibility,"
        " archived_reason, source_ref, needs_review, confidence, created_at, updated_at, revision, evidence, model,"
        " successes, failures, recall_count, confirmed_at)"
        " SELECT %s, 'note', 'n' || i, 'Text.', 'teacher', 0, 'active', 'student', '', '', false, 1.0,"
        " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0, '[]', '', 0, 0, 0, NULL FROM generate_series(1, %s) i",
        (student, count),
    )
    db.sql(
        "INSERT INTO memory_memoryembedding (memory_id, student_id, model, dim, vector, sentences, sentence_vectors,"
        " text_hash, updated_at, revision)"
        " SELECT id, student_id, 'test', 3, ('[' || mod(id, 97) / 97.0 || ',0.5,' || 1.0 / id || ']')::vector, 0,"
        " '{}', 'h', CURRENT_TIMESTAMP, 0 FROM memory_aimemory"
    )
    _manage(db.url, "migrate", "memory", "0018", "--noinput")
    assert db.sql("SELECT count(*) FROM memory_halfvector") == [(0,)]
    (first,) = db.sql("SELECT min(memory_id) FROM memory_memoryembedding")[0]
    db.sql("UPDATE memory_memoryembedding SET vector = '[0.25,0.25,0.25]' WHERE memory_id = %s", (first,))

    _manage(db.url, "migrate", "--noinput")
    assert db.sql("SELECT count(*) FROM memory_halfvector") == [(count,)]
    assert db.sql(
        "SELECT count(*) FROM memory_memoryembedding e JOIN memory_halfvector h USING (memory_id)"
        " WHERE h.vector = e.vector::halfvec AND (h.student_id, h.model, h.dim) = (e.student_id, e.model, e.dim)"
    ) == [(count,)]
    assert db.sql("SELECT vector::text FROM memory_halfvector WHERE memory_id = %s", (first,)) == [
        ("[0.25,0.25,0.25]",)
    ]
