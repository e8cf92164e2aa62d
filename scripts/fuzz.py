"""Schemathesis against the live server: generated requests for every operation of the published
schema, as a student and as a teacher, checked for server errors and for answers the schema does
not allow (status, content type, body).

    .venv/bin/python scripts/fuzz.py [--examples N] [--min-requests N]

It migrates a database of its own (a temporary SQLite file, or FUZZ_DATABASE_URL, a PostgreSQL
database it drops and creates), seeds the demo accounts with a conversation and memories,
starts the production server (scripts/serve.sh) with the scripted model server of the tests,
runs `schemathesis run` once per role, and prints how many requests were sent and how many
failed. It exits non-zero on any failure, or if fewer than --min-requests requests were sent.
`make fuzz` runs it with more examples than CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llm_server import ScriptedLLM  # noqa: E402

# Every check schemathesis has (server errors, the schema's statuses, content types, bodies and
# headers, positive data accepted and negative data rejected, unsupported methods and their
# Allow header, authentication and use after free...), in every phase, the stateful one included
# (sequences of calls that follow the schema's links).
CHECKS = "all"
PHASES = "examples,coverage,fuzzing,stateful"
LOGOUT = "auth_logout_create"
# The rules no JSON Schema can state, each in its operation's description: a 400 there is not
# schema-valid data refused (positive_data_acceptance). Signing in with a well-formed username
# and password that match no account is the API's 400 `invalid` (DRF's convention); a usage
# report spans at most 366 days (since and until together); a teacher's search names a student;
# a student card, as written or as a change accepted, fits MEMORY_CARD_MAX_TOKENS (a count of
# tokens, 400 `card_too_long`); a summary's content keeps 2 to 4 sentences (a rule of the memory's
# kind); an uploaded file's type is found from its content (a byte that is not text is a 400
# `file_type_not_allowed`).
# NUL is refused in every text (400): the schema's patterns say so where a field refuses blank
# text, but drf-spectacular cannot give a pattern to one that allows it; the tests cover NUL.
GENERATION = "generation.allow-x00 = false\n"
OPERATIONS = """
[[operations]]
include-path-regex = "^/api/v1/auth/(token|login)/$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "429"]

[[operations]]
include-path-regex = "^/api/v1/(students/[^/]+/card|card-changes/[^/]+/accept)/$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[[operations]]
include-path-regex = "^/api/v1/memories/[^/]+/$"
include-method = "PATCH"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[[operations]]
include-path-regex = "^/api/v1/conversations/[^/]+/files/$"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[[operations]]
include-path-regex = "^/api/v1/(usage|memories)/$"
include-method = "GET"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "429"]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fresh_database(url: str) -> None:
    import psycopg

    name = urlparse(url).path.lstrip("/")
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def manage(env: dict[str, str], *args: str) -> str:
    python = str(ROOT / ".venv" / "bin" / "python")
    done = subprocess.run([python, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


SEED = """
from accounts.models import User
from conversations.services import conversation_create
from memory.services.notes import teacher_note_create
from rest_framework.authtoken.models import Token
import json
teacher = User.objects.get(username="teacher")
tokens = {}
for name in ("alice", "teacher", "bob"):
    tokens[name] = Token.objects.get_or_create(user=User.objects.get(username=name))[0].key
alice = User.objects.get(username="alice")
conversation = conversation_create(user=alice, subject="Fractions")
note = teacher_note_create(teacher=teacher, student_id=alice.pk, title="Prefers drawings before symbols in fractions",
                    content="Use fraction bars first.")
teacher_note_create(teacher=teacher, student_id=alice.pk, title="Loses focus after long paragraphs of text",
                    content="Keep it short.", visibility="teacher_only")
ids = {"conversation_id": conversation.pk, "memory_id": note.pk, "student_id": alice.pk}
print(json.dumps({"tokens": tokens, "ids": ids}))
"""


def wait_until_up(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped:\n{log.read_text()}")
        try:
            urllib.request.urlopen(f"{base}/api/schema/", timeout=2)
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    raise SystemExit(f"the server did not start:\n{log.read_text()}")


def run_schemathesis(
    base: str, token: str, examples: int, report: Path, seed: int, config: Path, operations: list[str]
) -> tuple[int, int, int]:
    """(requests sent, failures, exit code) of one run, over `operations` (schemathesis filter
    options)."""
    binary = str(ROOT / ".venv" / "bin" / "schemathesis")
    command = [
        binary,
        "--config-file",
        str(config),
        "run",
        f"{base}/api/schema/",
        *operations,
        "--header",
        f"Authorization: Token {token}",
        "--checks",
        CHECKS,
        "--max-examples",
        str(examples),
        "--seed",
        str(seed),
        "--workers",
        "2",
        "--phases",
        PHASES,
        "--suppress-health-check",
        "all",
        "--generation-database",
        "none",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        "--no-color",
    ]
    done = subprocess.run(command, cwd=report.parent, capture_output=True, text=True)
    failures_at = done.stdout.find("= FAILURES =")
    print(done.stdout[failures_at : failures_at + 20000] if failures_at >= 0 else done.stdout[-3000:])
    if done.returncode not in (0, 1):
        print(done.stderr[-3000:])
    requests, failures, errors = 0, 0, []
    for line in report.read_text().splitlines():
        event = json.loads(line)
        for kind, payload in event.items():
            if kind == "NonFatalError":
                errors.append(payload.get("value", {}))
            if kind == "ScenarioFinished":
                recorder = payload.get("recorder", {})
                for interactions in recorder.get("interactions", {}).values():
                    requests += 1 if interactions else 0
                failures += sum(
                    1
                    for checks in recorder.get("checks", {}).values()
                    for c in checks
                    if str(c.get("status")).lower() == "failure"
                )
    code = done.returncode
    if code == 1 and failures == 0 and _interpreter_bugs_only(errors):
        # CPython 3.11's ast raises this SystemError inside schemathesis's own process (the
        # client), on no request of ours: the operations are still fuzzed in the other phases.
        print(f"schemathesis: {len(errors)} runtime errors of the fuzzer's interpreter, not the API: {errors[0]}")
        code = 0
    return requests, failures, code


def _interpreter_bug(error: dict[str, str]) -> bool:
    return error.get("type") == "SystemError" and "AST constructor recursion depth mismatch" in error.get("message", "")


def _interpreter_bugs_only(errors: list[dict[str, str]]) -> bool:
    """Whether every runtime error is the fuzzer's interpreter's: its ast SystemError, or
    Hypothesis's FlakyFailure beside one (the case it replays after that error passes; a check
    that failed on a response would be counted in `failures`, which must be zero)."""
    return any(_interpreter_bug(e) for e in errors) and all(
        _interpreter_bug(e) or e.get("type") == "FlakyFailure" for e in errors
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=int(os.environ.get("FUZZ_EXAMPLES", "60")))
    parser.add_argument("--min-requests", type=int, default=int(os.environ.get("FUZZ_MIN_REQUESTS", "5000")))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", "1")))
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="tutor-fuzz-"))
    database = os.environ.get("FUZZ_DATABASE_URL", f"sqlite:///{var / 'fuzz.sqlite3'}")
    if database.startswith("postgres"):
        fresh_database(database)
    llm = ScriptedLLM().start()
    port = free_port()
    env = {
        k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL", "CACHE_URL", "DATABASE_URL")
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
            "DJANGO_DEBUG": "0",
            "ALLOW_DEMO_DATA": "1",
            "TUTOR_VAR_DIR": str(var),
            "DATABASE_URL": database,
            "LLM_BASE_URL": llm.base_url,
            "LLM_API_KEY": "fuzz",
            "LLM_MODEL": "scripted-tutor",
            "EMBEDDINGS_BACKEND": "none",
            "RUN_ADDR": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
            # The fuzzer's many failed logins, sends and memory writes would only test the throttles.
            "LOGIN_FAILURE_LIMIT": "0",
            "THROTTLE_SEND_RATE": "",
            "THROTTLE_MEMORY_WRITE_RATE": "",
            "LOGIN_ADDRESS_RATE": "",
            "VENV": str(ROOT / ".venv"),
        }
    )
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    seeded = json.loads(manage(env, "shell", "-c", SEED).strip().splitlines()[-1])
    tokens = seeded["tokens"]
    # Path parameters name the seeded rows, so that requests reach the handlers' logic (bodies
    # and queries are generated) instead of stopping at a 404; 404s are tested in the suite.
    config = var / "schemathesis.toml"
    config.write_text(
        GENERATION
        + "[parameters]\n"
        + "".join(f"{name} = {value}\n" for name, value in seeded["ids"].items())
        + OPERATIONS
    )
    log = var / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen([str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    total_requests, total_failures, worst = 0, 0, 0
    started = time.monotonic()
    try:
        wait_until_up(base, server, log)
        # Signing out revokes the token the run uses: every role's run leaves it out, and a last
        # run signs out with a token of its own.
        for role, operations in (
            ("alice", ["--exclude-operation-id", LOGOUT]),
            ("teacher", ["--exclude-operation-id", LOGOUT]),
            ("bob", ["--include-operation-id", LOGOUT]),
        ):
            report = var / f"{role}.ndjson"
            requests, failures, code = run_schemathesis(
                base, tokens[role], args.examples, report, args.seed, config, operations
            )
            print(f"schemathesis as {role}: {requests} requests, {failures} failures (exit {code})")
            total_requests += requests
            total_failures += failures
            worst = max(worst, code)
    finally:
        server.terminate()
        server.wait(30)
        llm.stop()
    errors = [line for line in log.read_text(errors="replace").splitlines() if "Traceback" in line or " ERROR " in line]
    seconds = time.monotonic() - started
    print(
        f"fuzz: {total_requests} requests in {seconds:.0f} s, {total_failures} failures, "
        f"{len(errors)} server errors logged (database {urlparse(database).scheme})"
    )
    ok = worst == 0 and total_failures == 0 and not errors and total_requests >= args.min_requests
    if total_requests < args.min_requests:
        print(f"fuzz: fewer than {args.min_requests} requests: raise --examples")
    if ok:
        shutil.rmtree(var, ignore_errors=True)
    else:
        print(f"fuzz: the server's log and the reports are in {var}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
