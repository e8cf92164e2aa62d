"""Screening quality on the labelled set, per category and severity (safety.evaluation).

    .venv/bin/python bench/safety_eval.py [--backend offline|moderation|classifier[,...]]
        [--set tests/safety/messages.jsonl] [--split all|dev|holdout] [--mistakes] [--timing]

`--backend` takes one backend or several joined by commas, combined as the guard combines
them (safety.types.combine). `offline` runs in this process with no settings; `moderation` and
`classifier` call safety.backends.screen_backends_sync with the configured SAFETY_* settings
(Django is set up with DJANGO_SETTINGS_MODULE, tutor.settings.base by default). Prints the date,
the machine, the Markdown table, then the mistakes (`--mistakes`) and the offline line's time
per message (`--timing`).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402

REMOTE = ("moderation", "classifier")


def screen_function(backends: list[str]) -> Callable[[str], object]:
    """A function of a text to its combined Verdict over `backends`."""
    from safety import offline
    from safety.types import BackendResult, combine

    remote = [b for b in backends if b in REMOTE]
    if remote:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
        import django

        django.setup()
        from safety.backends import screen_backends_sync

    def screen(text: str) -> object:
        results: list[BackendResult] = [offline.screen(text)] if "offline" in backends else []
        if remote:
            results.extend(screen_backends_sync(text, backends=remote))
        return combine(results)

    return screen


def timing(texts: list[str]) -> str:
    """The offline line's mean time per message over `texts`, and on a 300-character one."""
    from safety import offline

    rounds = 20
    total = timeit.timeit(lambda: [offline.screen(t) for t in texts], number=rounds)
    long = (
        "Bonjour, je comprends pas l'exercice 3 sur les fonctions affines, le prof a dit qu'on devait "
        "trouver le coefficient directeur et l'ordonnée à l'origine " * 3
    )[:300]
    per_long = timeit.timeit(lambda: offline.screen(long), number=2000) / 2000
    mean = 1000 * total / rounds / len(texts)
    return f"offline: {mean:.3f} ms per message of the set (mean), {1000 * per_long:.3f} ms for a 300-character message"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--backend", default="offline", help="offline, moderation, classifier, or several joined by commas"
    )
    parser.add_argument("--set", default=str(ROOT / "tests/safety/messages.jsonl"))
    parser.add_argument("--split", choices=("all", "dev", "holdout"), default="all")
    parser.add_argument("--mistakes", action="store_true", help="list the cases screened wrongly")
    parser.add_argument("--timing", action="store_true", help="time the offline line")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    unknown = set(backends) - {"offline", *REMOTE}
    if unknown or not backends:
        parser.error(f"unknown backend(s): {', '.join(sorted(unknown)) or '(none)'}")

    from safety.evaluation import evaluate, load_cases, split_of

    cases = [c for c in load_cases(args.set) if args.split == "all" or split_of(c) == args.split]
    report = evaluate(screen_function(backends), cases)  # type: ignore[arg-type]
    print(f"# Screening: {'+'.join(backends)} on {Path(args.set).name} ({args.split})")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine.cpu_model()}, {machine.cores()} cores, "
        f"{machine.ram_gb()} GB, load {machine.load()}"
    )
    print()
    print(report.markdown())
    if args.mistakes:
        print()
        for o in report.mistakes():
            label = f"{o.case.category}/{o.case.severity}" if o.case.kind == "risk" else o.case.kind
            print(f"- [{label}] got {o.severity or 'nothing'} {list(o.categories)} {list(o.rules)}: {o.case.text}")
    if args.timing:
        print()
        print(timing([c.text for c in cases]))


if __name__ == "__main__":
    main()
