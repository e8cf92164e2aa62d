"""The learned screen's cost per student message (`safety.learned.screen_message`), on the blind
sets with each message's context, against another checkout measured in the same run.

Each case of the blind sets (safety/corpus/blind, 1,223 messages, most with the student's
previous messages) is screened in three ways, each timed in wall-clock and CPU time
(`time.process_time`, every thread of the process):

- turn: the message is new and its context was screened before (each previous message embedded
  alone, untimed, as its own turn did): what a chat turn costs once a conversation is going;
- cold: nothing embedded before (the embedders' cache emptied): the message and its context are
  all embedded, as in a process that has not seen the conversation;
- n-grams: the sparse part alone (`safety.learned.features.sparse_row`), the message and its
  context.

The table gives each over all the cases, then over those with a context (255 of the 1,223).

With `--tree PATH` (another checkout of the repository, such as main's), each round screens the
blind sets once in a fresh process of each checkout, the order alternating between rounds, and
the table gives both with their ratio. Both must give the same verdicts: the bench compares
every case's severity, categories and probabilities (P(crisis), P(flag), in the turn's way) and
reports how many differ.

Usage (from the repository root):

    .venv/bin/python bench/learned_screen.py [--tree ../main] [--rounds N] [--limit N] [--output PATH]

Prints a table and writes bench/results/learned_screen.json (git-ignored). See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_PATH = ROOT / "bench" / "results" / "learned_screen.json"
KINDS = ("turn", "cold", "n-grams")
SUBSETS = ("all", "with context")


def _rows(vocabulary: Any, text: str, context: list[str]) -> Any:
    """The sparse row, in this checkout's way or an older one's (an index passed in)."""
    from safety.learned import features

    sparse_row: Any = features.sparse_row
    if hasattr(vocabulary, "index"):
        index = getattr(vocabulary, "_bench_index", None) or vocabulary.index()
        object.__setattr__(vocabulary, "_bench_index", index)
        return sparse_row(vocabulary, index, text, context)
    return sparse_row(vocabulary, text, context)


def child(tree: Path, limit: int | None) -> dict[str, Any]:
    """One pass over the blind sets in `tree`'s code: timings and verdicts."""
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
    os.environ.setdefault("EMBEDDINGS_BACKEND", "none")
    import django

    django.setup()
    from safety import learned, offline
    from safety.evaluation import load_cases
    from safety.learned import embedders
    from safety.types import combine

    cases = [c for path in sorted((tree / "safety" / "corpus" / "blind").glob("*.jsonl")) for c in load_cases(path)]
    cases = cases[:limit] if limit else cases
    started = time.perf_counter()
    learned.warm_up()
    head = learned.head()
    load_s = time.perf_counter() - started
    times: dict[str, dict[str, list[float]]] = {kind: {"wall": [], "cpu": []} for kind in KINDS}
    verdicts = []
    with_context = [bool(head.context_of(case.context)) for case in cases]

    def timed(kind: str, fn: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        times[kind]["cpu"].append((time.process_time() - cpu) * 1000)
        times[kind]["wall"].append((time.perf_counter() - wall) * 1000)
        return out

    for case in cases:
        context = head.context_of(case.context)
        rules = offline.screen(case.text)
        embedders._cache["use"].clear()
        for text in context:
            embedders.encode("use", [text])
        results = timed("turn", lambda: learned.screen_message(case.text, context, rules))  # noqa: B023
        p = head.probabilities(case.text, context, rules.signals)
        verdict = combine(results)
        verdicts.append(
            {
                "severity": verdict.severity.value if verdict.severity else None,
                "categories": sorted(verdict.categories),
                "p": [p.crisis, p.flag],
            }
        )
        embedders._cache["use"].clear()
        timed("cold", lambda: learned.screen_message(case.text, context, rules))  # noqa: B023
        timed("n-grams", lambda: _rows(head.vocabulary, case.text, context))  # noqa: B023
    return {"load_s": load_s, "times": times, "verdicts": verdicts, "cases": len(cases), "with_context": with_context}


def _pass(tree: Path, limit: int | None) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(tree)]
    if limit:
        command += ["--limit", str(limit)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{tree}: the pass failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "mean": statistics.fmean(ordered),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, help="another checkout to measure beside this one (the baseline)")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the blind sets per checkout")
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child.resolve(), args.limit)))
        return

    sys.path.insert(0, str(ROOT))
    from bench.machine import cores, cpu_model, load, ram_gb

    trees = {"this": ROOT}
    if args.tree:
        trees = {"baseline": args.tree.resolve(), "this": ROOT}
    load_before = load()
    passes: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for number in range(args.rounds):
        order = list(trees) if number % 2 == 0 else list(reversed(trees))
        for name in order:
            passes[name].append(_pass(trees[name], args.limit))
    load_after = load()

    result: dict[str, Any] = {
        "machine": {"cpu": cpu_model(), "cores": cores(), "ram_gb": ram_gb(), "load": [load_before, load_after]},
        "rounds": args.rounds,
        "cases": passes["this"][0]["cases"],
        "trees": {name: str(path) for name, path in trees.items()},
        "figures": {},
    }
    for name, runs in passes.items():
        result["figures"][name] = {
            f"{kind}, {subset}": {
                clock: _summary(
                    [
                        v
                        for run in runs
                        for v, has in zip(run["times"][kind][clock], run["with_context"], strict=True)
                        if subset == "all" or has
                    ]
                )
                for clock in ("wall", "cpu")
            }
            for subset in SUBSETS
            for kind in KINDS
        }
        result["figures"][name]["load_s"] = statistics.median(run["load_s"] for run in runs)
    if "baseline" in passes:
        base, this = passes["baseline"][0]["verdicts"], passes["this"][0]["verdicts"]
        pairs = list(zip(base, this, strict=True))
        verdict = ("severity", "categories")
        result["verdicts_differ"] = sum([a[k] for k in verdict] != [b[k] for k in verdict] for a, b in pairs)
        result["max_p_difference"] = max(abs(x - y) for a, b in pairs for x, y in zip(a["p"], b["p"], strict=True))

    print(
        f"# The learned screen per message, {result['cases']} blind cases with context, {args.rounds} rounds\n"
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; {cpu_model()}, {cores()} cores, {ram_gb()} GB, "
        f"load {load_before} before, {load_after} after\n"
    )
    names = list(trees)
    header = "| per message | " + " | ".join(f"{n} p50 | {n} p95" for n in names)
    header += " | p50 ratio |" if "baseline" in names else " |"
    print(header)
    print("|---|" + "---:|" * (2 * len(names) + ("baseline" in names)))
    for kind in (f"{kind}, {subset}" for subset in SUBSETS for kind in KINDS):
        for clock in ("wall", "cpu"):
            cells = []
            for name in names:
                f = result["figures"][name][kind][clock]
                cells += [f"{f['p50']:.3f} ms", f"{f['p95']:.3f} ms"]
            row = f"| {kind}, {clock} | " + " | ".join(cells)
            if "baseline" in names:
                base_p50 = result["figures"]["baseline"][kind][clock]["p50"]
                row += f" | {result['figures']['this'][kind][clock]['p50'] / base_p50:.2f}x"
            print(row + " |")
    if "baseline" in names:
        print(
            f"\nVerdicts that differ from the baseline's: {result['verdicts_differ']} of {result['cases']}; "
            f"largest difference of P(crisis) or P(flag): {result['max_p_difference']:.2e}"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1))
    print(f"\nResults written to {args.output}")


if __name__ == "__main__":
    main()
