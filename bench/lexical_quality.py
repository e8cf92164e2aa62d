"""Recall quality on PostgreSQL with each lexical engine: BM25 over the postings (as shipped) or
PostgreSQL's own full text, a tsvector column with a GIN index ranked by `ts_rank_cd` or `ts_rank`.

    .venv/bin/python scripts/pgsearch.py start /tmp/pg-lexq    # prints postgres://...:PORT/tutor_test
    DATABASE_URL=postgres://postgres@127.0.0.1:PORT/tutor_test \\
        .venv/bin/python bench/lexical_quality.py /work/shared/bench-data/locomo-session-memories.json \\
        [--engines bm25,ts_rank_cd,ts_rank/1,ts_rank_cd@pg,...] [--conversations N] [--json out.json] [--smoke]

Each engine is one run of `manage.py recall_eval PATH --strategies lexical,hybrid`, in this
process and in the command's own throwaway database (created, migrated and dropped by it, so
the configured database is never written), with only the lexical signal swapped:

- `bm25`: `memory.search.postings` as shipped (postings, BM25, MaxScore pruning);
- `ts_rank_cd[/N]`, `ts_rank[/N]`: `PostgresSearch.index` / `unindex` (memory.search.postgres) also maintain a
  scratch table `scratch_tsv (memory_id, student_id, tsv, tsv_pg)` with GIN indexes on both
  tsvectors, created by a post_migrate handler in the throwaway database. `tsv` is `to_tsvector('simple', ...)` of the
  terms of `memory.search.fts.analyse` joined by spaces, so both engines see the same stemmed terms
  (positions are those of the analysed terms, stop words left out). `PostgresSearch.lexical` becomes
  the student's memories with `tsv @@ to_tsquery('simple', 't1 | t2 | ...')`, ranked by
  `ts_rank_cd(tsv, query, N)` (or `ts_rank`; N the normalization, 0 by default), best first,
  ties by memory id as BM25's;
- a suffix `@pg` (`ts_rank_cd@pg`): PostgreSQL's own analysis instead, of the raw text with the
  student's language configuration (`english`: its parser, stop words and Snowball stemmer,
  positions of the original words, no accent folding), the query's lexemes ORed.

The postings and statistics are written in every run: the topic signal of hybrid reads their
document frequencies, so it is the same for every engine and only the lexical ranking differs.
The configured embedder (EMBEDDINGS_BACKEND, the local MiniLM by default) makes hybrid real
hybrid. Its vectors are kept in this process by batch of texts (the same batches in the same
order each run), so the first engine's run embeds the 272 memories and ~2,000 questions and the
others reuse exactly those vectors; the query-embedding latency that recall_eval reports is
therefore only meaningful for the first engine. Quality figures are deterministic; latency is
bench/lexical_alternatives.py's (10,000 memories), not the 19-32 memories of these students.

Prints, for each engine, the lexical-only and hybrid rows over the non-adversarial questions
(hit@1/3/5/10, all@1/3/5/10, MRR) as a Markdown table, then hit@1 / hit@10 / MRR per category,
then each engine against the first one (bm25 by default) question by question: the questions it
wins and loses at hit@1, hit@10 and all@10, and its MRR difference with a 95 % bootstrap
interval. The top memories of every search are read by wrapping `memory.search.recall.recall`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import django
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.db.models.signals import post_migrate  # noqa: E402

from bench.machine import cores, cpu_model, load, ram_gb  # noqa: E402
from memory.models import AIMemory  # noqa: E402
from memory.search import embeddings, fts, recall  # noqa: E402
from memory.search.postgres import PostgresSearch  # noqa: E402

KS = (1, 3, 5, 10)
STRATEGIES = ("lexical", "hybrid")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")
SCRATCH_DDL = (
    "CREATE TABLE IF NOT EXISTS scratch_tsv (memory_id bigint PRIMARY KEY, student_id bigint NOT NULL, "
    "tsv tsvector NOT NULL, tsv_pg tsvector NOT NULL)",
    "CREATE INDEX IF NOT EXISTS scratch_tsv_gin ON scratch_tsv USING gin (tsv)",
    "CREATE INDEX IF NOT EXISTS scratch_tsv_pg_gin ON scratch_tsv USING gin (tsv_pg)",
    "CREATE INDEX IF NOT EXISTS scratch_tsv_student ON scratch_tsv (student_id)",
)
_ENGINE = re.compile(r"^(?P<function>ts_rank_cd|ts_rank)(?:/(?P<normalization>\d+))?(?P<pg>@pg)?$")


@dataclass(frozen=True)
class Engine:
    """One lexical engine: `function` None is BM25 as shipped."""

    name: str
    function: str | None = None
    normalization: int = 0
    native: bool = False  # PostgreSQL's own analysis of the raw text (`@pg`)

    @classmethod
    def parse(cls, name: str) -> Engine:
        if name == "bm25":
            return cls(name)
        match = _ENGINE.match(name)
        if match is None:
            raise SystemExit(f"unknown engine {name!r}: bm25, ts_rank_cd[/N][@pg] or ts_rank[/N][@pg]")
        return cls(name, match["function"], int(match["normalization"] or 0), bool(match["pg"]))


def _config(language: str) -> str:
    """The PostgreSQL text search configuration of a student's language."""
    return fts.LANGUAGES.get(language, fts.LANGUAGES[fts.DEFAULT_LANGUAGE])


def _create_scratch(sender: Any, app_config: Any = None, using: str = "default", **kwargs: Any) -> None:
    """post_migrate: the scratch table in the database just migrated (recall_eval's throwaway one)."""
    if getattr(app_config, "label", None) != "memory":
        return
    with connections[using].cursor() as cursor:
        for statement in SCRATCH_DDL:
            cursor.execute(statement)


def _tsv_index(original: Any) -> Any:
    def memory_index(self: PostgresSearch, rows: Iterable[fts.IndexRow]) -> None:
        rows = list(rows)
        original(self, rows)  # the postings too: hybrid's topic signal reads their statistics
        if not rows:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO scratch_tsv (memory_id, student_id, tsv, tsv_pg) "
                "SELECT id, student, to_tsvector('simple', terms), to_tsvector(config::regconfig, body) "
                "FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[]) "
                "AS r(id, student, terms, config, body) "
                "ON CONFLICT (memory_id) DO UPDATE SET student_id = EXCLUDED.student_id, tsv = EXCLUDED.tsv, "
                "tsv_pg = EXCLUDED.tsv_pg",
                [
                    [r.memory_id for r in rows],
                    [r.student_id for r in rows],
                    [" ".join(fts.analyse(r.text, r.language)) for r in rows],
                    [_config(r.language) for r in rows],
                    [r.text for r in rows],
                ],
            )

    return memory_index


def _tsv_unindex(original: Any) -> Any:
    def memory_unindex(self: PostgresSearch, memory_ids: Iterable[int]) -> None:
        ids = [int(pk) for pk in memory_ids]
        original(self, ids)
        if ids:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM scratch_tsv WHERE memory_id = ANY(%s::bigint[])", [ids])

    return memory_unindex


def _tsv_search(engine: Engine) -> Any:
    if engine.function not in ("ts_rank_cd", "ts_rank"):  # the only text put into the SQL
        raise ValueError(f"not a ranking function: {engine.function!r}")
    column = "tsv_pg" if engine.native else "tsv"
    if engine.native:
        # plainto_tsquery ANDs the query's lexemes; recall ORs them, as BM25's search does.
        query_sql = "replace(plainto_tsquery(%(config)s::regconfig, %(query)s)::text, ' & ', ' | ')::tsquery"
    else:
        query_sql = "to_tsquery('simple', %(query)s)"
    sql = (
        f"SELECT memory_id, {engine.function}({column}, q, %(normalization)s) AS score "
        f"FROM scratch_tsv, (SELECT {query_sql} AS q) AS query "
        f"WHERE student_id = %(student)s AND {column} @@ q "
        "ORDER BY score DESC, memory_id DESC LIMIT %(limit)s"
    )

    def search(
        self: PostgresSearch, *, student_id: int, query: str, language: str, limit: int, statistics: Any = None
    ) -> list[tuple[int, float]]:
        terms = fts.query_terms(query, language)
        if not terms or limit <= 0:
            return []
        params: dict[str, Any] = {
            "query": query if engine.native else " | ".join(terms),
            "config": _config(language),
            "normalization": engine.normalization,
            "student": student_id,
            "limit": limit,
        }
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [(int(pk), float(score)) for pk, score in cursor.fetchall()]

    return search


class BatchMemo:
    """The configured embedder, its results kept by batch of texts: every engine's run asks for
    the same batches in the same order, and gets exactly the first run's vectors."""

    def __init__(self, inner: embeddings.Embedder) -> None:
        self.inner = inner
        self.batches: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        key = tuple(texts)
        if key not in self.batches:
            self.batches[key] = self.inner.embed(texts, student_id=student_id)
        return self.batches[key].copy()

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.inner, attribute)


@contextmanager
def engine_patched(engine: Engine) -> Iterator[None]:
    """PostgreSQL's search (memory.search.postgres) with `engine` as its lexical search, for the
    block (nothing for bm25)."""
    if engine.function is None:
        yield
        return
    post_migrate.connect(_create_scratch, dispatch_uid="bench.lexical_quality")
    try:
        with ExitStack() as stack:
            stack.enter_context(mock.patch.object(PostgresSearch, "index", _tsv_index(PostgresSearch.index)))
            stack.enter_context(mock.patch.object(PostgresSearch, "unindex", _tsv_unindex(PostgresSearch.unindex)))
            stack.enter_context(mock.patch.object(PostgresSearch, "lexical", _tsv_search(engine)))
            yield
    finally:
        post_migrate.disconnect(dispatch_uid="bench.lexical_quality")


class Recorder:
    """Wraps memory.search.recall.recall to keep each search's top memories, as the recall set's ids
    (memory contents are unique in it), in the order recall_eval asks: conversation by
    conversation, strategy by strategy, question by question."""

    def __init__(self, conversations: list[dict[str, Any]]) -> None:
        self.by_content = {m["content"]: m["id"] for c in conversations for m in c["memories"]}
        self.external: dict[int, str] = {}
        self.searches: list[tuple[str, str, list[str]]] = []  # (strategy, query, top ids)

    def wrap(self, original: Any) -> Any:
        def recall_recorded(**kwargs: Any) -> Any:
            result = original(**kwargs)
            unknown = [pk for pk in result.ids if pk not in self.external]
            if unknown:
                for pk, content in AIMemory.objects.filter(pk__in=unknown).values_list("pk", "content"):
                    self.external[pk] = self.by_content[content]
            self.searches.append((kwargs["strategy"], kwargs["query"], [self.external[pk] for pk in result.ids]))
            return result

        return recall_recorded


def per_question(conversations: list[dict[str, Any]], searches: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    """{strategy: [(category, rank of the first evidence memory or 0, all evidence in the top 10)]}
    in the recall set's order."""
    out: dict[str, list[tuple[str, int, bool]]] = {s: [] for s in STRATEGIES}
    searched = iter(searches)
    for conversation in conversations:
        for strategy in STRATEGIES:
            for question in conversation["questions"]:
                done, query, top = next(searched)
                if (done, query) != (strategy, question["question"]):
                    raise RuntimeError(f"recall_eval searched {done} {query!r}, expected {strategy} {question!r}")
                evidence = set(question["evidence"])
                first = next((i for i, memory_id in enumerate(top, start=1) if memory_id in evidence), 0)
                out[strategy].append((question["category"], first, evidence <= set(top)))
    return out


def run_engine(engine: Engine, path: Path, conversations: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    out = workdir / f"{engine.name.replace('/', '-')}.json"
    args = [str(path), "--strategies", ",".join(STRATEGIES), "--json", str(out)]
    args += ["--conversations", str(len(conversations))]
    recorder = Recorder(conversations)
    started = time.monotonic()
    with engine_patched(engine), mock.patch.object(recall, "recall", recorder.wrap(recall.recall)):
        call_command("recall_eval", *args, stdout=io.StringIO())
    report: dict[str, Any] = json.loads(out.read_text())
    report["seconds"] = round(time.monotonic() - started, 1)
    report["questions"] = per_question(conversations, recorder.searches)
    return report


def paired(base: list[tuple[str, int, bool]], other: list[tuple[str, int, bool]]) -> dict[str, Any]:
    """`other` against `base` on the same non-adversarial questions: hit@1 won and lost, the MRR
    difference with a 95 % bootstrap interval (questions resampled, seed fixed)."""
    pairs = [(b, o) for b, o in zip(base, other, strict=True) if b[0] != "adversarial"]
    rr = np.array([[1 / b[1] if b[1] else 0.0, 1 / o[1] if o[1] else 0.0] for b, o in pairs])
    diff = rr[:, 1] - rr[:, 0]
    rng = np.random.default_rng(0)
    means = np.array([diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(2000)])
    return {
        "n": len(pairs),
        "hit@1 won": sum(o[1] == 1 and b[1] != 1 for b, o in pairs),
        "hit@1 lost": sum(b[1] == 1 and o[1] != 1 for b, o in pairs),
        "hit@10 won": sum(bool(o[1]) and not b[1] for b, o in pairs),
        "hit@10 lost": sum(bool(b[1]) and not o[1] for b, o in pairs),
        "all@10 won": sum(o[2] and not b[2] for b, o in pairs),
        "all@10 lost": sum(b[2] and not o[2] for b, o in pairs),
        "mrr diff": round(float(diff.mean()), 4),
        "mrr diff 95%": [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)],
    }


def machine() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    connection.close()  # recall_eval points the connection at its throwaway database
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "nproc": cores(),
        "cpu": cpu_model(),
        "ram_gb": ram_gb(),
        "load_at_start": load(),
        "database": f"postgresql {version}",
        "python": platform.python_version(),
    }


def print_tables(reports: dict[str, dict[str, Any]]) -> None:
    header = ["engine", "strategy", *[f"hit@{k}" for k in KS], *[f"all@{k}" for k in KS], "MRR"]
    print("\nNon-adversarial questions (%):\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for strategy in STRATEGIES:
        for engine, report in reports.items():
            m = report[strategy]["all-but-adversarial"]
            cells = [engine, strategy, *[f"{m[f'hit@{k}']:.1f}" for k in KS], *[f"{m[f'all@{k}']:.1f}" for k in KS]]
            print("| " + " | ".join([*cells, f"{m['mrr']:.3f}"]) + " |")
    print("\nBy category, hit@1 / hit@10 / MRR (n):\n")
    counts = {c: reports[next(iter(reports))]["lexical"].get(c, {}).get("n", 0) for c in CATEGORIES}
    print("| engine | strategy | " + " | ".join(f"{c} ({counts[c]:.0f})" for c in CATEGORIES) + " |")
    print("|" + "---|" * (len(CATEGORIES) + 2))
    for strategy in STRATEGIES:
        for engine, report in reports.items():
            cells = []
            for category in CATEGORIES:
                m = report[strategy].get(category)
                cells.append(f"{m['hit@1']:.1f} / {m['hit@10']:.1f} / {m['mrr']:.3f}" if m else "")
            print(f"| {engine} | {strategy} | " + " | ".join(cells) + " |")
    base = next(iter(reports))
    print(f"\nEach engine against {base} on the same non-adversarial questions (questions won / lost):\n")
    print("| engine | strategy | hit@1 | hit@10 | all@10 | MRR difference (95 % bootstrap) |")
    print("|---|---|---|---|---|---|")
    for strategy in STRATEGIES:
        for engine, report in reports.items():
            if engine == base:
                continue
            p = report["paired"][strategy]
            low, high = p["mrr diff 95%"]
            print(
                f"| {engine} | {strategy} | +{p['hit@1 won']} / -{p['hit@1 lost']} | +{p['hit@10 won']} / "
                f"-{p['hit@10 lost']} | +{p['all@10 won']} / -{p['all@10 lost']} | "
                f"{p['mrr diff']:+.3f} [{low:+.3f}, {high:+.3f}] |"
            )
    print("\nrecall_eval's latency on these 19-32-memory students (ms, p50 / p95; not the latency reference):")
    for engine, report in reports.items():
        lat = report["latency_ms"]
        print(
            f"  {engine:<16}"
            + "  ".join(f"{s} {lat[s]['p50']:.2f} / {lat[s]['p95']:.2f}" for s in STRATEGIES)
            + f"  ({report['seconds']:.0f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="a recall set (bench-data/README.md)")
    parser.add_argument("--engines", default="bm25,ts_rank_cd,ts_rank_cd/2,ts_rank_cd@pg,ts_rank/1,ts_rank/1@pg")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--json", type=Path, help="also write the machine and every engine's report here")
    parser.add_argument("--smoke", action="store_true", help="for CI: BM25 alone on the first conversation")
    args = parser.parse_args()
    if args.smoke:
        args.engines, args.conversations = "bm25", 1
    if connection.vendor != "postgresql":
        raise SystemExit("bench/lexical_quality.py compares PostgreSQL engines: set DATABASE_URL to a PostgreSQL one")
    engines = [Engine.parse(name) for name in args.engines.split(",") if name]
    results: dict[str, Any] = {"machine": machine(), "engines": {}}
    print(json.dumps(results["machine"]), flush=True)
    embedder = embeddings.get_embedder()
    print(f"embedder: {embedder.name if embedder else 'none (hybrid is lexical only)'}", flush=True)
    memo = BatchMemo(embedder) if embedder is not None else None
    conversations = json.loads(args.path.read_text())["conversations"]
    if args.conversations:
        conversations = conversations[: args.conversations]
    with mock.patch.object(embeddings, "get_embedder", lambda: memo), tempfile.TemporaryDirectory() as workdir:
        for engine in engines:
            print(f"engine {engine.name}", flush=True)
            results["engines"][engine.name] = run_engine(engine, args.path, conversations, Path(workdir))
    reports = results["engines"]
    base = reports[engines[0].name]["questions"]
    for report in reports.values():
        report["paired"] = {s: paired(base[s], report["questions"][s]) for s in STRATEGIES}
    print_tables(results["engines"])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
