"""Time to first token of a chat turn with and without screening (safety/), and the offline
line's own cost per message.

The turn. On PostgreSQL, with the scripted model of the test suite (tests/llm_server.py) in this
process answering at once, each turn is the API's streamed turn (`conversations.turn.drive`,
what `Accept: text/event-stream` sends): the time is from the call that opens the turn to the
first `delta` event on its feed, as a client reading the stream would see it, and to `done`.
The cases, each on a conversation of its own, the same student message in every case of a
round:

- none: no guard registered (`conversations.screening.unregister()`);
- rules: the safety guard with the offline rules alone (SAFETY_LEARNED=False, SAFETY_BACKENDS
  empty);
- offline: the safety guard with the offline line as configured by default: the rules and the
  learned screen, which reads the student's previous messages (SAFETY_BACKENDS empty);
- moderation: SAFETY_BACKENDS=["moderation"] against the scripted server's /v1/moderations,
  answering at once, then after a delay below SAFETY_TURN_WAIT_SECONDS (the turn waits for it)
  and after one above it (the turn waits SAFETY_TURN_WAIT_SECONDS, no longer).

The reply is about 90 words, streamed word by word, so that the guard's checks while it streams
run as they would. The moderation endpoint is asked about the message and about the reply: the
reply's screening delays `done`, not the first token.

The run goes in rounds, each running one turn of every case in a rotated order, so that the
drift of a shared machine's load is spread over the cases; the ratios compare each case with
"none" measured in the same rounds. After each turn the bench waits for the work the turn left
in the background (the screening of the message, the guard's bookkeeping), untimed.

The rules. `safety.offline.screen` alone, in several passes, on every message of the
labelled set (safety/corpus/train/messages.jsonl) and on replies like the turns' (about 90 words: the
guard screens a reply's newest text while it streams, then the whole reply): microseconds per
text, p50 and p99.

The learned screen's memory. In a fresh process that imports the web process's application
(tutor.asgi, without its lifespan's warm-up), VmRSS before and after `safety.learned.warm_up()`
(the head and its embedders loaded, one message screened), and VmHWM (the peak) after it.

Each turn also reports the paired difference: the median over the rounds of the case's time
minus "none"'s in the same round, which the load's drift between rounds does not move.

Database: a throwaway `test_<name>` beside DATABASE_URL's database, dropped at the end (as
bench/chat_turn.py, whose helpers this uses).

Usage (from the repository root):

    DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_bench .venv/bin/python bench/screening.py
        [--rounds N] [--smoke] [--strict] [--output PATH]

Prints a table and writes bench/results/screening.json (git-ignored). See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import chat_turn  # noqa: E402
from bench.machine import load  # noqa: E402

RESULTS_PATH = ROOT / "bench" / "results" / "screening.json"
LABELLED_SET = ROOT / "safety" / "corpus" / "train" / "messages.jsonl"
DEFAULT_ROUNDS = 40
WARMUP_ROUNDS = 3
DEFAULT_PASSES = 50  # of the offline line over the labelled set
# --smoke: for CI, the benchmark runs end to end; its figures mean nothing.
SMOKE_ROUNDS = 2
SMOKE_WARMUP_ROUNDS = 1
SMOKE_PASSES = 1
# The student and each case's conversation.
MEMORIES = 100
MESSAGES = 20
REPLY_PARTS = 4  # tutor sentences groups in the scripted reply (about 90 words)
REPLY_SAMPLES = 100  # replies the offline line is timed on

# Targets: what the offline line adds to the time to first token, at p50; and what its learned
# screen adds to the rules alone.
OFFLINE_ADDED_MAX_MS = 50.0
LEARNED_ADDED_MAX_MS = 30.0
# A backend slower than SAFETY_TURN_WAIT_SECONDS adds at most that wait, and this margin (the
# noise of a shared machine).
WAIT_MARGIN_MS = 50.0


@dataclass(frozen=True)
class Case:
    """One way of screening the turn."""

    name: str
    guard: bool  # the safety guard registered
    backends: tuple[str, ...] = ()
    delay: float = 0.0  # seconds the moderation endpoint waits before answering
    learned: bool = True  # SAFETY_LEARNED


def cases(wait: float) -> list[Case]:
    """The cases, the moderation delays chosen around the turn's wait (`wait`, seconds)."""
    below, above = round(wait / 2, 3), round(wait + 0.2, 3)
    return [
        Case("none", guard=False),
        Case("rules", guard=True, learned=False),
        Case("offline", guard=True),
        Case("moderation", guard=True, backends=("moderation",)),
        Case(f"moderation +{below * 1000:.0f} ms", guard=True, backends=("moderation",), delay=below),
        Case(f"moderation +{above * 1000:.0f} ms", guard=True, backends=("moderation",), delay=above),
    ]


@dataclass
class Series:
    """A case's turns: seconds to the first delta and to `done`, moderation requests per turn."""

    case: Case
    conversation_id: int = 0
    first: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    moderation_calls: list[int] = field(default_factory=list)

    def paired_ms(self, base: Series) -> float:
        """The median over the rounds of this case's first delta minus `base`'s in the same
        round (ms): the drift of the load between rounds cancels out."""
        return round(statistics.median((a - b) * 1000 for a, b in zip(self.first, base.first, strict=True)), 3)

    def summary(self) -> dict[str, Any]:
        first = [s * 1000 for s in self.first]
        done = [s * 1000 for s in self.done]
        return {
            "turns": len(first),
            "first_delta_p50_ms": round(statistics.median(first), 3),
            "first_delta_p90_ms": round(chat_turn._p90(first), 3),
            "done_p50_ms": round(statistics.median(done), 3),
            "done_p90_ms": round(chat_turn._p90(done), 3),
            "moderation_calls_per_turn": sorted(set(self.moderation_calls)),
            "first_delta_samples_ms": [round(x, 3) for x in first],
        }


# --- The turn -----------------------------------------------------------------------------------


async def _settle() -> None:
    """Wait for what the turn left running on this loop (untimed)."""
    current = asyncio.current_task()
    pending = {t for t in asyncio.all_tasks() if t is not current}
    if pending:
        await asyncio.wait(pending, timeout=10)


def streamed_turn(*, student: Any, conversation_id: int, content: str) -> tuple[float, float]:
    """One streamed turn: seconds from opening it to its first `delta` event, and to `done`.
    Raises the turn's ApplicationError."""
    from asgiref.sync import async_to_sync

    from conversations.turn import drive

    async def turn() -> tuple[float, float]:
        started = time.perf_counter()
        feed = await drive.turn_open(
            user=student, conversation_id=conversation_id, content=content, client_message_id=uuid.uuid4().hex
        )
        first: float | None = None
        async for batch in feed.follow():
            if first is None and any(name == "delta" for name, _ in batch):
                first = time.perf_counter() - started
        done = time.perf_counter() - started
        if feed.error is not None:
            raise feed.error
        if first is None or feed.reply is None:
            raise RuntimeError(f"turn in conversation {conversation_id} streamed no reply")
        await _settle()
        return first, done

    return async_to_sync(turn)()


@contextmanager
def screening_as(case: Case, *, guard: Any, server: Any) -> Iterator[None]:
    """The guard and the settings of `case` while the block runs."""
    from django.test.utils import override_settings

    from conversations import screening

    overrides = override_settings(
        SAFETY_BACKENDS=list(case.backends),
        SAFETY_LEARNED=case.learned,
        SAFETY_MODERATION_BASE_URL=server.base_url,
        SAFETY_MODERATION_API_KEY="bench-key",
    )
    if case.guard:
        screening.register(guard)
    else:
        screening.unregister()
    overrides.enable()
    try:
        yield
    finally:
        overrides.disable()
        screening.register(guard)


def one_turn(series: Series, *, student: Any, content: str, reply: str, guard: Any, server: Any, timed: bool) -> None:
    """One turn of `series`' case; recorded if `timed`. Checks that the moderation endpoint was
    asked in the cases that use it, and only in those."""
    server.reset()
    server.script("chat", {"content": reply})
    if series.case.delay:
        # The message's request, then the reply's.
        server.script("moderations", {"delay": series.case.delay}, {"delay": series.case.delay})
    with screening_as(series.case, guard=guard, server=server):
        first, done = streamed_turn(student=student, conversation_id=series.conversation_id, content=content)
    calls = len(server.calls("moderations"))
    if bool(calls) != bool(series.case.backends):
        raise RuntimeError(f"case {series.case.name!r}: {calls} moderation requests in a turn")
    if timed:
        series.first.append(first)
        series.done.append(done)
        series.moderation_calls.append(calls)


def run_rounds(
    all_series: list[Series], *, student: Any, guard: Any, server: Any, rng: random.Random, warmup: int, rounds: int
) -> None:
    """`warmup` untimed rounds then `rounds` timed ones, each one turn per case, the order
    rotated every round."""
    for number in range(warmup + rounds):
        content = chat_turn.student_text(rng)
        reply = " ".join(chat_turn.tutor_text(rng) for _ in range(REPLY_PARTS))
        shift = number % len(all_series)
        for series in all_series[shift:] + all_series[:shift]:
            one_turn(
                series,
                student=student,
                content=content,
                reply=reply,
                guard=guard,
                server=server,
                timed=number >= warmup,
            )


# --- The offline line alone ---------------------------------------------------------------------


def labelled_messages() -> list[str]:
    return [json.loads(line)["text"] for line in LABELLED_SET.read_text().splitlines() if line.strip()]


def scripted_replies(rng: random.Random, count: int = REPLY_SAMPLES) -> list[str]:
    """Replies like those the scripted model streams in the turns."""
    return [" ".join(chat_turn.tutor_text(rng) for _ in range(REPLY_PARTS)) for _ in range(count)]


def offline_cost(texts: list[str], passes: int) -> dict[str, Any]:
    """`safety.offline.screen` on every text of `texts`, `passes` times after one untimed pass:
    microseconds per text, p50 / p99 / mean / max."""
    from safety import offline

    for text in texts:
        offline.screen(text)
    micros: list[float] = []
    for _ in range(passes):
        for text in texts:
            started = time.perf_counter_ns()
            offline.screen(text)
            micros.append((time.perf_counter_ns() - started) / 1000)
    ordered = sorted(micros)
    return {
        "texts": len(texts),
        "passes": passes,
        "chars_mean": round(statistics.fmean(len(t) for t in texts), 1),
        "p50_us": round(statistics.median(ordered), 2),
        "p99_us": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
        "mean_us": round(statistics.fmean(ordered), 2),
        "max_us": round(ordered[-1], 2),
    }


# --- The learned screen's memory ----------------------------------------------------------------

MEMORY_CODE = """
import json, os
import django
django.setup()
import tutor.asgi  # what the web process imports, its lifespan's warm-up aside
from bench.machine import process_mb
from safety import learned
before = process_mb(os.getpid())
learned.warm_up()
print(json.dumps({"before": before, "after": process_mb(os.getpid())}))
"""


def learned_memory() -> dict[str, Any]:
    """VmRSS (MB) of a fresh process with the web application imported, before and after the
    learned screen's warm-up, and its peak after (`{"before": {"rss", "peak"}, "after": ...}`).
    The local embedder stays off (EMBEDDINGS_BACKEND=none, as under `make run`)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
        "EMBEDDINGS_BACKEND": "none",
        "SAFETY_LEARNED": "true",
    }
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_CODE], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"the memory measure failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- Report -------------------------------------------------------------------------------------


def evaluate(all_series: list[Series], wait: float) -> list[dict[str, Any]]:
    """The targets (the offline line adds at most OFFLINE_ADDED_MAX_MS at p50, its learned
    screen at most LEARNED_ADDED_MAX_MS to the rules alone) and the bound (a slower backend adds
    at most SAFETY_TURN_WAIT_SECONDS)."""
    base = all_series[0].summary()["first_delta_p50_ms"]
    by_name = {s.case.name: s.summary()["first_delta_p50_ms"] for s in all_series}
    offline_added = by_name["offline"] - base
    learned_added = by_name["offline"] - by_name["rules"]
    series = {s.case.name: s for s in all_series}
    learned_paired = series["offline"].paired_ms(series["rules"])
    slowest = max((s for s in all_series if s.case.delay), key=lambda s: s.case.delay)
    slow_added = by_name[slowest.case.name] - base
    bound = wait * 1000 + WAIT_MARGIN_MS
    return [
        {
            "target": f"the offline line adds <= {OFFLINE_ADDED_MAX_MS:g} ms to the first token at p50",
            "pass": offline_added <= OFFLINE_ADDED_MAX_MS,
            "detail": f"{offline_added:+.2f} ms ({by_name['offline']:.2f} vs {base:.2f} ms)",
        },
        {
            "target": f"the learned screen adds <= {LEARNED_ADDED_MAX_MS:g} ms to the rules alone, first token at p50",
            "pass": learned_added <= LEARNED_ADDED_MAX_MS,
            "detail": (
                f"{learned_added:+.2f} ms ({by_name['offline']:.2f} vs {by_name['rules']:.2f} ms), "
                f"paired {learned_paired:+.2f} ms"
            ),
        },
        {
            "target": (
                f"a backend answering after {slowest.case.delay * 1000:.0f} ms adds at most "
                f"SAFETY_TURN_WAIT_SECONDS ({wait * 1000:.0f} ms, +{WAIT_MARGIN_MS:g} ms of noise)"
            ),
            "pass": slow_added <= bound,
            "detail": f"{slow_added:+.2f} ms",
        },
    ]


def print_report(
    machine: dict[str, Any],
    config: dict[str, Any],
    all_series: list[Series],
    offline: dict[str, dict[str, Any]],
    memory: dict[str, Any],
    targets: list[dict[str, Any]],
) -> None:
    print()
    print(
        f"Machine: {machine['nproc']} CPU ({machine['cpu_model']}), Python {machine['python']}, "
        f"PostgreSQL {machine['postgresql']}; load {config['load_before']} before, {config['load_after']} after"
    )
    print(
        f"Run: {config['rounds']} rounds after {config['warmup_rounds']} warm-up, one streamed turn per case each; "
        f"SAFETY_TURN_WAIT_SECONDS {config['turn_wait_seconds']:g} s; scripted model in-process"
    )
    print()
    header = (
        f"{'case':<20} | {'first delta p50':>15} {'p90':>7} {'+p50':>7} {'paired':>7} {'/none':>6} | "
        f"{'done p50':>8} {'p90':>7} | {'moderation calls':>16}"
    )
    print(header)
    print("-" * len(header))
    base = all_series[0].summary()
    for series in all_series:
        s = series.summary()
        calls = "/".join(str(c) for c in s["moderation_calls_per_turn"])
        print(
            f"{series.case.name:<20} | {s['first_delta_p50_ms']:>15.2f} {s['first_delta_p90_ms']:>7.2f} "
            f"{s['first_delta_p50_ms'] - base['first_delta_p50_ms']:>+7.2f} "
            f"{series.paired_ms(all_series[0]):>+7.2f} "
            f"{s['first_delta_p50_ms'] / base['first_delta_p50_ms']:>5.2f}x | "
            f"{s['done_p50_ms']:>8.2f} {s['done_p90_ms']:>7.2f} | {calls:>16}"
        )
    print("Times in ms from opening the turn: to its first `delta` event, and to `done`. +p50 and /none compare")
    print("with the turn without a guard (none) measured in the same rounds; paired = the median over the rounds")
    print("of (this case - none) in the same round.")
    print()
    print("The rules alone (safety.offline.screen), per text:")
    for name, o in offline.items():
        print(
            f"  {name:<9} {o['texts']:>4} texts of {o['chars_mean']:>4.0f} characters on average, "
            f"x {o['passes']} passes: "
            f"p50 {o['p50_us']:.1f} us, p99 {o['p99_us']:.1f} us, mean {o['mean_us']:.1f} us, max {o['max_us']:.1f} us"
        )
    print()
    print(
        f"The learned screen's memory, in a fresh process with the web application imported: VmRSS "
        f"{memory['before']['rss']:.0f} MB before safety.learned.warm_up(), {memory['after']['rss']:.0f} MB after "
        f"(+{memory['after']['rss'] - memory['before']['rss']:.0f} MB), peak {memory['after']['peak']:.0f} MB"
    )
    print()
    for t in targets:
        print(f"[{'PASS' if t['pass'] else 'FAIL'}] {t['target']}: {t['detail']}")


# --- Main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=None, help=f"measured rounds (default {DEFAULT_ROUNDS})")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"the smallest run, for CI: {SMOKE_ROUNDS} rounds, one pass of the offline line",
    )
    parser.add_argument("--passes", type=int, default=None, help=f"offline line passes (default {DEFAULT_PASSES})")
    parser.add_argument("--seed", type=int, default=20261203, help="random seed for the generated text")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target fails")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    args = parser.parse_args(argv)
    rounds = args.rounds or (SMOKE_ROUNDS if args.smoke else DEFAULT_ROUNDS)
    warmup = SMOKE_WARMUP_ROUNDS if args.smoke else WARMUP_ROUNDS
    passes = args.passes or (SMOKE_PASSES if args.smoke else DEFAULT_PASSES)

    chat_turn.django_setup()
    from django.conf import settings

    from conversations import screening

    guard = screening.registered()
    if guard is None:
        sys.exit("no screening guard is registered: is `safety` in INSTALLED_APPS?")
    wait = float(settings.SAFETY_TURN_WAIT_SECONDS)
    rng = random.Random(args.seed)
    started = time.monotonic()
    load_before = load()
    offline = {
        "labelled": offline_cost(labelled_messages(), passes),
        "replies": offline_cost(scripted_replies(random.Random(args.seed)), passes),
    }
    memory = learned_memory()
    from safety import learned

    learned.warm_up()  # as the web process does at start-up (tutor.startup)
    with chat_turn.throwaway_database() as database, chat_turn.scripted_model() as server:
        machine = chat_turn.machine_info()
        from django.db import connection

        teacher, classroom = chat_turn.seed_people()
        student = chat_turn.seed_student(count=MEMORIES, teacher=teacher, classroom=classroom, rng=rng)
        all_series = [Series(case) for case in cases(wait)]
        for series in all_series:
            series.conversation_id, _ = chat_turn.seed_conversation(
                student=student, count=MESSAGES, rng=rng, label=series.case.name
            )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        print(
            f"Seeded {database}; {warmup} warm-up then {rounds} rounds of {len(all_series)} streamed turns ...",
            flush=True,
        )
        run_rounds(all_series, student=student, guard=guard, server=server, rng=rng, warmup=warmup, rounds=rounds)
    config = {
        "rounds": rounds,
        "warmup_rounds": warmup,
        "seed": args.seed,
        "database": database,
        "memories": MEMORIES,
        "messages": MESSAGES,
        "turn_wait_seconds": wait,
        "backend_timeout_seconds": float(settings.SAFETY_BACKEND_TIMEOUT_SECONDS),
        "load_before": load_before,
        "load_after": load(),
        "runtime_seconds": round(time.monotonic() - started, 1),
    }
    targets = evaluate(all_series, wait)
    print_report(machine, config, all_series, offline, memory, targets)

    base = all_series[0].summary()["first_delta_p50_ms"]
    results = {
        "benchmark": "screening",
        "machine": machine,
        "config": config,
        "cases": [
            {
                "name": s.case.name,
                "guard": s.case.guard,
                "backends": list(s.case.backends),
                "learned": s.case.learned,
                "moderation_delay_ms": round(s.case.delay * 1000),
                **s.summary(),
                "first_delta_over_none": round(s.summary()["first_delta_p50_ms"] / base, 3),
                "first_delta_paired_ms": s.paired_ms(all_series[0]),
            }
            for s in all_series
        ],
        "offline_line": offline,
        "learned_memory_mb": memory,
        "targets": targets,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nResults written to {args.output} (total {config['runtime_seconds']:.0f}s).")
    return 1 if args.strict and not all(t["pass"] for t in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
