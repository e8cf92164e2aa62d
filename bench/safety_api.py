"""The safety line measured over the API, on the embedded default (no external service): the
blind sets' cases sent as students' messages to the production server, and the flags read back
as their teacher reads them.

    .venv/bin/python bench/safety_api.py [--set FILE ...] [--sample N [--seed S] | --smoke]
        [--concurrency N] [--web-concurrency N] [--compare]

What runs, as `make run` runs it with no model configured: the demo model (llm/demo_model.py)
on a free port, then the production server (scripts/serve.sh: uvicorn, WEB_CONCURRENCY worker
processes) on a fresh SQLite database and filesystem broker in a temporary TUTOR_VAR_DIR,
removed at the end. No Celery worker: nothing the measure reads is done by one. One setting
differs from the product's defaults: THROTTLE_SEND_RATE is off, as the students send far more
than 30 messages a minute.

The people: `manage.py seed_demo` makes the demo school, its class and its teacher; through the
API, the teacher (POST /auth/token/) makes `--concurrency` students of the school (POST
/users/), enrols them in the class, prints their sign-in cards (POST
/classrooms/{id}/sign-in-codes/), and each student signs in with their card (POST /auth/code/).

Each case (safety/corpus/blind/*.jsonl by default; `--set` other files): one student opens a new
conversation (POST /conversations/), sends the case's context messages, then its text (POST
/conversations/{id}/messages/, JSON), each waiting for the tutor's reply. The students send at
once, each one case at a time. Once every case is sent and the number of flags has stopped
moving, the teacher reads every flag (GET /safety/flags/) and each case's verdict is the flag on
its last message (source "message"): its severity and categories, nothing if no flag. The counts
are safety.evaluation's (`tally`): per category and severity, then the targets' figures per
language, as `bench/safety_eval.py --backend offline` prints them in-process.

`--sample N`: about N cases, stratified by kind, severity and language
(bench/safety_eval.stratified_sample). `--smoke` (CI, bench/smoke.sh): a sample of
SMOKE_CASES; its figures mean nothing. `--compare`: the same cases screened in this process
too, by the offline line as `bench/safety_eval.py` runs it, and how many verdicts differ (by
label, never a text). Exits 1 if a case could not be sent or, with risk cases among them, no
flag was read at all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import chat_turn, machine  # noqa: E402
from bench.load import free_port, stop_process  # noqa: E402
from bench.safety_eval import BLIND_SETS, stratified_sample  # noqa: E402

if TYPE_CHECKING:
    from safety.evaluation import Case, Outcome

PY = Path(sys.executable)
SMOKE_CASES = 30
DEFAULT_CONCURRENCY = 4
DEMO_PASSWORD = "demo-password"  # web/management/commands/seed_demo.py's demo accounts
DEMO_TEACHER = "teacher"
# Sending a message again with its client_message_id after a 502/503 marked retry_safe.
SEND_ATTEMPTS = 5
# The flags are recorded by the turn's screening task, which may end just after the reply:
# read their count until it holds still this long.
SETTLE_SECONDS = 2.0
SETTLE_TIMEOUT_SECONDS = 60.0
READY_TIMEOUT_SECONDS = 120.0
FLAGS_PAGE = 100


# --- The verdicts, from the flags (pure) ----------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """What the flag on one student message says: its severity and every category found."""

    severity: str
    categories: tuple[str, ...]


def found_by_message(flags: Iterable[Mapping[str, Any]]) -> dict[int, Found]:
    """The flags on students' messages (source "message"), by message id; a tutor reply's, a
    file's and a pattern's flags are left out (safety's recording keeps one flag per message and
    source)."""
    return {
        flag["message"]: Found(
            severity=flag["severity"], categories=tuple(sorted({*flag.get("categories", ()), flag["category"]}))
        )
        for flag in flags
        if flag.get("source") == "message" and flag.get("message") is not None
    }


def outcomes_of(cases: Sequence[Case], message_ids: Sequence[int], found: Mapping[int, Found]) -> list[Outcome]:
    """Each case's outcome: the flag on its last message (`message_ids`, in the cases' order),
    none if it has no flag. The rules that fired are not in the flags' list: `rules` is empty."""
    from safety.evaluation import Outcome

    outcomes = []
    for case, message_id in zip(cases, message_ids, strict=True):
        flag = found.get(message_id)
        outcomes.append(
            Outcome(
                case=case,
                severity=flag.severity if flag else None,
                categories=flag.categories if flag else (),
                rules=(),
            )
        )
    return outcomes


def differences(api: Sequence[Outcome], local: Sequence[Outcome]) -> Counter[str]:
    """The cases whose verdict over the API (severity and categories) differs from the one in
    this process, counted by "language label: api -> local" (the label: the case's severity, or
    its kind; a verdict: its severity and categories)."""

    def verdict(outcome: Outcome) -> str:
        return f"{outcome.severity or 'none'} [{', '.join(sorted(outcome.categories))}]"

    counts: Counter[str] = Counter()
    for a, b in zip(api, local, strict=True):
        if verdict(a) != verdict(b):
            counts[f"{a.case.language} {a.case.severity or a.case.kind}: {verdict(a)} -> {verdict(b)}"] += 1
    return counts


# --- The stack: the demo model, the database, the people, the server ------------------------------


def server_env(*, var: Path, port: int, model_port: int, web_concurrency: int) -> dict[str, str]:
    """The environment of every process of the run: `make run`'s with the demo model
    (scripts/run_dev.sh) on the embedded default in `var`, the send throttle off."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LLM_", "SAFETY_", "EMBEDDINGS_", "THROTTLE_", "CELERY_"))
        and k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tutor.settings.base",
        TUTOR_VAR_DIR=str(var),
        RUN_ADDR=f"127.0.0.1:{port}",
        WEB_CONCURRENCY=str(web_concurrency),
        VENV=str(PY.parent.parent),
        PYTHONUNBUFFERED="1",
        LLM_BASE_URL=f"http://127.0.0.1:{model_port}/v1",
        LLM_MODEL="demo",
        LLM_DEMO_MODEL="1",
        LLM_CONTEXT_WINDOW="8192",
        LLM_MAX_REPLY_TOKENS="400",
        EMBEDDINGS_BACKEND="none",
        THROTTLE_SEND_RATE="",
    )
    return env


def _manage(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([str(PY), "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"


def _wait_ready(base: str, server: subprocess.Popen[bytes], log: Path) -> None:
    import httpx2

    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited ({server.returncode}):\n{_tail(log)}")
        with contextlib.suppress(httpx2.HTTPError):
            if httpx2.get(f"{base}/health/ready", timeout=5, trust_env=False).status_code == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"the server did not answer within {READY_TIMEOUT_SECONDS:.0f} s:\n{_tail(log)}")


@contextlib.contextmanager
def served(web_concurrency: int) -> Iterator[tuple[str, Path]]:
    """The demo model and the production server on a fresh database: the server's base URL and
    its log. Everything started here is stopped, and the temporary directory removed, on exit."""
    var = Path(tempfile.mkdtemp(prefix="tutor-safety-api-"))
    port, model_port = free_port(), free_port()
    env = server_env(var=var, port=port, model_port=model_port, web_concurrency=web_concurrency)
    log = var / "server.log"
    started: list[subprocess.Popen[bytes]] = []
    try:
        with (var / "model.log").open("wb") as out:
            started.append(
                subprocess.Popen(
                    [str(PY), "-m", "llm.demo_model", "--port", str(model_port)],
                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )
            )  # fmt: skip
        _manage(env, "migrate", "--noinput", "-v", "0")
        _manage(env, "seed_demo")
        with log.open("wb") as out:
            server = subprocess.Popen(
                [str(ROOT / "scripts" / "serve.sh")],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        started.append(server)
        base = f"http://127.0.0.1:{port}"
        _wait_ready(base, server, log)
        yield base, log
    finally:
        for proc in reversed(started):
            stop_process(proc, grace=30)
        shutil.rmtree(var, ignore_errors=True)


class ApiError(RuntimeError):
    pass


def _checked(response: Any, *expected: int) -> Any:
    if response.status_code not in expected:
        raise ApiError(
            f"{response.request.method} {response.request.url.path}: {response.status_code} {response.text[:500]}"
        )
    return response.json() if response.content else None


def people(client: Any, base: str, count: int) -> tuple[str, list[str]]:
    """The demo teacher's token and `count` new students' tokens (see the module's docstring)."""
    teacher = _checked(
        client.post(f"{base}/api/v1/auth/token/", json={"username": DEMO_TEACHER, "password": DEMO_PASSWORD}), 200
    )["token"]
    auth = {"Authorization": f"Token {teacher}"}
    classroom = _checked(client.get(f"{base}/api/v1/classrooms/", headers=auth), 200)["results"][0]
    school = classroom["school"]
    stamp = uuid.uuid4().hex[:8]
    students = []
    for i in range(count):
        person = _checked(
            client.post(
                f"{base}/api/v1/users/",
                headers=auth,
                json={"role": "student", "given_name": "Bench", "family_name": f"Student {i}", "school": school,
                      "username": f"bench-{stamp}-{i}"},
            ),
            201,
        )  # fmt: skip
        _checked(
            client.post(
                f"{base}/api/v1/classrooms/{classroom['id']}/enrollments/",
                headers=auth,
                json={"user": person["id"], "role": "student"},
            ),
            201,
        )
        students.append(person["id"])
    cards = _checked(
        client.post(f"{base}/api/v1/classrooms/{classroom['id']}/sign-in-codes/", headers=auth, json={}), 201
    )
    code_of = {card["student"]["id"]: card["code"] for card in cards["results"]}
    tokens = [
        _checked(client.post(f"{base}/api/v1/auth/code/", json={"code": code_of[student]}), 200)["token"]
        for student in students
    ]
    return teacher, tokens


# --- Sending the cases ----------------------------------------------------------------------------


@dataclass
class Sent:
    """What the students sent: each case's last message id (0: not sent), every turn's time."""

    message_ids: list[int]
    turn_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _send(client: Any, base: str, auth: dict[str, str], conversation: int, text: str, sent: Sent) -> int:
    """One message, its reply waited for (retried as the API says is safe); its id."""
    body = {"content": text, "client_message_id": uuid.uuid4().hex}
    for attempt in range(1, SEND_ATTEMPTS + 1):
        started = time.perf_counter()
        response = await client.post(f"{base}/api/v1/conversations/{conversation}/messages/", headers=auth, json=body)
        if response.status_code == 201:
            sent.turn_ms.append((time.perf_counter() - started) * 1000)
            return int(response.json()["student_message"]["id"])
        retry = response.status_code in (502, 503) and response.json().get("error", {}).get("retry_safe")
        if not retry or attempt == SEND_ATTEMPTS:
            _checked(response, 201)
        await asyncio.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


async def _student(client: Any, base: str, token: str, queue: asyncio.Queue[tuple[int, Case]], sent: Sent) -> None:
    auth = {"Authorization": f"Token {token}"}
    while not queue.empty():
        index, case = queue.get_nowait()
        try:
            response = await client.post(f"{base}/api/v1/conversations/", headers=auth, json={"subject": "bench"})
            conversation = _checked(response, 201)["id"]
            for text in (*case.context, case.text):
                message_id = await _send(client, base, auth, conversation, text, sent)
            sent.message_ids[index] = message_id
        except ApiError as exc:
            sent.errors.append(f"case {index}: {exc}")


async def send_all(base: str, tokens: Sequence[str], cases: Sequence[Case]) -> Sent:
    """Every case sent, the students sending at once, each one case at a time."""
    import httpx2

    sent = Sent(message_ids=[0] * len(cases))
    queue: asyncio.Queue[tuple[int, Case]] = asyncio.Queue()
    for item in enumerate(cases):
        queue.put_nowait(item)
    limits = httpx2.Limits(max_connections=len(tokens), keepalive_expiry=4.0)
    async with httpx2.AsyncClient(limits=limits, timeout=120.0, trust_env=False) as client:
        await asyncio.gather(*(_student(client, base, token, queue, sent) for token in tokens))
    return sent


def flags_read(client: Any, base: str, teacher: str) -> list[dict[str, Any]]:
    """Every flag the teacher sees, once their number has held still SETTLE_SECONDS."""
    auth = {"Authorization": f"Token {teacher}"}
    url = f"{base}/api/v1/safety/flags/"

    def count() -> int:
        return int(_checked(client.get(url, headers=auth, params={"page_size": 1}), 200)["count"])

    deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
    last = count()
    while True:
        time.sleep(SETTLE_SECONDS)
        now = count()
        if now == last or time.monotonic() > deadline:
            break
        last = now
    flags: list[dict[str, Any]] = []
    page = 1
    while True:
        data = _checked(client.get(url, headers=auth, params={"page_size": FLAGS_PAGE, "page": page}), 200)
        flags += data["results"]
        if not data.get("next"):
            return flags
        page += 1


# --- The command ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--set", nargs="+", default=[str(p) for p in BLIND_SETS], help="labelled files (default: the blind sets)"
    )
    subset = parser.add_mutually_exclusive_group()
    subset.add_argument("--sample", type=int, help="about N cases, stratified by kind, severity and language")
    subset.add_argument("--smoke", action="store_true", help=f"CI: a sample of {SMOKE_CASES} cases")
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument(
        "--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="students sending at once (default %(default)s)"
    )
    parser.add_argument("--web-concurrency", type=int, default=2, help="the server's worker processes (default 2)")
    parser.add_argument("--compare", action="store_true", help="screen the same cases in-process too")
    args = parser.parse_args(argv)
    if args.concurrency < 1 or args.web_concurrency < 1 or (args.sample is not None and args.sample < 1):
        parser.error("--concurrency, --web-concurrency and --sample take a positive number")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from safety.evaluation import load_cases, tally

    cases = [c for path in args.set for c in load_cases(path)]
    subset = ""
    size = SMOKE_CASES if args.smoke else args.sample
    if size:
        cases = stratified_sample(cases, size, seed=args.seed)
        subset = f", stratified sample of {len(cases)} (seed {args.seed})"
    import httpx2

    load_before = machine.load()
    started = time.monotonic()
    with served(args.web_concurrency) as (base, log), httpx2.Client(timeout=120.0, trust_env=False) as client:
        teacher, tokens = people(client, base, args.concurrency)
        sending = time.monotonic()
        sent = asyncio.run(send_all(base, tokens, cases))
        sent_seconds = time.monotonic() - sending
        flags = flags_read(client, base, teacher)
        if sent.errors:
            print(f"The server's log:\n{_tail(log)}", file=sys.stderr)
    load_after = machine.load()
    found = found_by_message(flags)
    report = tally(outcomes_of(cases, sent.message_ids, found))
    turns = len(sent.turn_ms)

    print(f"# Screening over the API: {', '.join(Path(p).name for p in args.set)}{subset}")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine.cpu_model()}, {machine.cores()} cores, "
        f"{machine.ram_gb()} GB, load {load_before} before, {load_after} after"
    )
    print(
        f"- scripts/serve.sh (WEB_CONCURRENCY {args.web_concurrency}) on SQLite, the demo model, "
        f"the offline line as configured by default (no SAFETY_* set), THROTTLE_SEND_RATE off"
    )
    print(
        f"- {len(cases)} cases, {turns} turns by {args.concurrency} students in {sent_seconds:.0f} s "
        f"(turn p50 {statistics.median(sent.turn_ms):.0f} ms, p90 {chat_turn._p90(sent.turn_ms):.0f} ms); "
        f"{len(flags)} flags read, {len(found)} on students' messages; {time.monotonic() - started:.0f} s in all"
        if turns
        else f"- {len(cases)} cases, no turn completed"
    )
    print()
    print(report.markdown())
    print()
    print(report.targets_markdown())
    if args.compare:
        print()
        print(compared(report.outcomes, cases))
    failed = list(sent.errors)
    if report.risks and not found:
        failed.append("no flag on any student's message was read over the API")
    for error in failed:
        print(f"FAILED: {error}", file=sys.stderr)
    return 1 if failed else 0


def compared(api: Sequence[Outcome], cases: Sequence[Case]) -> str:
    """How the verdicts over the API compare with the offline line's in this process."""
    from bench.safety_eval import screen_function, settings_only
    from safety.evaluation import evaluate

    for name in [k for k in os.environ if k.startswith("SAFETY_")]:
        del os.environ[name]  # the defaults, as on the server (server_env)
    settings_only()
    local = evaluate(screen_function(["offline"]), cases).outcomes
    diff = differences(api, local)
    lines = [
        f"In-process (bench/safety_eval.py --backend offline) on the same cases: "
        f"{len(cases) - sum(diff.values())}/{len(cases)} with the same verdict (severity and categories)"
    ]
    lines += [f"- {count} x {what}" for what, count in diff.most_common()]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
