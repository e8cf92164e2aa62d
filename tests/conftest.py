"""Fixtures: users and classes, API clients, the scripted model server, a real Celery worker."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection, transaction
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import Enrollment, School, User
from accounts.services import classroom_create
from core.db import connection_release
from tests import schema
from tests.llm_server import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    # In CI the suite must run against the real services, not quietly fall back to embedded ones.
    if os.environ.get("REQUIRE_POSTGRES") == "1" and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise pytest.UsageError("REQUIRE_POSTGRES=1 but DATABASE_URL is not a PostgreSQL URL")
    if os.environ.get("REQUIRE_REDIS") == "1" and not os.environ.get("REDIS_URL", "").startswith("redis"):
        raise pytest.UsageError("REQUIRE_REDIS=1 but REDIS_URL is not set")
    schema.install()


def pytest_configure(config: pytest.Config) -> None:
    # Each PostgreSQL session says whose it is (libpq's PGAPPNAME, inherited by the processes
    # the tests start unless they set their own): the test database's teardown names any left.
    os.environ["PGAPPNAME"] = f"pytest {os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(schema.WorkerCounts(), "schema-worker-counts")


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Under pytest-xdist, each worker hands its count to the controller (schema.WorkerCounts).
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[schema.WORKER_OUTPUT_KEY] = schema.checked["responses"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(f"responses checked against the OpenAPI schema: {schema.checked['responses']}")


# The tests whose outcome depends on the database backend, which CI runs on SQLite as well as on
# PostgreSQL (`pytest -m both_databases` on SQLite, docs/testing.md): memory search and recall
# (PostgreSQL's postings and pgvector, SQLite's FTS5 and vector cache), the migrations, and the
# code that locks rows or claims with one statement (turns, leases, summaries, lifecycle, erasure),
# and the safety sweep's window-function read of a batch's contexts.
# Besides these paths, every test marked postgresql_only or sqlite_only is one of them.
BOTH_DATABASES = (
    "tests/memory/test_fts.py",
    "tests/memory/test_recall.py",
    "tests/memory/test_recall_eval.py",
    "tests/memory/test_search_api.py",
    "tests/memory/test_search_backend.py",
    "tests/memory/test_embeddings.py",
    "tests/memory/test_query_cache.py",
    "tests/memory/test_vector_migrations.py",
    "tests/memory/test_lifecycle.py",
    "tests/memory/test_memory_api.py",
    "tests/conversations/test_turn.py",
    "tests/conversations/test_lease.py",
    "tests/conversations/test_reliability.py",
    "tests/conversations/test_summaries.py",
    "tests/conversations/test_summary_worker.py",
    "tests/conversations/test_asgi_server.py",
    "tests/learning/test_grading_worker.py",
    "tests/privacy/test_erasure.py",
    "tests/llm/test_costs.py",
    "tests/accounts/test_roster_import.py",
    "tests/accounts/test_roster_bundle.py",
    "tests/accounts/test_roster_api.py",
    "tests/webhooks/",
    "tests/web/test_roster_api.py",
    "tests/accounts/test_sign_in_codes.py",
    "tests/safety/test_sweep.py",
    "tests/core/test_compiled.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("real_model"):
            # One model server, which interrupts a reply for a concurrent request: under
            # pytest-xdist (`-n 2 --dist loadgroup`) these tests run one after another in one worker.
            item.add_marker(pytest.mark.xdist_group("real_model"))
        path = item.path.relative_to(ROOT).as_posix() if item.path.is_relative_to(ROOT) else ""
        if path.startswith(BOTH_DATABASES) or any(
            item.get_closest_marker(name) for name in ("postgresql_only", "sqlite_only")
        ):
            item.add_marker(pytest.mark.both_databases)
    # Tests of one database's own code path (PostgreSQL's postings and pgvector search, SQLite's
    # vector cache) are deselected, not skipped, on the other: that run reports them as not run.
    # CI runs the suite on both.
    other = "sqlite_only" if connection.vendor == "postgresql" else "postgresql_only"
    kept = [item for item in items if item.get_closest_marker(other) is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_unconfigure(config: pytest.Config) -> None:
    # The run's own var directory (tutor.settings.test), never the development one.
    var_dir = Path(django_settings.VAR_DIR)
    if var_dir.name.startswith("tutor-test-") and var_dir.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(var_dir, ignore_errors=True)


OTHER_SESSIONS_GRACE_SECONDS = 20.0


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any, request: pytest.FixtureRequest) -> Iterator[None]:
    """pytest-django's test database, dropped at the end of the run once no other session uses it.

    PostgreSQL refuses to drop a database another session is connected to. A process the tests
    started may still be closing its connection when the run ends: the teardown waits for those
    sessions (up to OTHER_SESSIONS_GRACE_SECONDS). A session of this process's own (its
    PGAPPNAME), held by a thread of a test, will not close while it waits, and is not waited for.
    The sessions left are ended and named in a warning (their PGAPPNAME, state and last
    statement), so the database is dropped.
    """
    yield
    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock():
        left = _other_sessions_ended(connection.settings_dict["NAME"])
    if left:
        request.node.warn(pytest.PytestWarning(f"sessions still on the test database, ended: {left}"))


def _other_sessions_ended(name: str) -> list[tuple[Any, ...]]:
    """Wait for the sessions of the database `name` that other processes hold to end; end those
    left after the grace period, and this process's own. The ones ended (pid, application name,
    state, statement)."""
    connection.close()
    pooled: Any = connection  # django-stubs has no close_pool (Django 5.1)
    pooled.close_pool()
    sessions = (
        "SELECT pid, application_name, state, left(query, 120) FROM pg_stat_activity "
        "WHERE datname = %s AND pid <> pg_backend_pid()"
    )
    with connection._nodb_cursor() as cursor:

        def others() -> list[tuple[Any, ...]]:
            cursor.execute(sessions, [name])
            return cursor.fetchall()

        own = os.environ.get("PGAPPNAME")
        with suppress(AssertionError):
            wait_for(lambda: all(row[1] == own for row in others()), timeout=OTHER_SESSIONS_GRACE_SECONDS)
        left = others()
        for row in left:
            cursor.execute("SELECT pg_terminate_backend(%s)", [row[0]])
    return left


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # PBKDF2's deliberate slowness adds a second per test user; tests don't need it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """Each test starts in the default language: a request activates its user's (core.auth) on
    the test's thread, and Django never switches back."""
    from django.utils import translation

    translation.activate(django_settings.LANGUAGE_CODE)
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _cache_of_its_own(settings: Any) -> Iterator[None]:
    """Each test counts throttles and learns context windows from zero: its own key prefix in the
    shared cache (Redis in CI), and no window resolved by an earlier test."""
    from llm import windows

    settings.CACHES = {"default": {**django_settings.CACHES["default"], "KEY_PREFIX": uuid.uuid4().hex}}
    windows.forget()
    yield
    windows.forget()


def make_user(username: str, role: str = User.Role.STUDENT, **extra: Any) -> User:
    return User.objects.create_user(username=username, password="pw-" + username, role=role, **extra)


def build_school() -> dict[str, Any]:
    """Two classes: teacher_a teaches alice and bob, teacher_b teaches carol."""
    teacher_a = make_user("teacher_a", User.Role.TEACHER)
    teacher_b = make_user("teacher_b", User.Role.TEACHER)
    alice = make_user("alice")
    bob = make_user("bob")
    carol = make_user("carol")
    main_school = School.objects.create(name="Test school", external_id="school-1")
    for person in (teacher_a, teacher_b, alice, bob, carol):
        person.school = main_school
        person.save(update_fields=["school"])
    class_a = classroom_create(name="5A", school=main_school, teachers=[teacher_a])
    class_b = classroom_create(name="5B", school=main_school, teachers=[teacher_b])
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
        "school": main_school,
    }


def build_schools(school: dict[str, Any]) -> dict[str, Any]:
    """`school` (school A) and a second school, B, each with its administrator: admin_a
    administers A; B has admin_b, teacher_c teaching 6C to dave. No one of B is in A or teaches
    there, and the other way round."""
    school_b = School.objects.create(name="Second school", external_id="school-2")
    admin_a = make_user("admin_a", User.Role.ADMINISTRATOR, school=school["school"])
    admin_b = make_user("admin_b", User.Role.ADMINISTRATOR, school=school_b)
    teacher_c = make_user("teacher_c", User.Role.TEACHER, school=school_b)
    dave = make_user("dave", school=school_b)
    class_c = classroom_create(name="6C", school=school_b, teachers=[teacher_c])
    Enrollment.objects.create(classroom=class_c, student=dave)
    return {
        **school,
        "admin_a": admin_a,
        "school_b": school_b,
        "admin_b": admin_b,
        "teacher_c": teacher_c,
        "dave": dave,
        "class_c": class_c,
    }


@pytest.fixture
def school(db: None) -> dict[str, Any]:
    """`build_school`'s people and classes, made for the test."""
    return build_school()


@pytest.fixture
def schools(school: dict[str, Any]) -> dict[str, Any]:
    """`build_schools`: school A (`school`) and school B, made for the test."""
    return build_schools(school)


class ModuleRows:
    """Rows made once for a module's tests (`module_rows`): `build()` is where to make them."""

    def __init__(self, blocker: Any) -> None:
        self.blocker = blocker

    @contextmanager
    def build(self) -> Iterator[None]:
        """Database access, and the tests' settings for what is made (fast password hashing, no
        embedder: the function-scoped fixtures that set them do not run for a module's rows)."""
        from django.test import override_settings

        with (
            self.blocker.unblock(),
            override_settings(
                PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"], EMBEDDINGS_BACKEND="none"
            ),
        ):
            yield


@pytest.fixture(scope="module")
def module_rows(django_db_setup: None, django_db_blocker: Any) -> Iterator[ModuleRows]:
    """A transaction that lasts as long as the module's tests: rows made in it once (a
    module-scoped fixture of the module, inside `ModuleRows.build()`) are seen by each test, whose
    own changes are rolled back after it (the `db` fixture's savepoint), and are themselves rolled
    back at the end. For the many cases of one matrix on the same rows (tests/accounts/
    test_tenancy.py); never with a test that needs them committed (a server, a worker)."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
    try:
        yield ModuleRows(django_db_blocker)
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def clients(school: dict[str, Any]) -> dict[str, APIClient]:
    return {name: client_for(user) for name, user in school.items() if isinstance(user, User)}


@pytest.fixture(scope="session", autouse=True)
def _safety_screen_loaded() -> None:
    """The learned safety screen loaded once per test process, as a web process loads it at
    start-up (tutor.startup): its seconds of loading never fall on a test's first turn."""
    from safety import learned

    learned.warm_up()


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


@pytest.fixture(autouse=True)
def _empty_vector_cache() -> Iterator[None]:
    """Each test starts with an empty per-process vector cache (a student id may come back in
    another test's rows on SQLite) and no cached query vector (an embedder may fail on purpose).
    A load the test started on the cache's thread (PostgreSQL) ends with the test: it would
    otherwise fill the next test's cache, or hold a session on the test database as it is dropped."""
    from memory.search.embeddings import query_cache
    from memory.search.recall import vector_cache

    vector_cache.clear()
    query_cache.clear()
    yield
    vector_cache.settle()
    vector_cache.clear()
    query_cache.clear()


@pytest.fixture(autouse=True)
def _lexical_recall_by_default(settings: Any) -> None:
    """Tests run without an embedder unless they ask for one (`local_embedder`, `openai_embedder`),
    so that the local model is loaded only where a test is about it."""
    settings.EMBEDDINGS_BACKEND = "none"


@pytest.fixture
def local_embedder(settings: Any) -> None:
    """The real in-process all-MiniLM-L6-v2 (requirements-embeddings.txt, installed in CI)."""
    settings.EMBEDDINGS_BACKEND = "local"


@pytest.fixture
def openai_embedder(llm: ScriptedLLM, settings: Any) -> ScriptedLLM:
    """The openai embeddings backend, against the scripted server's /v1/embeddings."""
    settings.EMBEDDINGS_BACKEND = "openai"
    settings.EMBEDDINGS_BASE_URL = llm.base_url
    settings.EMBEDDINGS_API_KEY = "test-key"
    settings.EMBEDDINGS_MODEL = "scripted-embed"
    settings.EMBEDDINGS_TIMEOUT_SECONDS = 5.0
    return llm


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


def terminate(proc: subprocess.Popen[bytes] | None, grace: float = 30) -> int | None:
    """SIGTERM `proc` if it runs, SIGKILL after `grace` seconds; its exit code (None: never started)."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode if proc is not None else None


class OwnRedis:
    """redis-server on a free port, its data in `folder`; `restart()` stops it (it writes its
    append-only file) and starts it again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OwnRedis:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        wait_for(lambda: _pings(client), timeout=20, interval=0.05)
        return self

    def restart(self) -> None:
        terminate(self.proc, grace=10)
        self.start()


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path).start()
    yield server
    terminate(server.proc, grace=10)


class Worker:
    """A real `celery worker` process on its own queue, using the test database and model.

    Each instance logs to its own file under the var directory (TUTOR_VAR_DIR), so a second
    worker on the same queue (a restart after `kill()`) is only "ready" once it is.
    """

    def __init__(
        self, llm: ScriptedLLM, queue: str, env: dict[str, str], *, pool: str = "solo", concurrency: int = 1
    ) -> None:
        self.llm = llm
        self.queue = queue
        self.env = env
        # solo by default: one task at a time in the main process, one message reserved, so a
        # second worker gets the next one; "prefork" runs tasks in pool processes, as deployed.
        self.pool = pool
        self.concurrency = concurrency
        self.proc: subprocess.Popen[bytes] | None = None
        self.name = f"{queue}-{uuid.uuid4().hex[:6]}"
        self.log = Path(django_settings.VAR_DIR) / "test-workers" / f"worker-{self.name}.log"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tutor",
            "worker",
            "-Q",
            self.queue,
            f"--pool={self.pool}",
            f"--concurrency={self.concurrency}",
            "-n",
            f"{self.name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "INFO",
        ]

    def start(self) -> Worker:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env={**self.env, "PYTHONUNBUFFERED": "1"},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120  # a ready worker returns at once
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited early:\n{self.log_text()[-3000:]}")
            if "ready." in self.log_text():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"celery worker did not start:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_for_log(self, needle: str, count: int = 1, timeout: float = 20.0) -> str:
        """Wait until `needle` appears `count` times in this worker's log; returns the log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log_text()
            if text.count(needle) >= count:
                return text
            if self.proc is not None and self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"{needle!r} x{count} not in the worker log:\n{self.log_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: the worker dies mid-task without acknowledging or restoring anything."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        terminate(self.proc, grace=15)


def _worker_env(llm: ScriptedLLM, queue: str) -> dict[str, str]:
    """The environment of a process the tests start (a Celery worker, the production server):
    the test database, the scripted model, tasks on `queue`."""
    return {
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
        "EMBEDDINGS_BACKEND": django_settings.EMBEDDINGS_BACKEND,
        "EMBEDDINGS_BASE_URL": django_settings.EMBEDDINGS_BASE_URL,
        "EMBEDDINGS_API_KEY": django_settings.EMBEDDINGS_API_KEY,
        "EMBEDDINGS_MODEL": django_settings.EMBEDDINGS_MODEL,
        "EMBEDDINGS_RETRY_BACKOFF_SECONDS": "0.3",
        "PYTHONPATH": str(ROOT),
        "PGAPPNAME": f"{os.environ.get('PGAPPNAME', 'pytest')} served, queue {queue}",
    }


@pytest.fixture
def worker_env(llm: ScriptedLLM, transactional_db: None) -> Iterator[dict[str, str]]:
    """The environment of a test worker; tasks sent by the test go to its unique queue.

    A test may add variables (e.g. CELERY_VISIBILITY_TIMEOUT) before starting a Worker itself,
    or before the `server` fixture starts the production server (which then is its own).
    """
    if not django_settings.CELERY_BROKER_URL.startswith(("redis", "filesystem")):
        raise RuntimeError("worker tests need REDIS_URL or the filesystem broker")
    for option in ("data_folder_in", "data_folder_out", "processed_folder"):
        folder = django_settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(option)
        if isinstance(folder, str):  # the filesystem broker's folders must exist
            Path(folder).mkdir(parents=True, exist_ok=True)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    from tutor.celery import app

    app.conf.task_default_queue = queue
    yield _worker_env(llm, queue)
    app.conf.task_default_queue = django_settings.CELERY_TASK_DEFAULT_QUEUE


@pytest.fixture
def worker(worker_env: dict[str, str], llm: ScriptedLLM) -> Iterator[Worker]:
    w = Worker(llm, worker_env["CELERY_QUEUE"], worker_env)
    w.start()
    yield w
    w.stop()


def wait_for(predicate: Any, timeout: float = 20.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


# --- The production server (scripts/serve.sh) in a subprocess ---------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """scripts/serve.sh (uvicorn, two worker processes) in a subprocess with `env`, logging to `log`."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {
            **env,
            "RUN_ADDR": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": "2",
            "EMBEDDINGS_BACKEND": "none",
            "DB_STEP_THREADS": "4",  # the turn's database steps on their thread pool, as in production
            "VENV": str(Path(env.get("VIRTUAL_ENV", ROOT / ".venv"))),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Serve:
        """Start the server and return once both worker processes have started and it answers
        (a 401 for an anonymous GET /me/)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=self.env, stdout=out, stderr=out
            )
        # Generous: a loaded machine starts it slowly, and a ready server returns at once.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_text()
            # Ready once both worker processes are: the first one to finish its start-up answers.
            if self.log_text().count("Application startup complete.") >= 2:
                try:
                    if httpx2.get(f"{self.base}/api/v1/me/", timeout=1).status_code == 401:
                        return self
                except httpx2.TransportError:
                    pass
            time.sleep(0.05)
        self.stop()
        raise AssertionError(f"server did not start:\n{self.log_text()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self, since: int = 0) -> str:
        if not self.log.exists():
            return ""
        with self.log.open("rb") as f:
            f.seek(since)
            return f.read().decode(errors="replace")

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def check(self, since: int = 0) -> None:
        """No traceback in the log since `since`, and each of the two worker processes warmed up
        once before accepting connections (the ASGI lifespan), then set its garbage collector
        (tutor.collector): none was restarted."""
        text = self.log_text(since)
        assert "Traceback" not in text, text
        assert self.log_text().count("chat model: scripted-tutor at") == 2, self.log_text()
        assert self.log_text().count("garbage collector: ") == 2, self.log_text()

    def stop(self) -> None:
        terminate(self.proc)


class SharedServe:
    """The production server the `server` fixture shares between the tests of a run, started at
    the first test that needs it (and again if one of them stopped it)."""

    def __init__(self, llm: ScriptedLLM) -> None:
        self.llm = llm
        self.queue = f"test-serve-{uuid.uuid4().hex[:8]}"
        self.serve: Serve | None = None
        self.started = 0
        self.checked = 0  # the part of the log the tests have checked

    def get(self) -> Serve:
        if self.serve is None or not self.serve.alive():
            self.started += 1
            log = Path(django_settings.VAR_DIR) / "test-servers" / f"serve-{self.queue}-{self.started}.log"
            self.serve = Serve(_worker_env(self.llm, self.queue), log).start()
            self.checked = 0
        return self.serve

    def stop(self) -> None:
        """Stop the server; its shutdown logs no traceback."""
        if self.serve is not None:
            self.serve.stop()
            self.serve.check(self.checked)


@pytest.fixture(scope="session")
def _shared_serve(llm_server: ScriptedLLM, django_db_setup: None) -> Iterator[SharedServe]:
    """Stopped at the end of the run, before the test database is dropped."""
    shared = SharedServe(llm_server)
    yield shared
    shared.stop()


@pytest.fixture
def server(
    worker_env: dict[str, str],
    llm: ScriptedLLM,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    _shared_serve: SharedServe,
) -> Iterator[str]:
    """The base URL of the production server (scripts/serve.sh) on the test database.

    One server serves every test that does not change its environment: each test has users and
    data of its own (the database is emptied after each), and the server's tasks go to a queue
    no test worker reads. A test that adds variables to `worker_env` before this fixture runs,
    or that also runs a `worker` (which must read the server's queue), gets a server of its own,
    stopped after it. Either way the test fails if the server logged a traceback meanwhile or
    restarted a worker process.
    """
    standard = _worker_env(llm, worker_env["CELERY_QUEUE"])
    own = worker_env != standard or "worker" in request.fixturenames
    if own:
        serve = Serve(worker_env, tmp_path / "serve.log").start()
        try:
            yield serve.base
        finally:
            serve.stop()
            serve.check()
        return
    serve = _shared_serve.get()
    since = serve.log_size()
    yield serve.base
    serve.check(since)
    _shared_serve.checked = serve.log_size()


def headers(user: Any, **extra: str) -> dict[str, str]:
    """The user's token header. Called from a test's own thread, it gives that thread's database
    connection back: a thread that ends holding one keeps it out of the pool for good."""
    token, _ = Token.objects.get_or_create(user=user)
    if threading.current_thread() is not threading.main_thread():
        connection_release()
    return {"Authorization": f"Token {token.key}", **extra}


def new_conversation(base: str, user: Any) -> int:
    resp = httpx2.post(f"{base}/api/v1/conversations/", json={"subject": "Maths"}, headers=headers(user))
    assert resp.status_code == 201, resp.text
    return int(resp.json()["id"])
