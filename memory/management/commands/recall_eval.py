"""Measure recall on a recall set (format: bench-data/README.md) through the product's own code.

Each conversation's memories are loaded into a throwaway student (with their `created_at`),
indexed and embedded like any memory, and each question is asked through `memory.search.recall.recall`.
Each question and its topic text are embedded in one call through `embeddings.embed_queries`, as
recall embeds them (with the local backend, on the int8 query side unless EMBEDDINGS_QUERY_INT8 is
off); the report's `query_embedding` latency is that call's, for each conversation's first 20.

By default all of it happens in a throwaway database of the command's own, created and migrated
when it starts and removed when it ends, even on an error or Ctrl-C: on SQLite a file in a
temporary directory, on PostgreSQL a database `tutor_recall_eval_<random>` on the configured
server (created and dropped through the `postgres` maintenance database). Nothing in the
configured database is read or written (on SQLite its file is not even opened), so the command
needs no `migrate` first and never holds a lock that a live server's requests would wait for.

`--database-in-place` uses the configured database instead, each conversation in a transaction
rolled back at its end: the database is left as it was, but on SQLite the write lock is held for
the whole conversation (up to minutes with an embedder), so not beside a running server.

Progress goes to stderr (one bar, redrawn in place); the figures go to stdout.

    python manage.py recall_eval /work/shared/bench-data/locomo-session-memories.json --json out.json
    python manage.py recall_eval PATH --ablations          # what each part of hybrid contributes
    python manage.py recall_eval PATH --variant k20:rrf_k=20,semantic_weight=1.2
    python manage.py recall_eval PATH --database-in-place  # in the configured database, rolled back
"""

from __future__ import annotations

import json
import secrets
import signal
import statistics
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from accounts.models import User
from llm.tokens import count_tokens
from memory.management.progress import ProgressBar
from memory.models import AIMemory
from memory.search import embeddings, fts, recall
from memory.search.backend import search_backend
from memory.services.embedding import memory_embeddings_write

KS = (1, 3, 5, 10)
ALL_BUT_ADVERSARIAL = "all-but-adversarial"
ADVERSARIAL = "adversarial"


class _Rollback(Exception):
    pass


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else 0.0


def _plain(text: str) -> str:
    # Django styles a command's stderr as ERROR (red); progress and notes are not errors.
    return text


class _Terminated(SystemExit):
    """SIGTERM, raised where the process is, so that `finally` blocks run as on Ctrl-C."""


def _sigterm_to_exit(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(128 + signum)


def _describe(connection: BaseDatabaseWrapper, name: str) -> str:
    if connection.vendor == "sqlite":
        return f"SQLite file {name}"
    where = ":".join(str(part) for part in (connection.settings_dict["HOST"], connection.settings_dict["PORT"]) if part)
    return f"{connection.display_name} database {name}" + (f" on {where}" if where else "")


@contextmanager
def throwaway_database(*, note: Callable[[str], None], alias: str = DEFAULT_DB_ALIAS) -> Iterator[str]:
    """Point `alias` at a new database, migrated quietly, for the block; remove it afterwards.

    Django's test-database machinery does the work (`create_test_db` / `destroy_test_db`, with
    the name in `TEST["NAME"]`): on SQLite a file in a new temporary directory, on PostgreSQL
    `tutor_recall_eval_<random>`, created and dropped through the `postgres` maintenance
    database. Nothing in the configured database is read or written. The throwaway database is
    removed when the block ends, on an exception, Ctrl-C or SIGTERM too (SIGTERM raises
    SystemExit meanwhile), and the connection settings are restored. Only SIGKILL or a second
    interrupt during the removal leaves it behind; `note` has named it.
    """
    connection = connections[alias]
    configured_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict["TEST"]
    configured_test_name = test_settings["NAME"]
    directory = tempfile.TemporaryDirectory(prefix="tutor-recall-eval-") if connection.vendor == "sqlite" else None
    if directory is not None:
        name = str(Path(directory.name) / "recall_eval.sqlite3")
    else:
        name = f"tutor_recall_eval_{secrets.token_hex(8)}"
    previous_sigterm = None
    if threading.current_thread() is threading.main_thread():
        previous_sigterm = signal.signal(signal.SIGTERM, _sigterm_to_exit)
    try:
        test_settings["NAME"] = name
        note(f"database: a throwaway {_describe(connection, name)}, migrated now and removed at the end")
        if connection.vendor == "postgresql":
            # A pool opened on the configured database would hand its connections out again.
            connection.close_pool()  # type: ignore[attr-defined]
        try:
            connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        except _Terminated:
            raise
        except SystemExit as exc:
            # Django's creation has logged why (e.g. no CREATEDB privilege) and exits.
            raise CommandError(
                f"could not create the throwaway database {name}; --database-in-place uses the configured one"
            ) from exc
        yield name
    finally:
        try:
            # Switched to it (create_test_db does so before migrating): remove it.
            if connection.settings_dict["NAME"] == name:
                if directory is None:
                    connection.creation.destroy_test_db(configured_name, verbosity=0)
                else:
                    # The file goes with its directory below. It may not exist yet (interrupted
                    # before the first connection), which destroy_test_db does not expect.
                    connection.close()
                    settings.DATABASES[alias]["NAME"] = connection.settings_dict["NAME"] = configured_name
        finally:
            test_settings["NAME"] = configured_test_name
            if directory is not None:
                directory.cleanup()
            if previous_sigterm is not None:
                signal.signal(signal.SIGTERM, previous_sigterm)


def load_conversation(conversation: dict[str, Any], *, prefix: str, language: str) -> tuple[User, list[AIMemory]]:
    """A new student holding the conversation's memories (with their `created_at`), indexed;
    the memories in the set's order. Not embedded: the caller embeds with its embedder."""
    student = User.objects.create_user(
        username=f"{prefix}-{uuid.uuid4().hex[:12]}", role=User.Role.STUDENT, language=language
    )
    memories = AIMemory.objects.bulk_create(
        [
            AIMemory(
                student=student,
                kind=AIMemory.Kind.NOTE,
                source=AIMemory.Source.SAVE_MEMORY_TOOL,
                title=m["title"][:200],
                content=m["content"],
                token_count=count_tokens(fts.memory_text(m["title"], m["content"])),
                created_at=_parse_time(m["created_at"]),
            )
            for m in conversation["memories"]
        ]
    )
    search_backend().index(
        fts.IndexRow(mem.pk, student.pk, fts.memory_text(mem.title, mem.content), language) for mem in memories
    )
    return student, memories


class Command(BaseCommand):
    help = (
        "Recall quality (hit@k, all@k, MRR, tokens) and latency per strategy on a recall set, measured in a "
        "throwaway database created, migrated and removed by the command (--database-in-place: the configured one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--json", dest="json_path", type=Path, help="also write the figures as JSON here")
        parser.add_argument("--strategies", default=",".join(recall.STRATEGIES))
        parser.add_argument(
            "--variant",
            action="append",
            default=[],
            help="an extra hybrid strategy, NAME:field=value,... (fields of memory.search.recall.RecallConfig)",
        )
        parser.add_argument("--ablations", action="store_true", help="add the hybrid ablation variants")
        parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
        parser.add_argument("--language", default="en", help="the throwaway students' language")
        parser.add_argument(
            "--database-in-place",
            action="store_true",
            help="use the configured database instead of a throwaway one, each conversation in a transaction "
            "rolled back at its end (on SQLite this holds the write lock meanwhile: not beside a running server)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            data = json.loads(path.read_text())
            conversations = data["conversations"]
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"{path}: not a recall set ({exc})") from exc
        if options["conversations"]:
            conversations = conversations[: options["conversations"]]
        base = recall.RecallConfig()
        strategies: dict[str, tuple[str, recall.RecallConfig]] = {
            name: (name, base) for name in options["strategies"].split(",") if name
        }
        for name in strategies:
            if name not in recall.STRATEGIES:
                raise CommandError(f"unknown strategy {name!r}")
        variants = list(options["variant"])
        if options["ablations"]:
            variants += [
                "rrf-plain:score_fusion=0,lexical_weight=1,semantic_weight=1,relation_weight=0,"
                "decay_half_life_days=0,rrf_k=60",
                "rrf-k5-lex1.2:score_fusion=0,rrf_k=5,lexical_weight=1.2",
                "zscore-no-dates:date_weight=0",
                "zscore-equal-weights:lexical_weight=1",
                "default-no-floors:lexical_floor=inf,semantic_floor=inf",
                "zscore-whole-vectors:sentence_mix=0",
                "default-no-topic:topic_weight=0",
                "default-no-relations:relation_weight=0",
                "default+decay-90d:decay_half_life_days=90",
                "default+decay-30d:decay_half_life_days=30",
            ]
        for spec in variants:
            name, _, assignments = spec.partition(":")
            changes: dict[str, Any] = {}
            for item in filter(None, assignments.split(",")):
                key, _, value = item.partition("=")
                if key not in recall.RecallConfig.__dataclass_fields__:
                    raise CommandError(f"unknown RecallConfig field {key!r}")
                changes[key] = type(getattr(base, key))(float(value))
            strategies[name] = ("hybrid", base.with_(**changes))

        embedder = embeddings.get_embedder()
        self._note(f"embedder: {embedder.name if embedder else 'none (semantic falls back to lexical)'}")
        try:
            if options["database_in_place"]:
                connection = connections[DEFAULT_DB_ALIAS]
                self._note(
                    f"database: the configured {_describe(connection, str(connection.settings_dict['NAME']))}, "
                    "each conversation rolled back"
                )
                report = self._evaluate(conversations, strategies, embedder, options["language"])
            else:
                with throwaway_database(note=self._note):
                    report = self._evaluate(conversations, strategies, embedder, options["language"])
        except KeyboardInterrupt:
            raise CommandError("interrupted", returncode=130) from None
        self._print(report)
        if options["json_path"]:
            options["json_path"].write_text(json.dumps(report, indent=2))
            self.stdout.write(f"wrote {options['json_path']}")

    def _note(self, text: str) -> None:
        self.stderr.write(text, style_func=_plain)

    def _evaluate(
        self,
        conversations: list[dict[str, Any]],
        strategies: dict[str, tuple[str, recall.RecallConfig]],
        embedder: embeddings.Embedder | None,
        language: str,
    ) -> dict[str, Any]:
        questions = sum(len(conversation["questions"]) for conversation in conversations)
        self._note(f"{len(conversations)} conversations, {questions} questions, {len(strategies)} strategies")
        ranks: dict[str, list[tuple[str, list[str], set[str], int]]] = defaultdict(list)
        latencies: dict[str, list[float]] = defaultdict(list)
        embed_latencies: list[float] = []
        started = time.monotonic()
        bar = ProgressBar(questions * len(strategies), unit="searches")
        try:
            for conversation in conversations:
                self._conversation(conversation, strategies, embedder, language, ranks, latencies, embed_latencies, bar)
        finally:
            bar.close()
        self._note(f"done in {time.monotonic() - started:.0f}s")
        return self._report(ranks, latencies, embed_latencies)

    def _conversation(
        self,
        conversation: dict[str, Any],
        strategies: dict[str, tuple[str, recall.RecallConfig]],
        embedder: embeddings.Embedder | None,
        language: str,
        ranks: dict[str, list[tuple[str, list[str], set[str], int]]],
        latencies: dict[str, list[float]],
        embed_latencies: list[float],
        bar: ProgressBar,
    ) -> None:
        # The throwaway student lives in a transaction rolled back at the end (in a throwaway
        # database too, so that each conversation is measured alone, as with --database-in-place);
        # the vector cache keeps what it reads inside it until then.
        label = conversation.get("id", "")
        bar.update(status=f"{label}: loading {len(conversation['memories'])} memories")
        try:
            with recall.vector_cache.scope(), transaction.atomic():
                student, memories = load_conversation(conversation, prefix="recall-eval", language=language)
                external = {mem.pk: m["id"] for mem, m in zip(memories, conversation["memories"], strict=True)}
                tokens = {m["id"]: mem.token_count for mem, m in zip(memories, conversation["memories"], strict=True)}
                questions = conversation["questions"]
                vectors: Any = [None] * len(questions)
                topic_vectors: list[Any] = [None] * len(questions)
                base = recall.RecallConfig()
                if embedder is not None:
                    bar.update(status=f"{label}: embedding")
                    memory_embeddings_write(memory_ids=list(external), embedder=embedder)
                    # Each question with its topic text (the question without the student's
                    # ubiquitous words) in one call through the query path, as recall embeds them
                    # (the int8 query side by default); recall embeds the topic text itself for a
                    # variant that changes how it is chosen.
                    for i, q in enumerate(questions):
                        topic = recall.topic_query(
                            student_id=student.pk, query=q["question"], language=language, config=base
                        )
                        t = time.perf_counter()
                        pair = embeddings.embed_queries(embedder, [q["question"], *([topic] if topic else [])])
                        if i < 20:
                            embed_latencies.append((time.perf_counter() - t) * 1000)
                        vectors[i] = pair[0]
                        topic_vectors[i] = pair[1] if topic else None
                now = max(mem.created_at for mem in memories)
                recall.vector_cache.clear()
                bar.update(status=f"{label}: searching")
                for name, (strategy, config) in strategies.items():
                    same_topics = (config.topic_common_share, config.topic_min_memories) == (
                        base.topic_common_share,
                        base.topic_min_memories,
                    )
                    for question, vector, topic_vector in zip(questions, vectors, topic_vectors, strict=True):
                        result = recall.recall(
                            student_id=student.pk,
                            query=question["question"],
                            limit=10,
                            strategy=strategy,
                            language=language,
                            config=config,
                            now=now,
                            query_vector=vector,
                            topic_vector=topic_vector if same_topics else None,
                            embedder=embedder,
                        )
                        latencies[name].append(result.search_ms)
                        top = [external[pk] for pk in result.ids]
                        ranks[name].append(
                            (question["category"], top, set(question["evidence"]), sum(tokens[i] for i in top))
                        )
                        bar.update(1)
                raise _Rollback
        except _Rollback:
            pass

    def _report(
        self,
        ranks: dict[str, list[tuple[str, list[str], set[str], int]]],
        latencies: dict[str, list[float]],
        embed_latencies: list[float],
    ) -> dict[str, Any]:
        report: dict[str, Any] = {}
        for name, rows in ranks.items():
            groups: dict[str, list[tuple[list[str], set[str], int]]] = defaultdict(list)
            for category, top, evidence, tokens in rows:
                groups[category].append((top, evidence, tokens))
                if category != ADVERSARIAL:
                    groups[ALL_BUT_ADVERSARIAL].append((top, evidence, tokens))
            report[name] = {category: _metrics(items) for category, items in sorted(groups.items())}
        report["latency_ms"] = {
            name: {
                "p50": round(statistics.median(values), 3),
                "p95": round(_percentile(values, 95), 3),
                "n": len(values),
            }
            for name, values in latencies.items()
        }
        if embed_latencies:
            report["latency_ms"]["query_embedding"] = {
                "p50": round(statistics.median(embed_latencies), 3),
                "p95": round(_percentile(embed_latencies, 95), 3),
                "n": len(embed_latencies),
            }
        return report

    def _print(self, report: dict[str, Any]) -> None:
        header = (
            f"{'strategy':<24}{'category':<21}{'n':>5}"
            + "".join(f"{'hit@' + str(k):>8}" for k in KS)
            + "".join(f"{'all@' + str(k):>8}" for k in KS)
            + f"{'MRR':>8}{'tok@10':>8}"
        )
        self.stdout.write(header)
        for name, categories in report.items():
            if name == "latency_ms":
                continue
            for category, m in categories.items():
                self.stdout.write(
                    f"{name:<24}{category:<21}{m['n']:>5}"
                    + "".join(f"{m[f'hit@{k}']:>8.1f}" for k in KS)
                    + "".join(f"{m[f'all@{k}']:>8.1f}" for k in KS)
                    + f"{m['mrr']:>8.3f}{m['tokens@10']:>8.0f}"
                )
        self.stdout.write("\nrecall latency (ms, without the query embedding):")
        for name, lat in report["latency_ms"].items():
            self.stdout.write(f"  {name:<24} p50 {lat['p50']:>8.2f}  p95 {lat['p95']:>8.2f}  (n={lat['n']})")


def _metrics(items: list[tuple[list[str], set[str], int]]) -> dict[str, float]:
    n = len(items)
    out: dict[str, float] = {"n": n}
    for k in KS:
        out[f"hit@{k}"] = round(100.0 * sum(bool(ev & set(top[:k])) for top, ev, _ in items) / n, 1) if n else 0.0
        out[f"all@{k}"] = round(100.0 * sum(ev <= set(top[:k]) for top, ev, _ in items) / n, 1) if n else 0.0
    reciprocal = []
    for top, evidence, _ in items:
        first = next((i for i, memory_id in enumerate(top, start=1) if memory_id in evidence), None)
        reciprocal.append(1.0 / first if first else 0.0)
    out["mrr"] = round(sum(reciprocal) / n, 4) if n else 0.0
    out["tokens@10"] = round(sum(t for _, _, t in items) / n, 1) if n else 0.0
    return out
