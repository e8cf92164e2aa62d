"""Measure recall on a recall set (format: bench-data/README.md) through the product's own code.

Each conversation's memories are loaded into a throwaway student (with their `created_at`),
indexed and embedded like any memory, each question is asked through `memory.recall.recall`,
and everything is rolled back afterwards: the database is left as it was.

    python manage.py recall_eval /work/shared/bench-data/locomo-session-memories.json --json out.json
    python manage.py recall_eval PATH --ablations          # what each part of hybrid contributes
    python manage.py recall_eval PATH --variant k20:rrf_k=20,semantic_weight=1.2
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.models import User
from llm.tokens import count_tokens
from memory import embeddings, fts, recall
from memory.models import AIMemory
from memory.services import memory_embeddings_write

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


class Command(BaseCommand):
    help = "Recall quality (hit@k, all@k, MRR, tokens) and latency per strategy on a recall set."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--json", dest="json_path", type=Path, help="also write the figures as JSON here")
        parser.add_argument("--strategies", default=",".join(recall.STRATEGIES))
        parser.add_argument(
            "--variant",
            action="append",
            default=[],
            help="an extra hybrid strategy, NAME:field=value,... (fields of memory.recall.RecallConfig)",
        )
        parser.add_argument("--ablations", action="store_true", help="add the hybrid ablation variants")
        parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
        parser.add_argument("--language", default="en", help="the throwaway students' language")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        try:
            data = json.loads(path.read_text())
            conversations = data["conversations"]
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(f"{path}: not a recall set ({exc})") from exc
        if options["conversations"]:
            conversations = conversations[: options["conversations"]]
        base = recall.RecallConfig.from_settings()
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
        self.stderr.write(f"embedder: {embedder.name if embedder else 'none (semantic falls back to lexical)'}")
        ranks: dict[str, list[tuple[str, list[str], set[str], int]]] = defaultdict(list)
        latencies: dict[str, list[float]] = defaultdict(list)
        embed_latencies: list[float] = []
        started = time.monotonic()
        for conversation in conversations:
            self._conversation(
                conversation, strategies, embedder, options["language"], ranks, latencies, embed_latencies
            )
            self.stderr.write(f"  {conversation.get('id')}: {len(conversation['questions'])} questions")
        report = self._report(ranks, latencies, embed_latencies)
        self.stderr.write(f"done in {time.monotonic() - started:.0f}s")
        self._print(report)
        if options["json_path"]:
            options["json_path"].write_text(json.dumps(report, indent=2))
            self.stdout.write(f"wrote {options['json_path']}")

    def _conversation(
        self,
        conversation: dict[str, Any],
        strategies: dict[str, tuple[str, recall.RecallConfig]],
        embedder: embeddings.Embedder | None,
        language: str,
        ranks: dict[str, list[tuple[str, list[str], set[str], int]]],
        latencies: dict[str, list[float]],
        embed_latencies: list[float],
    ) -> None:
        # The throwaway student lives in a transaction rolled back at the end; the vector cache
        # keeps what it reads inside it until then.
        try:
            with recall.vector_cache.scope(), transaction.atomic():
                student = User.objects.create_user(
                    username=f"recall-eval-{uuid.uuid4().hex[:12]}", role=User.Role.STUDENT, language=language
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
                external = {mem.pk: m["id"] for mem, m in zip(memories, conversation["memories"], strict=True)}
                tokens = {m["id"]: mem.token_count for mem, m in zip(memories, conversation["memories"], strict=True)}
                fts.memory_index(
                    fts.IndexRow(mem.pk, student.pk, fts.memory_text(mem.title, mem.content), language)
                    for mem in memories
                )
                questions = conversation["questions"]
                vectors: Any = [None] * len(questions)
                topic_vectors: list[Any] = [None] * len(questions)
                base = recall.RecallConfig.from_settings()
                if embedder is not None:
                    memory_embeddings_write(memory_ids=list(external), embedder=embedder)
                    vectors = embedder.embed([q["question"] for q in questions])
                    # Topic texts (the question without the student's ubiquitous words), embedded
                    # in one batch too; recall embeds them itself for a variant that changes how.
                    topics = [
                        recall.topic_query(student_id=student.pk, query=q["question"], language=language, config=base)
                        for q in questions
                    ]
                    wanted = [i for i, topic in enumerate(topics) if topic]
                    for i, vector in zip(wanted, embedder.embed([topics[i] or "" for i in wanted]), strict=True):
                        topic_vectors[i] = vector
                    for q in questions[:20]:
                        t = time.perf_counter()
                        embedder.embed([q["question"]])
                        embed_latencies.append((time.perf_counter() - t) * 1000)
                now = max(mem.created_at for mem in memories)
                recall.vector_cache.clear()
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
