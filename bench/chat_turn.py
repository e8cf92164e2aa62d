"""Server-side cost of one chat turn, on PostgreSQL, with a model that answers at once.

For every combination of a student with 10 / 1,000 / 10,000 memories and a conversation of
10 / 1,000 / 10,000 messages, this times `conversations.services.message_send(...)` (the whole
turn: lock, store the student's message, memories, context, model call over HTTP, store the
reply) and counts its database queries. The model is the scripted OpenAI-compatible server of
the test suite (tests/llm_server.py), started in this process, answering every call at once
(with TCP_NODELAY on its sockets, see `scripted_model`), so what is left is the server's own
cost. The time is also split into time in database calls and time in `llm.gateway.complete`
(the openai SDK building the request, HTTP, and the scripted model's own parsing).

Data. Rows are bulk-created with realistic sizes: memories of 60-120 words, messages of about
20-40 tokens (student and tutor alternating), each with its `token_count` stored as the product
stores it, and the conversation's `message_count` / `history_tokens` running totals set to match
(the baseline re-counts every turn and checks they agree). 10,000 messages (~300,000 tokens)
cross COMPRESSION_THRESHOLD_TOKENS (150,000); 1,000 (~30,000) do not. The first warm-up turn of
a 10,000-message conversation runs the compression and leaves a ContextCheckpoint; the measured
turns after it are the steady state of "a compressed conversation of 10,000 messages". Each
measured turn adds its two messages to the conversation, as it would in real use.

Baseline. A naive implementation decides whether to compress by loading every message of the
conversation and counting its tokens, on every turn. The baseline is exactly that added to the
real turn: `_context_build` is wrapped (monkeypatched, only during baseline turns) to first load
the content of all the conversation's messages up to the student's new one and run
`llm.tokens.count_tokens` on each, then build the context as the product does (the decision is
the same, the naive one is only slower). It is a conservative baseline: a naive implementation
would also send or re-summarise more, which is not counted. The baseline runs on its own
conversation of the same size and message sizes.

Measurement. After the warm-up, the run goes in rounds: each round runs one product turn and
one baseline turn of every case, rotating the order. On a shared machine the load drifts; rounds
spread the drift over every case instead of penalising whichever case ran during it, so the
ratios the targets compare stay meaningful even when absolute times are noisy.

Database. The tables are created by `django.test.utils.setup_databases` in a throwaway database
(`test_<name of DATABASE_URL's database>`), which is dropped at the end: the database named in
DATABASE_URL itself is never written to. Tables are ANALYZEd after seeding, as autovacuum would
have done on a real database of that size.

Usage (from the repository root):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tutor_bench make bench
    DATABASE_URL=... .venv/bin/python bench/chat_turn.py [--quick] [--turns N] [--profile] [--strict]

Prints a table and writes bench/results/chat_turn.json (git-ignored). See bench/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import logging
import os
import platform
import pstats
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS_PATH = ROOT / "bench" / "results" / "chat_turn.json"
MEMORY_COUNTS = (10, 1_000, 10_000)
MESSAGE_COUNTS = (10, 1_000, 10_000)
DEFAULT_TURNS = 30
QUICK_TURNS = 8
WARMUP_TURNS = 2  # the first one compresses the 10,000-message conversations

# Targets from the issue.
MEMORY_RATIO_MAX = 1.5  # 10,000 memories cost at most 1.5x what 10 cost
COMPRESSED_RATIO_MAX = 1.0  # a compressed 10,000-message turn costs no more than a 1,000 one
BASELINE_RATIO_MIN = 10.0  # at least 10x cheaper than re-tokenising, at 10,000 messages


# --- Realistic text -----------------------------------------------------------------------------

STUDENT_SENTENCES = [
    "I don't get why we flip the second fraction when we divide.",
    "Is {a}/{b} plus {c}/{d} the same as {s}/{t}?",
    "Can you check my answer for question {q} of the worksheet?",
    "I think x equals {a} but I'm not sure about the sign.",
    "Why does the denominator stay the same when I add {a}/{b} and {c}/{b}?",
    "Our teacher said we have to show every step on Friday's test.",
    "Okay, so first I multiply both sides by {a}, right?",
    "What's the difference between a chloroplast and a mitochondrion again?",
    "I got {s} for the area of a triangle with base {a} and height {b}.",
    "Can we do another one like that but a bit harder?",
    "How do I know which verbs take être in the passé composé?",
    "Sorry, I meant {a} times {b}, not {a} plus {b}.",
    "Wait, why is the slope negative here?",
    "So the equation for photosynthesis has carbon dioxide and water on the left?",
    "I keep mixing up the numerator and the denominator.",
    "That makes sense now, thanks. What should I practise next?",
]
TUTOR_SENTENCES = [
    "Good question! Dividing by a fraction is the same as multiplying by its reciprocal.",
    "Let's check it together: what is the common denominator of {b} and {d}?",
    "Almost: you found {s}, but look again at the sign in the second line.",
    "Nice work, that's correct. Can you explain why it works?",
    "Try this one: solve {a}x + {b} = {s} and tell me each step.",
    "Remember, the area of a triangle is half of the base times the height.",
    "Think of the denominator as the number of equal parts in the whole.",
    "Here's a hint: start by isolating the term with x on one side.",
    "Exactly! Plants use light energy to turn carbon dioxide and water into glucose.",
    "Verbs of movement like aller, venir and partir take être in the passé composé.",
    "Let's slow down and look at question {q} one line at a time.",
    "You're getting faster at these. Shall we try a word problem next?",
    "Not quite. What happens to {a}/{b} if you multiply the top and bottom by {c}?",
    "A negative slope means the line goes down as x increases.",
]
MEMORY_SENTENCES = [
    "The student often confuses the numerator and the denominator when adding fractions.",
    "They are confident with multiplication tables up to {a} but hesitate beyond that.",
    "Worked through {q} exercises on linear equations and got most of them right.",
    "Prefers short hints before seeing a full worked solution.",
    "Has a test on {topic} next week and wants extra practice beforehand.",
    "Responds well to encouragement and to checking understanding with quick questions.",
    "Struggled with negative numbers on both sides of an equation in session {q}.",
    "Understands photosynthesis conceptually but mixes up the inputs and outputs.",
    "In French, still unsure which verbs take être in the passé composé.",
    "Reads word problems too fast and misses key numbers; remind them to underline data.",
    "Strong in geometry: computed areas and perimeters without help.",
    "Asked to review common denominators before moving on to mixed numbers.",
    "The teacher notes that homework is often incomplete on Mondays.",
    "Likes examples about football and cooking; use them to explain ratios.",
]
MEMORY_TITLES = [
    "Confuses numerator and denominator",
    "Test on {topic} next week",
    "Prefers hints before full solutions",
    "Strong in geometry, weaker in algebra",
    "Passé composé with être still unclear",
    "Reads word problems too fast",
    "Progress on linear equations",
    "Needs practice with negative numbers",
]
TOPICS = ["fractions", "linear equations", "photosynthesis", "the passé composé", "ratios", "area and perimeter"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        a=rng.randint(2, 12),
        b=rng.randint(2, 12),
        c=rng.randint(2, 12),
        d=rng.randint(2, 12),
        s=rng.randint(10, 99),
        t=rng.randint(10, 99),
        q=rng.randint(1, 20),
        topic=rng.choice(TOPICS),
    )


def _text(rng: random.Random, pool: list[str], min_words: int, max_words: int) -> str:
    target = rng.randint(min_words, max_words)
    words: list[str] = []
    while len(words) < target:
        words += _fill(rng.choice(pool), rng).split()
    text = " ".join(words[:target])
    return text if text.endswith((".", "?", "!")) else text + "."


def student_text(rng: random.Random) -> str:
    return _text(rng, STUDENT_SENTENCES, 15, 27)


def tutor_text(rng: random.Random) -> str:
    return _text(rng, TUTOR_SENTENCES, 16, 29)


# --- Django -------------------------------------------------------------------------------------


def django_setup() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        sys.exit(
            "bench/chat_turn.py measures on PostgreSQL: set DATABASE_URL to a PostgreSQL URL, e.g.\n"
            "  DATABASE_URL=postgres://postgres@127.0.0.1:5432/tutor_bench make bench\n"
            "Nothing is written to that database: the bench creates and drops test_<name> beside it."
            + (f"\n(DATABASE_URL is currently {url!r})" if url else "\n(DATABASE_URL is not set)")
        )
    os.environ["DJANGO_SETTINGS_MODULE"] = "tutor.settings.base"
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit(f"DATABASE_URL selects {connection.vendor}, not PostgreSQL; the bench needs PostgreSQL.")
    # The SDK's HTTP client logs every request at INFO.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextmanager
def throwaway_database() -> Iterator[str]:
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    old_config = setup_databases(verbosity=0, interactive=False, serialized_aliases=set())
    try:
        yield str(connection.settings_dict["NAME"])
    finally:
        teardown_databases(old_config, verbosity=0)


@contextmanager
def scripted_model() -> Iterator[Any]:
    from django.conf import settings
    from django.test.utils import override_settings

    from tests.llm_server import ScriptedLLM

    server = ScriptedLLM()
    # http.server sends the response headers and body in two writes; with Nagle's algorithm on,
    # the body then waits for the client's delayed ACK, ~40 ms on Linux, on every model call.
    # A real model endpoint does not add that, and "answering at once" should not either.
    handler: Any = server.server.RequestHandlerClass
    handler.disable_nagle_algorithm = True
    server.start()
    overrides = override_settings(
        DEBUG=False,
        LLM_BASE_URL=server.base_url,
        LLM_SUMMARY_BASE_URL=server.base_url,
        LLM_API_KEY="bench-key",
        LLM_SUMMARY_API_KEY="bench-key",
        LLM_MODEL="scripted-tutor",
        LLM_SUMMARY_MODEL="scripted-summary",
        LLM_TIMEOUT_SECONDS=30.0,
        LLM_SUMMARY_TIMEOUT_SECONDS=60.0,
        # Recall runs in every turn: lexical (database full-text) here. The query embedding of
        # semantic recall (a local MiniLM or an embeddings endpoint) is measured apart, in
        # bench/recall_latency.py, and is the same cost whatever the history or memory count.
        EMBEDDINGS_BACKEND=os.environ.get("BENCH_EMBEDDINGS_BACKEND", "none"),
        # BENCH_RELEVANT_COUNT=0: the 10 latest memories only, without recall (`--no-recall`).
        MEMORY_RELEVANT_COUNT=int(os.environ.get("BENCH_RELEVANT_COUNT", settings.MEMORY_RELEVANT_COUNT)),
    )
    overrides.enable()
    try:
        yield server
    finally:
        overrides.disable()
        server.stop()


def machine_info() -> dict[str, Any]:
    from django.db import connection

    from bench.machine import cores, cpu_model

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
    import django

    return {
        "nproc": cores(),
        "cpu_model": cpu_model(),
        "python": platform.python_version(),
        "postgresql": pg_version,
        "django": django.get_version(),
        "platform": platform.platform(),
    }


# --- Seeding ------------------------------------------------------------------------------------


@dataclass
class Series:
    seconds: list[float] = field(default_factory=list)
    queries: list[int] = field(default_factory=list)
    model_seconds: list[float] = field(default_factory=list)
    db_seconds: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ms = [s * 1000 for s in self.seconds]
        model = [s * 1000 for s in self.model_seconds]
        return {
            "turns": len(ms),
            "median_ms": round(statistics.median(ms), 3),
            "p90_ms": round(_p90(ms), 3),
            "mean_ms": round(statistics.fmean(ms), 3),
            "min_ms": round(min(ms), 3),
            "max_ms": round(max(ms), 3),
            "queries_per_turn": sorted(set(self.queries)),
            "model_call_median_ms": round(statistics.median(model), 3),
            "db_median_ms": round(statistics.median([s * 1000 for s in self.db_seconds]), 3),
            "samples_ms": [round(x, 3) for x in ms],
        }

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def _p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


@dataclass
class Cell:
    memories: int
    messages: int
    student: Any
    product_conversation_id: int
    baseline_conversation_id: int
    seeded_tokens: int = 0
    compressed: bool = False
    checkpoints_after_warmup: int = 0
    checkpoints_after_run: int = 0
    compression_calls_warmup: int = 0
    compression_calls_measured: int = 0
    product: Series = field(default_factory=Series)
    baseline: Series = field(default_factory=Series)


def seed_people() -> tuple[Any, Any]:
    from accounts.models import Classroom, User

    teacher = User(username="bench-teacher", role=User.Role.TEACHER)
    teacher.set_unusable_password()
    teacher.save()
    classroom = Classroom.objects.create(name="Bench 5A", teacher=teacher)
    return teacher, classroom


def seed_student(*, count: int, teacher: Any, classroom: Any, rng: random.Random) -> Any:
    """A student with `count` active memories: tutor notes from a past conversation, teacher notes."""
    from django.utils import timezone

    from accounts.models import Enrollment, User
    from conversations.models import Conversation
    from llm.tokens import count_tokens
    from memory.models import AIMemory

    student = User(username=f"bench-student-{count}", role=User.Role.STUDENT)
    student.set_unusable_password()
    student.save()
    Enrollment.objects.create(classroom=classroom, student=student)
    now = timezone.now()
    # Tutor notes come from past conversations, at most SAVE_MEMORY_MAX_PER_CONVERSATION (5) each,
    # as the product enforces: the "same conversation" relation of recall links a handful of
    # memories, not thousands.
    Conversation.objects.bulk_create(
        Conversation(
            student=student, subject=f"Earlier session {i}", status=Conversation.Status.ENDED,
            last_activity_at=now - timedelta(days=1), ended_at=now - timedelta(days=1),
        )
        for i in range(count // 5 + 1)
    )
    pasts = list(Conversation.objects.filter(student=student).order_by("pk"))
    start = now - timedelta(days=365)
    step = timedelta(days=364) / count
    rows = []
    for i in range(count):
        title = _fill(rng.choice(MEMORY_TITLES), rng)
        content = _text(rng, MEMORY_SENTENCES, 60, 120)
        teacher_note = rng.random() < 0.2
        rows.append(
            AIMemory(
                student=student,
                kind=AIMemory.Kind.TEACHER_NOTE if teacher_note else AIMemory.Kind.NOTE,
                source=AIMemory.Source.TEACHER if teacher_note else AIMemory.Source.SAVE_MEMORY_TOOL,
                author=teacher if teacher_note else None,
                source_conversation=None if teacher_note else pasts[i // 5],
                title=title,
                content=content,
                token_count=count_tokens(f"{title}\n{content}"),
                created_at=start + step * i,
            )
        )
    AIMemory.objects.bulk_create(rows, batch_size=2000)
    # The full-text index is written by the memory services; bulk_create bypasses them, so the
    # bench indexes through the same code path, or lexical recall would search an empty index.
    from memory import fts

    created = AIMemory.objects.filter(student=student).values_list("pk", "title", "content")
    batch: list[Any] = []
    for pk, title, content in created.iterator(chunk_size=2000):
        batch.append(fts.IndexRow(memory_id=pk, student_id=student.pk, text=fts.memory_text(title, content),
                                  language=student.language))
        if len(batch) == 2000:
            fts.memory_index(batch)
            batch = []
    fts.memory_index(batch)
    return student


def seed_conversation(*, student: Any, count: int, rng: random.Random, label: str) -> tuple[int, int]:
    """A conversation of `count` messages with consistent running totals. Returns (id, tokens)."""
    from django.db.models import OuterRef, Subquery
    from django.utils import timezone

    from conversations.models import Conversation, Message
    from llm.tokens import count_tokens

    conversation = Conversation.objects.create(
        student=student, subject=f"Bench {label} ({count} messages)", last_activity_at=timezone.now()
    )
    rows = []
    total = 0
    for seq in range(1, count + 1):
        is_student = seq % 2 == 1
        content = student_text(rng) if is_student else tutor_text(rng)
        tokens = count_tokens(content)
        total += tokens
        rows.append(
            Message(
                conversation=conversation,
                seq=seq,
                role=Message.Role.STUDENT if is_student else Message.Role.TUTOR,
                content=content,
                client_message_id=f"seed-{seq}" if is_student else None,
                token_count=tokens,
                prompt_tokens=0 if is_student else min(total + 900, 150_000),
                completion_tokens=0 if is_student else tokens,
                model="" if is_student else "scripted-tutor",
            )
        )
    Message.objects.bulk_create(rows, batch_size=2000)
    previous = Message.objects.filter(conversation=conversation, seq=OuterRef("seq") - 1).values("pk")[:1]
    Message.objects.filter(conversation=conversation, role=Message.Role.TUTOR).update(reply_to_id=Subquery(previous))
    Conversation.objects.filter(pk=conversation.pk).update(message_count=count, history_tokens=total)
    return conversation.pk, total


def seed(rng: random.Random) -> list[Cell]:
    from django.db import connection

    teacher, classroom = seed_people()
    cells = []
    for m in MEMORY_COUNTS:
        student = seed_student(count=m, teacher=teacher, classroom=classroom, rng=rng)
        for n in MESSAGE_COUNTS:
            product_id, tokens = seed_conversation(student=student, count=n, rng=rng, label="product")
            baseline_id, _ = seed_conversation(student=student, count=n, rng=rng, label="baseline")
            cells.append(Cell(m, n, student, product_id, baseline_id, seeded_tokens=tokens))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return cells


# --- Turns --------------------------------------------------------------------------------------

_model_seconds: list[float] = []
_naive_mismatches: list[tuple[int, int, int]] = []


def install_model_timer() -> Callable[[], None]:
    """Time every model call (the HTTP round trip to the scripted model): the chat turn's streamed
    `gateway.stream` and the compression's `gateway.complete`."""
    from llm import gateway

    original_complete, original_stream = gateway.complete, gateway.stream

    def timed(**kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original_complete(**kwargs)
        finally:
            _model_seconds.append(time.perf_counter() - started)

    async def timed_stream(**kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original_stream(**kwargs)
        finally:
            _model_seconds.append(time.perf_counter() - started)

    gateway.complete = timed
    gateway.stream = timed_stream

    def uninstall() -> None:
        gateway.complete, gateway.stream = original_complete, original_stream

    return uninstall


@contextmanager
def naive_retokenising() -> Iterator[None]:
    """The baseline: re-read and re-tokenise the whole history on every turn, then build as usual."""
    from conversations import turns
    from conversations.models import Message
    from llm.tokens import count_tokens

    original = turns.context_build

    def naive_context_build(**kwargs: Any) -> Any:
        conversation, upto_seq = kwargs["conversation"], kwargs["upto_seq"]
        contents = Message.objects.filter(conversation_id=conversation.pk, seq__lte=upto_seq).values_list(
            "content", flat=True
        )
        history_tokens = sum(count_tokens(c) for c in contents)
        if history_tokens != conversation.history_tokens:
            _naive_mismatches.append((conversation.pk, history_tokens, conversation.history_tokens))
        # A naive implementation decides from this re-count (plus per-message overhead); the
        # product decides the same from its stored totals, so the rest of the turn is identical.
        return original(**kwargs)

    turns.context_build = naive_context_build
    try:
        yield
    finally:
        turns.context_build = original


def one_turn(*, student: Any, conversation_id: int, rng: random.Random, series: Series | None,
             content: str | None = None) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from conversations.services import message_send

    content = content or student_text(rng)
    client_id = f"bench-{uuid.uuid4().hex}"
    _model_seconds.clear()
    # CaptureQueriesContext reads connection.queries_log, a deque of at most 9,000 entries: once it
    # is full, it would capture nothing. Start every turn from an empty log.
    connection.queries_log.clear()
    db_seconds = [0.0]

    def db_timer(execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            db_seconds[0] += time.perf_counter() - started

    with CaptureQueriesContext(connection) as captured, connection.execute_wrapper(db_timer):
        started = time.perf_counter()
        result = message_send(
            user=student, conversation_id=conversation_id, content=content, client_message_id=client_id
        )
        elapsed = time.perf_counter() - started
    if not (result.created and result.reply.content):
        raise RuntimeError(f"turn in conversation {conversation_id} did not produce a reply")
    if series is not None:
        series.seconds.append(elapsed)
        series.queries.append(len(captured.captured_queries))
        series.model_seconds.append(sum(_model_seconds))
        series.db_seconds.append(db_seconds[0])


def checkpoints(conversation_id: int) -> int:
    from conversations.models import ContextCheckpoint

    return ContextCheckpoint.objects.filter(conversation_id=conversation_id).count()


def compression_calls(conversation_id: int) -> int:
    from llm.models import LLMUsage

    return LLMUsage.objects.filter(conversation_id=conversation_id, purpose=LLMUsage.Purpose.COMPRESSION).count()


def warm_up(cell: Cell, *, rng: random.Random) -> None:
    """Untimed turns; the first one compresses a conversation over the threshold."""
    for _ in range(WARMUP_TURNS):
        one_turn(student=cell.student, conversation_id=cell.product_conversation_id, rng=rng, series=None)
        with naive_retokenising():
            one_turn(student=cell.student, conversation_id=cell.baseline_conversation_id, rng=rng, series=None)
    cell.compression_calls_warmup = compression_calls(cell.product_conversation_id)
    cell.checkpoints_after_warmup = checkpoints(cell.product_conversation_id)
    cell.compressed = cell.checkpoints_after_warmup > 0


def measure(cells: list[Cell], *, server: Any, turns: int, rng: random.Random,
            profilers: dict[int, cProfile.Profile] | None) -> None:
    """`turns` rounds; each round runs one product and one baseline turn of every case.

    Rounds rather than one case after the other: on a shared machine the load drifts, and this
    spreads the drift over every case instead of penalising whichever ran during it. The order
    of the cases, and of product and baseline within a case, rotates from round to round.
    """
    gc.collect()
    gc.freeze()
    try:
        for i in range(turns):
            # One student message per round, sent in every case: the cases differ only by their
            # memories and history, not by what recall is asked (a message of stop words only
            # skips the full-text queries, one with rare words reaches more of them).
            text = student_text(rng)
            shift = i % len(cells)
            for cell in cells[shift:] + cells[:shift]:
                kinds = ("product", "baseline") if i % 2 == 0 else ("baseline", "product")
                for kind in kinds:
                    if kind == "baseline":
                        with naive_retokenising():
                            one_turn(student=cell.student, conversation_id=cell.baseline_conversation_id, rng=rng,
                                     series=cell.baseline, content=text)
                        continue
                    profiler = profilers.get(id(cell)) if profilers is not None else None
                    if profiler is not None:
                        profiler.enable()
                    one_turn(student=cell.student, conversation_id=cell.product_conversation_id, rng=rng,
                             series=cell.product, content=text)
                    if profiler is not None:
                        profiler.disable()
            server.reset()  # it keeps every request body; do not let that grow
            if (i + 1) % 10 == 0 or i + 1 == turns:
                print(f"  round {i + 1}/{turns}", flush=True)
    finally:
        gc.unfreeze()
    for cell in cells:
        total = compression_calls(cell.product_conversation_id)
        cell.compression_calls_measured = total - cell.compression_calls_warmup
        cell.checkpoints_after_run = checkpoints(cell.product_conversation_id)


# --- Report -------------------------------------------------------------------------------------


def _cell(cells: list[Cell], memories: int, messages: int) -> Cell:
    return next(c for c in cells if c.memories == memories and c.messages == messages)


def evaluate(cells: list[Cell]) -> list[dict[str, Any]]:
    targets = []

    counts = {f"{c.memories}x{c.messages}": sorted(set(c.product.queries)) for c in cells}
    distinct = sorted({q for c in cells for q in c.product.queries})
    targets.append({
        "target": "same number of DB queries per turn in every case",
        "pass": len(distinct) == 1,
        "detail": f"queries per turn seen: {distinct}" + ("" if len(distinct) == 1 else f" by case {counts}"),
    })

    lo, hi = MEMORY_COUNTS[0], MEMORY_COUNTS[-1]
    ratios = {n: _cell(cells, hi, n).product.median / _cell(cells, lo, n).product.median for n in MESSAGE_COUNTS}
    targets.append({
        "target": f"memories {lo:,} -> {hi:,}: at most {MEMORY_RATIO_MAX}x per turn",
        "pass": all(r <= MEMORY_RATIO_MAX for r in ratios.values()),
        "detail": ", ".join(f"{n:,} messages: {r:.2f}x" for n, r in ratios.items()),
        "ratios": {str(n): round(r, 3) for n, r in ratios.items()},
    })

    small, big = MESSAGE_COUNTS[1], MESSAGE_COUNTS[-1]
    ratios = {m: _cell(cells, m, big).product.median / _cell(cells, m, small).product.median for m in MEMORY_COUNTS}
    shape_ok = all(_cell(cells, m, big).compressed and not _cell(cells, m, small).compressed for m in MEMORY_COUNTS)
    targets.append({
        "target": f"compressed {big:,}-message conversation costs no more per turn than {small:,} messages",
        "pass": shape_ok and all(r <= COMPRESSED_RATIO_MAX for r in ratios.values()),
        "detail": ", ".join(f"{m:,} memories: {r:.2f}x" for m, r in ratios.items())
        + ("" if shape_ok else f" (INVALID: {big:,} must be compressed and {small:,} not)"),
        "ratios": {str(m): round(r, 3) for m, r in ratios.items()},
    })

    ratios = {m: _cell(cells, m, big).baseline.median / _cell(cells, m, big).product.median for m in MEMORY_COUNTS}
    targets.append({
        "target": f"at least {BASELINE_RATIO_MIN:.0f}x cheaper than re-tokenising baseline at {big:,} messages",
        "pass": all(r >= BASELINE_RATIO_MIN for r in ratios.values()),
        "detail": ", ".join(f"{m:,} memories: {r:.1f}x" for m, r in ratios.items()),
        "ratios": {str(m): round(r, 3) for m, r in ratios.items()},
    })
    return targets


def print_report(machine: dict[str, Any], config: dict[str, Any], cells: list[Cell],
                 targets: list[dict[str, Any]]) -> None:
    print()
    print(f"Machine: {machine['nproc']} CPU ({machine['cpu_model']}), Python {machine['python']}, "
          f"PostgreSQL {machine['postgresql']}, Django {machine['django']}")
    print(f"Run: {config['turns']} measured turns per case after {config['warmup_turns']} warm-up, "
          f"scripted model in-process, database {config['database']}")
    print()
    header = (
        f"{'memories':>8} {'messages':>8} {'seed tok':>8} {'compr':>5} | "
        f"{'turn p50':>8} {'p90':>7} {'queries':>7} {'db':>6} {'model':>6} | "
        f"{'naive p50':>9} {'p90':>7} {'queries':>7} | {'naive/turn':>10}"
    )
    print(header)
    print("-" * len(header))
    for c in cells:
        p, b = c.product.summary(), c.baseline.summary()
        print(
            f"{c.memories:>8,} {c.messages:>8,} {c.seeded_tokens:>8,} {'yes' if c.compressed else 'no':>5} | "
            f"{p['median_ms']:>8.2f} {p['p90_ms']:>7.2f} {_q(p['queries_per_turn']):>7} "
            f"{p['db_median_ms']:>6.2f} {p['model_call_median_ms']:>6.2f} | "
            f"{b['median_ms']:>9.2f} {b['p90_ms']:>7.2f} {_q(b['queries_per_turn']):>7} | "
            f"{b['median_ms'] / p['median_ms']:>9.1f}x"
        )
    print()
    print("Times in ms. turn = conversations.services.message_send, the whole turn; of which db = time in")
    print("database calls, model = time in llm.gateway.complete (openai SDK, HTTP, scripted model);")
    print("naive = the same turn plus re-reading and re-tokenising the whole history (the baseline).")
    print()
    for t in targets:
        print(f"[{'PASS' if t['pass'] else 'FAIL'}] {t['target']}: {t['detail']}")
    if _naive_mismatches:
        print(f"WARNING: stored running totals disagreed with a re-count {len(_naive_mismatches)} times: "
              f"{_naive_mismatches[:3]}")


def _q(values: list[int]) -> str:
    return "/".join(str(v) for v in values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_TURNS} measured turns per case")
    parser.add_argument("--turns", type=int, default=None, help=f"measured turns per case (default {DEFAULT_TURNS})")
    parser.add_argument("--seed", type=int, default=20240601, help="random seed for the generated text")
    parser.add_argument("--no-recall", action="store_true",
                        help="prompts carry the 10 latest memories only (no recall in the turn)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the product turns of each case and print the top functions")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target fails")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if args.no_recall:
        os.environ["BENCH_RELEVANT_COUNT"] = "0"
    turns = args.turns or (QUICK_TURNS if args.quick else DEFAULT_TURNS)

    django_setup()
    from django.conf import settings

    rng = random.Random(args.seed)
    started = time.monotonic()
    uninstall_timer = install_model_timer()
    with throwaway_database() as database, scripted_model() as server:
        machine = machine_info()
        print(f"Seeding {database} ...", flush=True)
        cells = seed(rng)
        print(f"Seeded in {time.monotonic() - started:.0f}s; {len(cells)} cases, {WARMUP_TURNS} warm-up turns, "
              f"then {turns} rounds of one product and one baseline turn per case ...",
              flush=True)
        for cell in cells:
            warm_up(cell, rng=rng)
            server.reset()
        profilers = {id(c): cProfile.Profile() for c in cells} if args.profile else None
        measure(cells, server=server, turns=turns, rng=rng, profilers=profilers)
        profiles: dict[str, str] = {}
        for cell in cells:
            if profilers is not None:
                out = io.StringIO()
                pstats.Stats(profilers[id(cell)], stream=out).sort_stats("cumulative").print_stats(30)
                profiles[f"{cell.memories:,} memories x {cell.messages:,} messages"] = out.getvalue()
        config = {
            "turns": turns,
            "warmup_turns": WARMUP_TURNS,
            "seed": args.seed,
            "database": database,
            "compression_threshold_tokens": settings.COMPRESSION_THRESHOLD_TOKENS,
            "keep_recent_messages": settings.KEEP_RECENT_MESSAGES,
            "memory_load_count": settings.MEMORY_LOAD_COUNT,
        }
    uninstall_timer()
    targets = evaluate(cells)
    config["runtime_seconds"] = round(time.monotonic() - started, 1)

    for name, text in profiles.items():
        print(f"\n=== profile of the product turns, {name} ===\n{text}")
    print_report(machine, config, cells, targets)

    results = {
        "benchmark": "chat_turn",
        "machine": machine,
        "config": config,
        "cases": [
            {
                "memories": c.memories,
                "messages": c.messages,
                "seeded_history_tokens": c.seeded_tokens,
                "compressed": c.compressed,
                "checkpoints_after_warmup": c.checkpoints_after_warmup,
                "checkpoints_after_run": c.checkpoints_after_run,
                "compression_calls_warmup": c.compression_calls_warmup,
                "compression_calls_measured": c.compression_calls_measured,
                "product": c.product.summary(),
                "baseline_retokenising": c.baseline.summary(),
                "baseline_over_product": round(c.baseline.median / c.product.median, 3),
            }
            for c in cells
        ],
        "targets": targets,
        "running_total_mismatches": len(_naive_mismatches),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nResults written to {args.output} (total {config['runtime_seconds']:.0f}s).")
    return 1 if args.strict and not all(t["pass"] for t in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
