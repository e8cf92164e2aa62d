"""Server-side cost of one chat turn, on PostgreSQL, with a model that answers at once.

For every combination of a student with 10 / 1,000 / 10,000 memories and a conversation of
10 / 1,000 / 10,000 messages, this times `message_send(...)` (the API's whole
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

Learning record. Every prompt also holds the student's learning record (open tasks, latest quiz
results by skill, weakest skills, the conversation's files with their text). Two more students
have LEARNING_MEMORIES active memories, a conversation of each of LEARNING_MESSAGES, and learning
data made through the product's own services: quizzes created as the create_quiz tool does (3
per earlier conversation, QUIZ_MAX_PER_CONVERSATION), answered and graded at once
(multiple-choice and numeric questions), which updates the mastery of their skill and writes a
quiz-result memory; teacher tasks for the student or their class, some done, some in progress,
some overdue; ready files in each conversation (PDF pages separated by "\\f", plain text) with
their file memories. "small" has 20 quiz results, 2 tasks and 1 file; "large" has 200 quiz
results over 10 skills, 20 tasks and 5 files. Their seeded notes are fewer by the memories the
quizzes and files wrote, so that they hold as many active memories as the student of the cells
with LEARNING_MEMORIES memories. The baseline of each is that cell's product turn at the same
conversation size: the same memories and messages, no learning data, timed in the same rounds.
The loaded turn must cost at most LEARNING_RATIO_MAX times it, with as many queries at both sizes.

Queries. The turn's database steps run on the threads of core.db.db_step, each thread with its
own connection: a wrapper put on every connection as it connects (`QueryRecorder`) counts and
times the queries of all of them while a turn runs.

Database. The tables are created by `django.test.utils.setup_databases` in a throwaway database
(`test_<name of DATABASE_URL's database>`), which is dropped at the end: the database named in
DATABASE_URL itself is never written to. Tables are ANALYZEd after seeding, as autovacuum would
have done on a real database of that size.

Usage (from the repository root):

    DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_bench make bench   # PORT: scripts/pgsearch.py start
    DATABASE_URL=... .venv/bin/python bench/chat_turn.py [--quick | --smoke] [--turns N] [--profile] [--strict]

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
import threading
import time
import uuid
from collections import Counter
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
MEMORY_COUNTS: tuple[int, ...] = (10, 1_000, 10_000)
MESSAGE_COUNTS: tuple[int, ...] = (10, 1_000, 10_000)
DEFAULT_TURNS = 30
QUICK_TURNS = 8
# --smoke: the smallest sizes (LEARNING_MEMORIES among them), for CI.
SMOKE_TURNS = 2
SMOKE_MEMORY_COUNTS: tuple[int, ...] = (10, 1_000)
SMOKE_MESSAGE_COUNTS = (10, 100, 1_000)
WARMUP_TURNS = 2  # the first one compresses the 10,000-message conversations

# Targets from the issue.
MEMORY_RATIO_MAX = 1.5  # 10,000 memories cost at most 1.5x what 10 cost
COMPRESSED_RATIO_MAX = 1.0  # a compressed 10,000-message turn costs no more than a 1,000 one
BASELINE_RATIO_MIN = 10.0  # at least 10x cheaper than re-tokenising, at 10,000 messages
LEARNING_RATIO_MAX = 1.3  # a student with quizzes, tasks and files costs at most 1.3x one without


@dataclass(frozen=True)
class LearningSize:
    """How much learning data a learning-record student has."""

    quizzes: int  # graded quiz results
    tasks: int  # teacher tasks, some done, some open, some overdue
    files: int  # ready files in the conversation


# The learning-record students have as many memories as the cells' student with this many, and a
# conversation of each of these sizes; that student's product turn at that size is their baseline.
LEARNING_MEMORIES = 1_000
LEARNING_MESSAGES: tuple[int, ...] = (10, 1_000)
LEARNING_SIZES = {
    "small": LearningSize(quizzes=20, tasks=2, files=1),
    "large": LearningSize(quizzes=200, tasks=20, files=5),
}


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
# (quiz topic, skill label): the create_quiz tool's arguments; the quizzes go through them in turn.
LEARNING_SKILLS = [
    ("Adding fractions", "adding fractions with unlike denominators"),
    ("Dividing fractions", "dividing by a fraction"),
    ("Linear equations", "solving linear equations in one unknown"),
    ("Negative numbers", "operations with negative numbers"),
    ("Area of triangles", "area of a triangle"),
    ("Ratios", "simplifying ratios"),
    ("Slope", "slope of a line from two points"),
    ("Photosynthesis", "inputs and outputs of photosynthesis"),
    ("Passé composé", "passé composé with être"),
    ("Percentages", "percentage of a quantity"),
]
TASK_TITLES = [
    "Worksheet {q}: {topic}",
    "Exercises {a} to {s} on {topic}",
    "Revise {topic} for Friday's test",
    "Read chapter {q} and answer the questions",
    "Finish the {topic} practice sheet",
]
TASK_SENTENCES = [
    "Show every step of your working, not only the answer.",
    "Do exercises {a} to {s} on page {q} of the textbook.",
    "Check your answers with a partner before handing them in.",
    "Write one sentence explaining the method you used for question {q}.",
    "If you get stuck, ask the tutor for a hint rather than the answer.",
    "Bring the completed sheet to class on Monday.",
    "Underline the key numbers in each word problem before you start.",
]
WORKSHEET_SENTENCES = [
    "Exercise {q}. Compute {a}/{b} + {c}/{d} and write the result in its simplest form.",
    "Exercise {q}. Solve for x: {a}x + {b} = {s}. Check your answer by substituting it back.",
    "Exercise {q}. A triangle has a base of {a} cm and a height of {b} cm. Find its area.",
    "Exercise {q}. Simplify the ratio {s}:{t} and explain each step.",
    "Exercise {q}. Find the slope of the line through ({a}, {b}) and ({c}, {d}).",
    "Exercise {q}. What is {a}% of {s}? Round your answer to one decimal place.",
    "Reminder: to add fractions, first write them with a common denominator.",
    "Reminder: dividing by a fraction is the same as multiplying by its reciprocal.",
    "Name: ______________  Class: 5A  Date: ____________",
    "Plants take in carbon dioxide and water and, using light, make glucose and oxygen.",
]


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
            "  DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_bench make bench (PostgreSQL with pgvector:\n"
            "  scripts/pgsearch.py start DIR prints one)\n"
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
    statements: list[str] = field(default_factory=list)  # the SQL of the latest turn

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
            "queries_samples": self.queries,
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
    prompt: PromptSize | None = None  # of the last warm-up product turn
    product: Series = field(default_factory=Series)
    baseline: Series = field(default_factory=Series)


@dataclass(frozen=True)
class PromptSize:
    """The chat prompt the model received, in the product's token counts (llm.tokens)."""

    tokens: int  # every message, with its framing
    record_tokens: int  # the learning record block, 0 without one


@dataclass
class LearningCase:
    """A conversation of a student with learning data, whose turns are compared with those of the
    cell of LEARNING_MEMORIES memories and as many messages."""

    name: str
    size: LearningSize
    messages: int
    student: Any
    conversation_id: int
    seeded_tokens: int = 0
    memories: int = 0  # active memories: seeded notes, quiz results, file memories
    skills: int = 0  # SkillMastery rows
    open_tasks: int = 0
    overdue_tasks: int = 0
    done_tasks: int = 0
    file_chars: int = 0  # extracted text of the conversation's files
    prompt: PromptSize | None = None  # of the last warm-up turn
    product: Series = field(default_factory=Series)


def seed_people() -> tuple[Any, Any]:
    from accounts.models import User
    from accounts.services import classroom_create, school_default

    teacher = User(username="bench-teacher", role=User.Role.TEACHER)
    teacher.set_unusable_password()
    teacher.save()
    classroom = classroom_create(name="Bench 5A", school=school_default(), teachers=[teacher])
    return teacher, classroom


def seed_student(*, count: int, teacher: Any, classroom: Any, rng: random.Random, username: str = "") -> Any:
    """A student with `count` active memories: tutor notes from a past conversation, teacher notes."""
    from django.utils import timezone

    from accounts.models import Enrollment, User
    from conversations.models import Conversation
    from llm.tokens import count_tokens
    from memory.models import AIMemory

    student = User(username=username or f"bench-student-{count}", role=User.Role.STUDENT)
    student.set_unusable_password()
    student.save()
    Enrollment.objects.create(classroom=classroom, student=student)
    now = timezone.now()
    # Tutor notes come from past conversations, at most SAVE_MEMORY_MAX_PER_CONVERSATION (5) each,
    # as the product enforces: the "same conversation" relation of recall links a handful of
    # memories, not thousands.
    Conversation.objects.bulk_create(
        Conversation(
            student=student,
            subject=f"Earlier session {i}",
            status=Conversation.Status.ENDED,
            last_activity_at=now - timedelta(days=1),
            ended_at=now - timedelta(days=1),
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
    from memory.search import fts
    from memory.search.backend import search_backend

    created = AIMemory.objects.filter(student=student).values_list("pk", "title", "content")
    batch: list[Any] = []
    for pk, title, content in created.iterator(chunk_size=2000):
        batch.append(
            fts.IndexRow(
                memory_id=pk, student_id=student.pk, text=fts.memory_text(title, content), language=student.language
            )
        )
        if len(batch) == 2000:
            search_backend().index(batch)
            batch = []
    search_backend().index(batch)
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


def seed(rng: random.Random) -> tuple[list[Cell], list[LearningCase]]:
    """Every case: the cells of MEMORY_COUNTS x MESSAGE_COUNTS, then the learning-record students."""
    from django.db import connection

    teacher, classroom = seed_people()
    cells = []
    for m in MEMORY_COUNTS:
        student = seed_student(count=m, teacher=teacher, classroom=classroom, rng=rng)
        for n in MESSAGE_COUNTS:
            product_id, tokens = seed_conversation(student=student, count=n, rng=rng, label="product")
            baseline_id, _ = seed_conversation(student=student, count=n, rng=rng, label="baseline")
            cells.append(Cell(m, n, student, product_id, baseline_id, seeded_tokens=tokens))
    learning = seed_learning(teacher=teacher, rng=rng)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return cells, learning


# --- Seeding the learning record ----------------------------------------------------------------

# (status, due in N days or None), in turn: of every 10 tasks 3 done, 2 in progress, 5 to do, of
# which 3 overdue.
TASK_PLAN: list[tuple[str, int | None]] = [
    ("done", -6),
    ("todo", -3),
    ("todo", -1),
    ("in_progress", 2),
    ("todo", -8),
    ("done", -2),
    ("todo", 7),
    ("in_progress", None),
    ("done", 10),
    ("todo", None),
]


def seed_learning(*, teacher: Any, rng: random.Random) -> list[LearningCase]:
    """The students of LEARNING_SIZES, each in a class of their own (its tasks are theirs only),
    with LEARNING_MEMORIES active memories and a conversation of each of LEARNING_MESSAGES, with
    the size's files in each: one case per conversation."""
    from accounts.services import classroom_create, school_default

    cases = []
    for name, size in LEARNING_SIZES.items():
        classroom = classroom_create(name=f"Bench learning {name}", school=school_default(), teachers=[teacher])
        # Every graded quiz and every file writes a memory: as many fewer notes are seeded.
        notes = LEARNING_MEMORIES - size.quizzes - size.files * len(LEARNING_MESSAGES)
        student = seed_student(
            count=notes, teacher=teacher, classroom=classroom, rng=rng, username=f"bench-learner-{name}"
        )
        conversations = [
            (n, *seed_conversation(student=student, count=n, rng=rng, label=f"learning {name}"))
            for n in LEARNING_MESSAGES
        ]
        seed_quizzes(student=student, count=size.quizzes, rng=rng)
        seed_tasks(teacher=teacher, classroom=classroom, student=student, count=size.tasks, rng=rng)
        for _, conversation_id, _ in conversations:
            seed_files(conversation_id=conversation_id, count=size.files, rng=rng)
        for messages, conversation_id, tokens in conversations:
            case = LearningCase(name, size, messages, student, conversation_id, seeded_tokens=tokens)
            count_learning_data(case)
            if case.memories != LEARNING_MEMORIES:
                raise RuntimeError(
                    f"learning student {name} has {case.memories} active memories, "
                    f"not {LEARNING_MEMORIES}: the comparison would not hold them equal"
                )
            cases.append(case)
    return cases


def quiz_arguments(number: int, rng: random.Random) -> dict[str, Any]:
    """The create_quiz arguments of a student's quiz `number`: the skills of LEARNING_SKILLS in
    turn, two multiple-choice and two numeric questions (graded at once, without the model)."""
    topic, skill = LEARNING_SKILLS[number % len(LEARNING_SKILLS)]
    questions: list[dict[str, Any]] = []
    for position in range(1, 5):
        a, b = rng.randint(2, 12), rng.randint(3, 12)
        question: dict[str, Any] = {
            "kind": "numeric",
            "prompt": f"{topic}, question {position}: what is {a} x {b}?",
            "answer": str(a * b),
            "explanation": f"{a} x {b} = {a * b}: {a} groups of {b}.",
        }
        if position % 2:
            choices = [str(a * b), str(a * b + 1), str(a * b + a)]
            rng.shuffle(choices)
            question.update(kind="multiple_choice", choices=choices)
        questions.append(question)
    return {"topic": f"{topic} (practice {number // len(LEARNING_SKILLS) + 1})", "skill": skill, "questions": questions}


def quiz_answers(quiz: Any, *, ability: float, rng: random.Random) -> list[dict[str, Any]]:
    """The student's answers to `quiz`: each right with probability `ability`, else a wrong
    choice or a wrong number."""
    answers = []
    for question in quiz.questions.order_by("position"):
        if question.kind == "multiple_choice":
            right = question.choices[question.correct_choice]
            wrong = rng.choice([c for i, c in enumerate(question.choices) if i != question.correct_choice])
        else:
            right = question.expected_answer
            wrong = str(int(question.expected_number) + rng.randint(1, 5))
        answers.append({"question": question.pk, "answer": right if rng.random() < ability else wrong})
    return answers


def seed_quizzes(*, student: Any, count: int, rng: random.Random) -> None:
    """`count` graded quizzes through the product's services: created as the create_quiz tool does
    (QUIZ_MAX_PER_CONVERSATION per earlier conversation), answered by the student and graded at
    once, which updates the mastery of the quiz's skill and writes its quiz-result memory. Each
    skill has its own chance of a right answer, so some skills are weak and some strong."""
    from django.conf import settings
    from django.utils import timezone

    from conversations.models import Conversation
    from learning.services import quiz_answers_submit, quiz_create_from_tool

    per_conversation = settings.QUIZ_MAX_PER_CONVERSATION
    now = timezone.now()
    sessions = Conversation.objects.bulk_create(
        Conversation(
            student=student,
            subject=f"Quiz session {i}",
            status=Conversation.Status.ENDED,
            last_activity_at=now,
            ended_at=now,
        )
        for i in range(-(-count // per_conversation))
    )
    ability = {skill: rng.uniform(0.3, 0.95) for _, skill in LEARNING_SKILLS}
    for number in range(count):
        arguments = quiz_arguments(number, rng)
        quiz = quiz_create_from_tool(
            student_id=student.pk, conversation_id=sessions[number // per_conversation].pk, arguments=arguments
        )
        answers = quiz_answers(quiz, ability=ability[arguments["skill"]], rng=rng)
        quiz_answers_submit(user=student, quiz_id=quiz.pk, client_attempt_id=f"bench-{quiz.pk}", answers=answers)


def seed_tasks(*, teacher: Any, classroom: Any, student: Any, count: int, rng: random.Random) -> None:
    """`count` tasks the teacher assigns (task_create), every other one to the student's class and
    the others to the student, due as TASK_PLAN says; the student sets the status TASK_PLAN gives
    (task_status_set)."""
    from django.utils import timezone

    from learning.services import task_create, task_status_set

    now = timezone.now()
    for i in range(count):
        status, due_days = TASK_PLAN[i % len(TASK_PLAN)]
        to_class = i % 2 == 0
        task = task_create(
            teacher=teacher,
            classroom_id=classroom.pk if to_class else None,
            student_id=None if to_class else student.pk,
            title=_fill(rng.choice(TASK_TITLES), rng),
            instructions=_text(rng, TASK_SENTENCES, 25, 60),
            subject=rng.choice(["Maths", "Science", "French"]),
            due_at=None if due_days is None else now + timedelta(days=due_days),
        )
        if status != "todo":
            task_status_set(user=student, task_id=task.pk, status=status)


def worksheet_text(rng: random.Random, chars: int) -> str:
    """About `chars` characters of a worksheet, one exercise or remark a line."""
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < chars:
        lines.append(_fill(rng.choice(WORKSHEET_SENTENCES), rng))
    return "\n".join(lines)


def seed_files(*, conversation_id: int, count: int, rng: random.Random) -> None:
    """`count` files of the conversation as extraction leaves them, ready, 3 of every 5 a PDF of
    2 to 4 pages of about 1,000 characters (pages separated by "\\f"), the others plain-text notes of
    about 2,500 characters; each with its file memory (conversations.file_extraction.file_memory_save)."""
    from django.utils import timezone

    from conversations.file_extraction import file_memory_save
    from conversations.files import PAGE_BREAK, PDF, TEXT
    from conversations.models import ConversationFile

    now = timezone.now()
    for i in range(count):
        is_pdf = i % 5 not in (1, 3)
        pages = [worksheet_text(rng, 1000) for _ in range(rng.randint(2, 4))] if is_pdf else []
        text = PAGE_BREAK.join(pages) if is_pdf else worksheet_text(rng, 2500)
        row = ConversationFile.objects.create(
            conversation_id=conversation_id,
            name=f"worksheet-{i + 1}.pdf" if is_pdf else f"class-notes-{i + 1}.txt",
            content_type=PDF if is_pdf else TEXT,
            size=len(text.encode()) * (8 if is_pdf else 1),  # a PDF holds more than its text
            storage_name=f"bench/{conversation_id}/{uuid.uuid4().hex}{'.pdf' if is_pdf else '.txt'}",
            status=ConversationFile.Status.READY,
            pages=len(pages) if is_pdf else None,
            text=text,
            extract_attempts=1,
            extract_requested_at=now,
            extracted_at=now,
        )
        file_memory_save(file=row, text=text, pages=row.pages)


def count_learning_data(case: LearningCase) -> None:
    """Fill in what the case's student has, read back from the database: active memories, mastery
    rows, tasks done / open / overdue, characters of file text."""
    from django.db.models import Q
    from django.utils import timezone

    from accounts.models import Enrollment
    from conversations.models import ConversationFile
    from learning.models import SkillMastery, Task, TaskStatus
    from memory.models import AIMemory

    student = case.student
    case.memories = AIMemory.objects.filter(student=student).active().count()
    case.skills = SkillMastery.objects.filter(student=student).count()
    classrooms = Enrollment.objects.filter(student=student).values("classroom_id")
    done = set(
        TaskStatus.objects.filter(student=student, status=TaskStatus.Status.DONE).values_list("task_id", flat=True)
    )
    now = timezone.now()
    for task in Task.objects.filter(Q(student=student) | Q(classroom_id__in=classrooms)):
        if task.pk in done:
            case.done_tasks += 1
            continue
        case.open_tasks += 1
        case.overdue_tasks += task.due_at is not None and task.due_at < now
    texts = ConversationFile.objects.filter(conversation_id=case.conversation_id).values_list("text", flat=True)
    case.file_chars = sum(len(text) for text in texts)


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
    from conversations.models import Message
    from conversations.turn import prompt
    from llm.tokens import count_tokens

    original = prompt.context_build

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

    prompt.context_build = naive_context_build
    try:
        yield
    finally:
        prompt.context_build = original


class QueryRecorder:
    """Counts and times the database queries of every thread while a turn runs (`turn`).

    The turn's steps run on the threads of core.db.db_step, each with its own connection:
    CaptureQueriesContext on this thread's connection sees none of them. `install` puts the
    recorder on every connection (Django's `execute_wrappers`) as it connects.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = False
        self.count = 0
        self.seconds = 0.0
        self.statements: list[str] = []

    def __call__(self, execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
        """The execute wrapper: runs the query, and counts and times it during a turn."""
        if not self.active:
            return execute(sql, params, many, context)
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            elapsed = time.perf_counter() - started
            with self.lock:
                self.count += 1
                self.seconds += elapsed
                self.statements.append(str(sql))

    def attach(self, sender: Any = None, connection: Any = None, **kwargs: Any) -> None:
        """Put the recorder on `connection`, once (the connection_created signal's receiver)."""
        if connection is not None and self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)

    def install(self) -> Callable[[], None]:
        """Record on every connection from now on; returns the function that stops it."""
        from django.db import connections
        from django.db.backends.signals import connection_created

        connection_created.connect(self.attach, weak=False)
        for existing in connections.all(initialized_only=True):
            self.attach(connection=existing)

        def uninstall() -> None:
            connection_created.disconnect(self.attach)

        return uninstall

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Record from zero while the block runs."""
        with self.lock:
            self.count, self.seconds, self.statements = 0, 0.0, []
            self.active = True
        try:
            yield
        finally:
            self.active = False


_queries = QueryRecorder()


def message_send(*, user: Any, conversation_id: int, content: str, client_message_id: str) -> Any:
    """One whole chat turn from synchronous code, as the API runs it (conversations.turn.drive):
    the feed once the reply is stored. Raises the turn's ApplicationError."""
    from asgiref.sync import async_to_sync

    from conversations.turn import drive

    async def turn() -> Any:
        feed = await drive.turn_open(
            user=user, conversation_id=conversation_id, content=content, client_message_id=client_message_id
        )
        await feed.wait()
        if feed.error is not None:
            raise feed.error
        return feed

    return async_to_sync(turn)()


def one_turn(
    *, student: Any, conversation_id: int, rng: random.Random, series: Series | None, content: str | None = None
) -> None:
    """One chat turn through `message_send`, timed, its queries and model calls recorded in `series`."""
    content = content or student_text(rng)
    client_id = f"bench-{uuid.uuid4().hex}"
    _model_seconds.clear()
    with _queries.turn():
        started = time.perf_counter()
        result = message_send(
            user=student, conversation_id=conversation_id, content=content, client_message_id=client_id
        )
        elapsed = time.perf_counter() - started
    if result.replayed or result.reply is None or not result.reply.content:
        raise RuntimeError(f"turn in conversation {conversation_id} did not produce a reply")
    if series is not None:
        series.seconds.append(elapsed)
        series.queries.append(_queries.count)
        series.model_seconds.append(sum(_model_seconds))
        series.db_seconds.append(_queries.seconds)
        series.statements = list(_queries.statements)


def checkpoints(conversation_id: int) -> int:
    from conversations.models import ContextCheckpoint

    return ContextCheckpoint.objects.filter(conversation_id=conversation_id).count()


def compression_calls(conversation_id: int) -> int:
    from llm.models import LLMUsage

    return LLMUsage.objects.filter(conversation_id=conversation_id, purpose=LLMUsage.Purpose.COMPRESSION).count()


def prompt_size(server: Any) -> PromptSize:
    """The size of the latest chat prompt the scripted model received."""
    from learning.prompts import RECORD_BLOCK_OPEN
    from llm.tokens import message_tokens

    messages = server.calls("chat")[-1]["messages"]
    record = [m for m in messages if str(m.get("content") or "").startswith(RECORD_BLOCK_OPEN)]
    return PromptSize(
        tokens=sum(message_tokens(m) for m in messages),
        record_tokens=sum(message_tokens(m) for m in record),
    )


def warm_up(cell: Cell, *, server: Any, rng: random.Random) -> None:
    """Untimed turns; the first one compresses a conversation over the threshold."""
    for _ in range(WARMUP_TURNS):
        one_turn(student=cell.student, conversation_id=cell.product_conversation_id, rng=rng, series=None)
        cell.prompt = prompt_size(server)
        with naive_retokenising():
            one_turn(student=cell.student, conversation_id=cell.baseline_conversation_id, rng=rng, series=None)
    cell.compression_calls_warmup = compression_calls(cell.product_conversation_id)
    cell.checkpoints_after_warmup = checkpoints(cell.product_conversation_id)
    cell.compressed = cell.checkpoints_after_warmup > 0


def warm_up_learning(case: LearningCase, *, server: Any, rng: random.Random) -> None:
    """Untimed turns of a learning-record student, as many as a cell's."""
    for _ in range(WARMUP_TURNS):
        one_turn(student=case.student, conversation_id=case.conversation_id, rng=rng, series=None)
    case.prompt = prompt_size(server)


def _product_turn(
    *,
    student: Any,
    conversation_id: int,
    series: Series,
    text: str,
    rng: random.Random,
    profiler: cProfile.Profile | None,
) -> None:
    """A measured product turn, profiled when `profiler` is given."""
    if profiler is not None:
        profiler.enable()
    try:
        one_turn(student=student, conversation_id=conversation_id, rng=rng, series=series, content=text)
    finally:
        if profiler is not None:
            profiler.disable()


def cell_round(
    cell: Cell, *, round_index: int, text: str, rng: random.Random, profiler: cProfile.Profile | None
) -> None:
    """One product and one baseline turn of a cell; which goes first alternates from round to round."""
    kinds = ("product", "baseline") if round_index % 2 == 0 else ("baseline", "product")
    for kind in kinds:
        if kind == "baseline":
            with naive_retokenising():
                one_turn(
                    student=cell.student,
                    conversation_id=cell.baseline_conversation_id,
                    rng=rng,
                    series=cell.baseline,
                    content=text,
                )
        else:
            _product_turn(
                student=cell.student,
                conversation_id=cell.product_conversation_id,
                series=cell.product,
                text=text,
                rng=rng,
                profiler=profiler,
            )


def learning_round(
    case: LearningCase, *, round_index: int, text: str, rng: random.Random, profiler: cProfile.Profile | None
) -> None:
    """One product turn of a learning-record student (its baseline is a cell's product turn)."""
    _product_turn(
        student=case.student,
        conversation_id=case.conversation_id,
        series=case.product,
        text=text,
        rng=rng,
        profiler=profiler,
    )


def measure(
    cells: list[Cell],
    learning: list[LearningCase],
    *,
    server: Any,
    turns: int,
    rng: random.Random,
    profilers: dict[int, cProfile.Profile] | None,
) -> None:
    """`turns` rounds; each round runs one product and one baseline turn of every cell, and one
    turn of every learning-record student.

    Rounds rather than one case after the other: on a shared machine the load drifts, and this
    spreads the drift over every case instead of penalising whichever ran during it. The order
    of the cases, and of product and baseline within a cell, rotates from round to round.
    """
    cases: list[Cell | LearningCase] = [*cells, *learning]
    gc.collect()
    gc.freeze()
    try:
        for i in range(turns):
            # One student message per round, sent in every case: the cases differ only by their
            # memories, history and learning data, not by what recall is asked (a message of stop
            # words only skips the full-text queries, one with rare words reaches more of them).
            text = student_text(rng)
            shift = i % len(cases)
            for case in cases[shift:] + cases[:shift]:
                profiler = profilers.get(id(case)) if profilers is not None else None
                if isinstance(case, Cell):
                    cell_round(case, round_index=i, text=text, rng=rng, profiler=profiler)
                else:
                    learning_round(case, round_index=i, text=text, rng=rng, profiler=profiler)
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

    distinct = sorted({q for c in cells for q in c.product.queries})
    differing = rounds_differing({f"{c.memories}x{c.messages}": c.product for c in cells})
    targets.append(
        {
            "target": "same number of DB queries per turn in every case (all are sent the same message in a round)",
            "pass": not differing,
            "detail": f"queries per turn seen: {_q(distinct)}, "
            + ("; ".join(differing[:3]) if differing else "the same in every case in each round"),
        }
    )

    lo, hi = MEMORY_COUNTS[0], MEMORY_COUNTS[-1]
    ratios = {n: _cell(cells, hi, n).product.median / _cell(cells, lo, n).product.median for n in MESSAGE_COUNTS}
    targets.append(
        {
            "target": f"memories {lo:,} -> {hi:,}: at most {MEMORY_RATIO_MAX}x per turn",
            "pass": all(r <= MEMORY_RATIO_MAX for r in ratios.values()),
            "detail": ", ".join(f"{n:,} messages: {r:.2f}x" for n, r in ratios.items()),
            "ratios": {str(n): round(r, 3) for n, r in ratios.items()},
        }
    )

    small, big = MESSAGE_COUNTS[1], MESSAGE_COUNTS[-1]
    ratios = {m: _cell(cells, m, big).product.median / _cell(cells, m, small).product.median for m in MEMORY_COUNTS}
    shape_ok = all(_cell(cells, m, big).compressed and not _cell(cells, m, small).compressed for m in MEMORY_COUNTS)
    targets.append(
        {
            "target": f"compressed {big:,}-message conversation costs no more per turn than {small:,} messages",
            "pass": shape_ok and all(r <= COMPRESSED_RATIO_MAX for r in ratios.values()),
            "detail": ", ".join(f"{m:,} memories: {r:.2f}x" for m, r in ratios.items())
            + ("" if shape_ok else f" (INVALID: {big:,} must be compressed and {small:,} not)"),
            "ratios": {str(m): round(r, 3) for m, r in ratios.items()},
        }
    )

    ratios = {m: _cell(cells, m, big).baseline.median / _cell(cells, m, big).product.median for m in MEMORY_COUNTS}
    targets.append(
        {
            "target": f"at least {BASELINE_RATIO_MIN:.0f}x cheaper than re-tokenising baseline at {big:,} messages",
            "pass": all(r >= BASELINE_RATIO_MIN for r in ratios.values()),
            "detail": ", ".join(f"{m:,} memories: {r:.1f}x" for m, r in ratios.items()),
            "ratios": {str(m): round(r, 3) for m, r in ratios.items()},
        }
    )
    return targets


def _learning_base(cells: list[Cell], case: LearningCase) -> Cell:
    """The cell whose product turn is the case's baseline: same memories and messages, no learning data."""
    return _cell(cells, LEARNING_MEMORIES, case.messages)


def learning_targets(cells: list[Cell], learning: list[LearningCase]) -> list[dict[str, Any]]:
    """The learning record's targets, checked at each conversation size of LEARNING_MESSAGES."""
    return [learning_time_target(cells, learning), learning_queries_target(cells, learning)]


def learning_time_target(cells: list[Cell], learning: list[LearningCase]) -> dict[str, Any]:
    """The largest learning student's turn costs at most LEARNING_RATIO_MAX times its baseline's."""
    largest = list(LEARNING_SIZES.values())[-1]
    ratios = {(c.name, c.messages): c.product.median / _learning_base(cells, c).product.median for c in learning}
    details = []
    for n in LEARNING_MESSAGES:
        base = _cell(cells, LEARNING_MEMORIES, n)
        at_n = [c for c in learning if c.messages == n]
        details.append(
            f"{n:,} messages: "
            + ", ".join(f"{c.size.quizzes} quiz results {ratios[c.name, n]:.2f}x" for c in at_n)
            + f" (p50 {at_n[-1].product.median * 1000:.1f} vs {base.product.median * 1000:.1f} ms)"
        )
    return {
        "target": f"learning record ({largest.quizzes} quiz results, {largest.tasks} tasks, {largest.files} files): "
        f"at most {LEARNING_RATIO_MAX}x the turn without learning data ({LEARNING_MEMORIES:,} memories)",
        "pass": all(ratios[c.name, c.messages] <= LEARNING_RATIO_MAX for c in learning if c.size == largest),
        "detail": "; ".join(details),
        "ratios": {f"{c.name}, {c.messages} messages": round(ratios[c.name, c.messages], 3) for c in learning},
    }


def learning_queries_target(cells: list[Cell], learning: list[LearningCase]) -> dict[str, Any]:
    """Every learning size runs the same number of queries per turn, round by round; also gives
    the largest one's count minus its baseline's, per round."""
    largest = list(LEARNING_SIZES.values())[-1]
    differing: list[str] = []
    details = []
    extra: dict[int, list[int]] = {}
    for n in LEARNING_MESSAGES:
        base = _cell(cells, LEARNING_MEMORIES, n)
        at_n = [c for c in learning if c.messages == n]
        named = {f"{c.size.quizzes} quiz results": c.product for c in at_n}
        differing += [f"{n:,} messages, {d}" for d in rounds_differing(named)]
        extra[n] = sorted({q - b for q, b in zip(at_n[-1].product.queries, base.product.queries, strict=True)})
        seen = ", ".join(f"{name} {_q(sorted(set(series.queries)))}" for name, series in named.items())
        details.append(f"{n:,} messages: {seen}, none {_q(sorted(set(base.product.queries)))}")
    minus = ", ".join(f"{n:,} messages {'/'.join(f'{e:+d}' for e in extra[n])}" for n in LEARNING_MESSAGES)
    return {
        "target": "learning record: the same number of queries per turn at "
        + " and ".join(f"{size.quizzes:,}" for size in LEARNING_SIZES.values())
        + " quiz results",
        "pass": not differing,
        "detail": "; ".join(details)
        + "; "
        + ("; ".join(differing[:3]) if differing else "the same at every size in each round")
        + f"; {largest.quizzes} quiz results minus none, per round: {minus}",
        "loaded_minus_baseline_per_round": {str(n): e for n, e in extra.items()},
    }


def rounds_differing(named: dict[str, Series]) -> list[str]:
    """The rounds whose product turns ran different numbers of queries from one case to another,
    described. Every case is sent the same message in a round, and the count may depend on the
    message (recall skips its lexical queries when no memory shares a term with it)."""
    names = list(named)
    differing = []
    for i, counts in enumerate(zip(*(named[n].queries for n in names), strict=True)):
        if len(set(counts)) > 1:
            by_case = ", ".join(f"{n}: {c}" for n, c in zip(names, counts, strict=True))
            differing.append(f"round {i + 1}: {by_case}")
    return differing


def statements_diff(loaded: list[str], baseline: list[str]) -> dict[str, list[str]]:
    """The SQL statements one turn ran that the other did not (as a multiset, cut to 300 characters)."""
    more, fewer = Counter(loaded) - Counter(baseline), Counter(baseline) - Counter(loaded)
    return {
        "only_loaded": [sql[:300] for sql in more.elements()],
        "only_baseline": [sql[:300] for sql in fewer.elements()],
    }


def learning_results(cells: list[Cell], learning: list[LearningCase]) -> dict[str, Any]:
    """The learning-record part of the JSON results."""
    return {
        "memories": LEARNING_MEMORIES,
        "ratio_max": LEARNING_RATIO_MAX,
        "baselines": [
            {
                "memories": base.memories,
                "messages": base.messages,
                "prompt_tokens": base.prompt.tokens if base.prompt else None,
                "product": base.product.summary(),
            }
            for base in (_cell(cells, LEARNING_MEMORIES, n) for n in LEARNING_MESSAGES)
        ],
        "cases": [
            {
                "name": c.name,
                "messages": c.messages,
                "quiz_results": c.size.quizzes,
                "skills": c.skills,
                "tasks": c.size.tasks,
                "open_tasks": c.open_tasks,
                "overdue_tasks": c.overdue_tasks,
                "done_tasks": c.done_tasks,
                "files": c.size.files,
                "file_text_chars": c.file_chars,
                "active_memories": c.memories,
                "seeded_history_tokens": c.seeded_tokens,
                "prompt_tokens": c.prompt.tokens if c.prompt else None,
                "record_block_tokens": c.prompt.record_tokens if c.prompt else None,
                "product": c.product.summary(),
                "over_baseline": round(c.product.median / _learning_base(cells, c).product.median, 3),
                "statements_vs_baseline": statements_diff(
                    c.product.statements, _learning_base(cells, c).product.statements
                ),
            }
            for c in learning
        ],
    }


def print_learning_report(cells: list[Cell], learning: list[LearningCase]) -> None:
    """The learning-record table: at each conversation size, the cell's product turn (no learning
    data), then each learning student's."""
    print()
    print(
        f'Learning record: students with {LEARNING_MEMORIES:,} active memories; "none" is the product turn of '
        f"the case above with as many memories and messages."
    )
    header = (
        f"{'messages':>8} {'student':>7} {'quizzes':>7} {'skills':>6} {'tasks':>5} {'open':>4} {'overdue':>7} "
        f"{'files':>5} {'file chr':>8} | {'prompt':>6} {'record':>6} | "
        f"{'turn p50':>8} {'p90':>7} {'queries':>7} {'db':>6} {'model':>6} | {'/none':>6}"
    )
    print(header)
    print("-" * len(header))
    for n in LEARNING_MESSAGES:
        base = _cell(cells, LEARNING_MEMORIES, n)
        rows: list[tuple[str, LearningCase | None, Series, PromptSize | None]] = [
            ("none", None, base.product, base.prompt),
            *((c.name, c, c.product, c.prompt) for c in learning if c.messages == n),
        ]
        for name, case, series, prompt in rows:
            p = series.summary()
            data = (
                f"{case.size.quizzes:>7} {case.skills:>6} {case.size.tasks:>5} {case.open_tasks:>4} "
                f"{case.overdue_tasks:>7} {case.size.files:>5} {case.file_chars:>8,}"
                if case
                else f"{0:>7} {0:>6} {0:>5} {0:>4} {0:>7} {0:>5} {0:>8}"
            )
            print(
                f"{n:>8,} {name:>7} {data} | {prompt.tokens if prompt else 0:>6,} "
                f"{prompt.record_tokens if prompt else 0:>6,} | "
                f"{p['median_ms']:>8.2f} {p['p90_ms']:>7.2f} {_q(p['queries_per_turn']):>7} "
                f"{p['db_median_ms']:>6.2f} {p['model_call_median_ms']:>6.2f} | "
                f"{series.median / base.product.median:>5.2f}x"
            )
    print("prompt, record = tokens of the chat prompt and of its learning record block (last warm-up turn);")
    print("/none = turn p50 over the p50 of the same turn without learning data.")


def print_report(
    machine: dict[str, Any],
    config: dict[str, Any],
    cells: list[Cell],
    learning: list[LearningCase],
    targets: list[dict[str, Any]],
) -> None:
    print()
    print(
        f"Machine: {machine['nproc']} CPU ({machine['cpu_model']}), Python {machine['python']}, "
        f"PostgreSQL {machine['postgresql']}, Django {machine['django']}"
    )
    print(
        f"Run: {config['turns']} measured turns per case after {config['warmup_turns']} warm-up, "
        f"scripted model in-process, database {config['database']}"
    )
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
    print("Times in ms. turn = the whole turn, as the API runs it (conversations.turn.drive); of which db = time in")
    print("database calls, model = time in llm.gateway.complete (openai SDK, HTTP, scripted model);")
    print("naive = the same turn plus re-reading and re-tokenising the whole history (the baseline);")
    print("queries = database queries per turn, on every connection the turn's steps used.")
    print_learning_report(cells, learning)
    print()
    for t in targets:
        print(f"[{'PASS' if t['pass'] else 'FAIL'}] {t['target']}: {t['detail']}")
    if _naive_mismatches:
        print(
            f"WARNING: stored running totals disagreed with a re-count {len(_naive_mismatches)} times: "
            f"{_naive_mismatches[:3]}"
        )


def _q(values: list[int]) -> str:
    return "/".join(str(v) for v in values)


def profile_texts(
    cells: list[Cell], learning: list[LearningCase], profilers: dict[int, cProfile.Profile]
) -> dict[str, str]:
    """The top 30 functions by cumulative time of each case's profiled product turns, by case name."""
    named: list[tuple[str, Cell | LearningCase]] = [
        *((f"{c.memories:,} memories x {c.messages:,} messages", c) for c in cells),
        *(
            (
                f"learning record, {c.name} ({c.size.quizzes} quiz results, {c.size.tasks} tasks, "
                f"{c.size.files} files), "
                f"{c.messages:,} messages",
                c,
            )
            for c in learning
        ),
    ]
    texts = {}
    for name, case in named:
        out = io.StringIO()
        pstats.Stats(profilers[id(case)], stream=out).sort_stats("cumulative").print_stats(30)
        texts[name] = out.getvalue()
    return texts


def access_log_growth() -> dict[str, Any]:
    """What the access log (conversations.ReplyMemory) grew by over the run's replies: rows per
    reply, and the table's bytes (with its indexes) per row, from PostgreSQL's own size."""
    from django.conf import settings
    from django.db import connection
    from django.db.models import Count

    from conversations.models import ReplyMemory

    per_reply = list(
        ReplyMemory.objects.values("message_id").annotate(n=Count("memory_id")).values_list("n", flat=True)
    )
    rows = sum(per_reply)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('conversations_replymemory')")
        size = int(cursor.fetchone()[0])
    bytes_per_row = round(size / rows) if rows else 0
    return {
        "replies": len(per_reply),
        "rows": rows,
        "rows_per_reply_max": max(per_reply, default=0),
        "rows_per_reply_mean": round(rows / len(per_reply), 1) if per_reply else 0,
        "rows_bound": settings.MEMORY_TIER_COUNT + settings.MEMORY_LOAD_COUNT + settings.MEMORY_RELEVANT_COUNT,
        "table_bytes": size,
        "bytes_per_row": bytes_per_row,
        "bytes_per_reply_max": bytes_per_row * max(per_reply, default=0),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_TURNS} measured turns per case")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest run, for CI (under 90 s): 10 and 1,000 memories, 10 to 1,000 messages, "
        f"{SMOKE_TURNS} measured turns per case (the compression target cannot pass: no conversation crosses it)",
    )
    parser.add_argument("--turns", type=int, default=None, help=f"measured turns per case (default {DEFAULT_TURNS})")
    parser.add_argument("--seed", type=int, default=20240601, help="random seed for the generated text")
    parser.add_argument(
        "--no-recall", action="store_true", help="prompts carry the 10 latest memories only (no recall in the turn)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the product turns of each case and print the top functions"
    )
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target fails")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if args.no_recall:
        os.environ["BENCH_RELEVANT_COUNT"] = "0"
    turns = args.turns or (SMOKE_TURNS if args.smoke else QUICK_TURNS if args.quick else DEFAULT_TURNS)
    if args.smoke:
        global MEMORY_COUNTS, MESSAGE_COUNTS, LEARNING_MESSAGES
        MEMORY_COUNTS, MESSAGE_COUNTS, LEARNING_MESSAGES = SMOKE_MEMORY_COUNTS, SMOKE_MESSAGE_COUNTS, (10, 100)

    django_setup()
    from django.conf import settings

    rng = random.Random(args.seed)
    started = time.monotonic()
    uninstall_timer = install_model_timer()
    uninstall_recorder = _queries.install()
    with throwaway_database() as database, scripted_model() as server:
        machine = machine_info()
        print(f"Seeding {database} ...", flush=True)
        cells, learning = seed(rng)
        print(
            f"Seeded in {time.monotonic() - started:.0f}s; {len(cells)} cases and {len(learning)} learning-record "
            f"cases, {WARMUP_TURNS} warm-up turns, then {turns} rounds of one product and one baseline turn "
            f"per case and one turn per learning-record case ...",
            flush=True,
        )
        for cell in cells:
            warm_up(cell, server=server, rng=rng)
            server.reset()
        for case in learning:
            warm_up_learning(case, server=server, rng=rng)
            server.reset()
        profilers = {id(c): cProfile.Profile() for c in [*cells, *learning]} if args.profile else None
        measure(cells, learning, server=server, turns=turns, rng=rng, profilers=profilers)
        profiles = profile_texts(cells, learning, profilers) if profilers is not None else {}
        access_log = access_log_growth()
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
    uninstall_recorder()
    targets = evaluate(cells) + learning_targets(cells, learning)
    config["runtime_seconds"] = round(time.monotonic() - started, 1)

    for name, text in profiles.items():
        print(f"\n=== profile of the product turns, {name} ===\n{text}")
    print_report(machine, config, cells, learning, targets)
    print(
        f"\nAccess log: {access_log['rows_per_reply_max']} rows at most per reply "
        f"({access_log['rows_per_reply_mean']} on average, {access_log['replies']} replies), "
        f"{access_log['bytes_per_row']} bytes per row with its indexes: "
        f"{access_log['bytes_per_reply_max']} bytes per reply at most (bound: {access_log['rows_bound']} rows)."
    )

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
        "learning_record": learning_results(cells, learning),
        "targets": targets,
        "running_total_mismatches": len(_naive_mismatches),
        "access_log": access_log,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nResults written to {args.output} (total {config['runtime_seconds']:.0f}s).")
    return 1 if args.strict and not all(t["pass"] for t in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
