"""The local embedder's int8 query side (EMBEDDINGS_QUERY_INT8, the default) against its fp32 model,
through the product's code (memory.search.embeddings.LocalEmbedder), in one run.

    .venv/bin/python bench/embeddings_int8.py /work/shared/bench-data/locomo-session-memories.json \\
        [--queries 400] [--skip-quality] [--smoke]

Prints:
- the int8 side's load: the seconds to build it and the memory it adds to a process (RssAnon and
  VmRSS before and after), built after the fp32 model as a process that embeds memories and
  queries holds both (a web process holds the int8 side alone: bench/recall_memory.py);
- vectors: the cosine of each int8 vector to the fp32 vector of the same text, for every question
  of the set and its topic text (here the question without its first word) embedded together in
  one call (`embed_query`, as recall embeds them), and for each question alone;
- latency: recall's call (the question and its topic text in one call, 1 thread), `embed_query`
  against `embed`, the two taking turns over 4 rounds on `--queries` questions;
- quality: `manage.py recall_eval PATH --strategies hybrid` in a throwaway SQLite database, once
  with EMBEDDINGS_QUERY_INT8 off (the fp32 baseline) and once on, memories in fp32 both times.
`--smoke`: 40 questions, the first conversation for recall_eval.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("DATABASE_URL", None)
os.environ["EMBEDDINGS_BACKEND"] = "local"
os.environ["EMBEDDINGS_QUERY_CACHE_SIZE"] = "0"
os.environ.setdefault("TUTOR_VAR_DIR", tempfile.mkdtemp(prefix="tutor-bench-int8-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import override_settings  # noqa: E402

from memory.search import embeddings  # noqa: E402


def status_mb() -> dict[str, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def recall_quality(path: Path, int8: bool, conversations: int) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="tutor-bench-int8-")) / "report.json"
    args = [str(path), "--strategies", "hybrid", "--json", str(out), "--conversations", str(conversations)]
    with override_settings(EMBEDDINGS_QUERY_INT8=int8):
        call_command("recall_eval", *args, stdout=io.StringIO())
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--queries", type=int, default=400, help="questions timed")
    parser.add_argument("--skip-quality", action="store_true", help="no recall_eval")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.path.read_text())
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    if args.smoke:
        questions = questions[:40]
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}, onnxruntime {ort.__version__}")

    local = embeddings.LocalEmbedder()
    local.embed(["warm-up"])
    before = status_mb()
    started = time.perf_counter()
    with override_settings(EMBEDDINGS_QUERY_INT8=True):
        local.embed_query(["warm-up"])
    built_s = time.perf_counter() - started
    after = status_mb()
    grown = {key: round(after[key] - before[key], 1) for key in after}
    print(f"int8 side: built in {built_s:.2f} s, added (MB) {grown} to a process holding the fp32 model")

    pairs = [[q, q.split(" ", 1)[-1]] for q in questions]
    with override_settings(EMBEDDINGS_QUERY_INT8=True):
        pair_cos = np.concatenate([np.sum(local.embed_query(p) * local.embed(p), axis=1) for p in pairs])
        alone_cos = np.array([float(local.embed_query([q])[0] @ local.embed([q])[0]) for q in questions])
        for name, cos in (("question and topic text in one call", pair_cos), ("question alone", alone_cos)):
            print(
                f"cosine of int8 to fp32, {name}, {len(cos)} vectors: min {cos.min():.4f}, "
                f"1st percentile {np.percentile(cos, 1):.4f}, mean {cos.mean():.4f}, below 0.99: {(cos < 0.99).sum()}"
            )

        timed = pairs[: args.queries]
        times: dict[str, list[float]] = {"fp32": [], "int8": []}
        calls = {"fp32": local.embed, "int8": local.embed_query}
        rounds = 4
        for r in range(rounds):
            for name in ("fp32", "int8") if r % 2 == 0 else ("int8", "fp32"):
                for pair in timed[:3]:
                    calls[name](pair)
                for pair in timed[r::rounds]:
                    t = time.perf_counter()
                    calls[name](pair)
                    times[name].append((time.perf_counter() - t) * 1000)
    base = statistics.median(times["fp32"])
    for name, ms in times.items():
        p50, p95 = float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
        print(f"{name}: query + topic text, p50 {p50:.2f} ms, p95 {p95:.2f} ms, p50 {p50 / base:.2f}x fp32's")
    print(f"load after the latency {os.getloadavg()[0]:.2f}")

    if not args.skip_quality:
        conversations = 1 if args.smoke else len(data["conversations"])
        print("| queries | hit@1 | hit@10 | all@10 | MRR |\n|---|---|---|---|---|")
        for int8 in (False, True):
            row = recall_quality(args.path, int8, conversations)["hybrid"]["all-but-adversarial"]
            name = "int8" if int8 else "fp32"
            print(f"| {name} | {row['hit@1']:.1f} | {row['hit@10']:.1f} | {row['all@10']:.1f} | {row['mrr']:.3f} |")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
