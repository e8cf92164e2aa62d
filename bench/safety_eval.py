"""Screening quality on the labelled set, per category and severity (safety.evaluation).

    .venv/bin/python bench/safety_eval.py [--backend offline|moderation|classifier[,...]]
        [--set safety/corpus/train/messages.jsonl] [--split all|dev|holdout]
        [--limit N | --sample N [--seed S]] [--mistakes] [--timing]
        [--base-url URL [--model ID] [--api-key KEY] [--window TOKENS]] [--classifier-model summary|chat]
        [--moderation-url URL [--moderation-model NAME] [--moderation-key KEY] | --scripted-moderation]
        [--timeout SECONDS]

`--backend` takes one backend or several joined by commas, combined as the guard combines
them (safety.types.combine). `offline` runs in this process with no settings; `moderation` and
`classifier` call safety.backends.screen_backends_sync with the SAFETY_* settings (Django is set
up with DJANGO_SETTINGS_MODULE, tutor.settings.base by default), in a throwaway SQLite database
(the gateway meters every call) under a temporary TUTOR_VAR_DIR, removed at the end.

Targets, for the run only:
- `--base-url` (with `--model`, default: the one model the server lists; `--api-key`, default
  "x"; `--window`, its context window in tokens) is the classifier's model server: it becomes
  LLM_SUMMARY_* (or LLM_* with `--classifier-model chat`).
- `--moderation-url` (`--moderation-model`, `--moderation-key`) is the moderation endpoint.
- `--scripted-moderation` starts the test suite's scripted server (tests/llm_server.py,
  ScriptedLLM) in this process and screens with `moderation` against its default keyword scorer.
  That measures the plumbing and the mapping (MODERATION_RULES), not a moderation model: the
  report says so in its title.
- `--timeout` is SAFETY_BACKEND_TIMEOUT_SECONDS (the product's default is short, for a chat turn;
  a slow local model needs more to be measured at all).

`--limit N` keeps the first N cases; `--sample N` about N cases drawn in proportion to each
(kind, severity, language) stratum with at least one of each (`stratified_sample`).

Prints the date, the machine and the targets, the Markdown table, for the remote backends the
time per message and why any call did not answer, then the mistakes (`--mistakes`) and the
offline line's time per message (`--timing`).
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import timeit
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402

if TYPE_CHECKING:
    from safety.evaluation import Case
    from safety.types import Verdict

REMOTE = ("moderation", "classifier")
BLIND_SETS = sorted((ROOT / "safety" / "corpus" / "blind").glob("*.jsonl"))
SCRIPTED_TITLE = (
    "moderation = the SCRIPTED endpoint (tests/llm_server.py keyword scorer): it measures the "
    "plumbing and the mapping (MODERATION_RULES), not a moderation model"
)
# Error messages are grouped by their beginning, numbers (positions, sizes) left out.
ERROR_PREFIX_CHARS = 90
_NUMBER = re.compile(r"[0-9]+")


# --- Choosing the cases -------------------------------------------------------------------------


def stratum(case: Case) -> tuple[str, str, str]:
    """The case's stratum: kind, severity ("-" for none) and language."""
    return (case.kind, case.severity or "-", case.language)


def stratified_sample(cases: Sequence[Case], n: int, *, seed: int = 0) -> list[Case]:
    """About `n` of `cases` (exactly n when n >= the number of strata), drawn at random (by
    `seed`, so repeatable) within each stratum in proportion to its size (largest remainders),
    with at least one case of every stratum; in the set's order. All of them when n >= len."""
    if n >= len(cases):
        return list(cases)
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        groups[stratum(case)].append(i)
    exact = {key: n * len(members) / len(cases) for key, members in groups.items()}
    quota = {key: max(1, int(share)) for key, share in exact.items()}
    by_remainder = sorted(groups, key=lambda key: (exact[key] - int(exact[key]), len(groups[key])), reverse=True)
    for key in by_remainder:
        if sum(quota.values()) >= n:
            break
        if quota[key] < len(groups[key]):
            quota[key] += 1
    rng = random.Random(seed)
    chosen = {i for key, members in groups.items() for i in rng.sample(members, min(quota[key], len(members)))}
    return [case for i, case in enumerate(cases) if i in chosen]


# --- Screening ------------------------------------------------------------------------------------


@dataclass
class Calls:
    """Each remote backend's time per call (ms) and why its calls did not answer."""

    ms: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, verdict: Verdict) -> None:
        for result in verdict.results:
            if result.backend in REMOTE:
                self.ms[result.backend].append(result.ms)
                if not result.answered:
                    reason = _NUMBER.sub("N", result.error)[:ERROR_PREFIX_CHARS] or "(no reason)"
                    self.errors[result.backend][reason] += 1

    def markdown(self, product_timeout: float) -> str:
        """Per backend: calls, answered, mean / median / p95 / max time, the calls slower than
        `product_timeout`, and the most common reasons for no answer."""
        lines = []
        for backend, times in self.ms.items():
            ordered = sorted(times)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            slow = sum(ms > 1000 * product_timeout for ms in ordered)
            unanswered = sum(self.errors[backend].values())
            lines.append(
                f"- {backend}: {len(ordered)} calls, {len(ordered) - unanswered} answered; time per message "
                f"mean {statistics.fmean(ordered):.0f} ms, median {statistics.median(ordered):.0f} ms, "
                f"p95 {p95} ms, max {ordered[-1]} ms; {slow} slower than SAFETY_BACKEND_TIMEOUT_SECONDS "
                f"as configured without --timeout ({product_timeout:g} s)"
            )
            for error, count in self.errors[backend].most_common(5):
                lines.append(f"  - {count} x not answered: {error}")
        return "\n".join(lines)


def screen_function(backends: list[str], calls: Calls | None = None) -> Callable[[str, Sequence[str]], Verdict]:
    """A function of a text and its context to its combined Verdict over `backends`; the remote
    backends' results are added to `calls`. Django's settings must be set up first, and its
    database for a remote backend. `rules` is the rules alone; `offline` the offline line as the
    product runs it on a student's message (the rules and the learned screen, with the context)."""
    from safety import learned, offline
    from safety.types import BackendResult, combine

    remote = [b for b in backends if b in REMOTE]

    def screen(text: str, context: Sequence[str] = ()) -> Verdict:
        results: list[BackendResult] = []
        if "offline" in backends:
            results += learned.screen_message(text, context)
        elif "rules" in backends:
            results.append(offline.screen(text))
        if remote:
            from safety.backends import screen_backends_sync

            results.extend(screen_backends_sync(text, backends=remote))
        verdict = combine(results)
        if calls is not None:
            calls.add(verdict)
        return verdict

    return screen


def settings_only() -> None:
    """Django set up for its settings alone (the offline line reads SAFETY_LEARNED)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
    os.environ.setdefault("EMBEDDINGS_BACKEND", "none")
    import django

    django.setup()


@contextmanager
def throwaway_django() -> Iterator[None]:
    """Django set up on a migrated SQLite database in a temporary TUTOR_VAR_DIR, removed on exit."""
    var = Path(tempfile.mkdtemp(prefix="tutor-safety-eval-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
    os.environ.update({"TUTOR_VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'eval.sqlite3'}"})
    os.environ.setdefault("EMBEDDINGS_BACKEND", "none")
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        yield
    finally:
        shutil.rmtree(var, ignore_errors=True)


def configure_targets(args: argparse.Namespace, moderation_url: str | None) -> list[str]:
    """Point the settings at the requested servers; the lines that describe the targets."""
    from django.conf import settings

    from llm import gateway

    if args.timeout is not None:
        settings.SAFETY_BACKEND_TIMEOUT_SECONDS = args.timeout
    described = [f"SAFETY_BACKEND_TIMEOUT_SECONDS {settings.SAFETY_BACKEND_TIMEOUT_SECONDS:g} s"]
    prefix = "LLM" if args.classifier_model == "chat" else "LLM_SUMMARY"
    if args.classifier_model:
        settings.SAFETY_CLASSIFIER_MODEL = args.classifier_model
    if args.base_url:
        setattr(settings, f"{prefix}_BASE_URL", args.base_url)
        setattr(settings, f"{prefix}_API_KEY", args.api_key)
        setattr(settings, f"{prefix}_MODEL", args.model or "")
        if args.window:
            setattr(settings, f"{prefix}_CONTEXT_WINDOW", args.window)
    if "classifier" in args.backends:
        from safety.backends import classifier_profile

        profile, _ = classifier_profile(float(settings.SAFETY_BACKEND_TIMEOUT_SECONDS))
        window = gateway.context_window(profile)
        described.append(
            f"classifier: {profile.model or '(no model)'} at {profile.base_url or 'OpenAI'} "
            f"(SAFETY_CLASSIFIER_MODEL {settings.SAFETY_CLASSIFIER_MODEL}), window {window.tokens} tokens"
        )
    if moderation_url:
        settings.SAFETY_MODERATION_BASE_URL = moderation_url
        settings.SAFETY_MODERATION_API_KEY = args.moderation_key
    if args.moderation_model:
        settings.SAFETY_MODERATION_MODEL = args.moderation_model
    if "moderation" in args.backends:
        described.append(f"moderation: {settings.SAFETY_MODERATION_MODEL} at {settings.SAFETY_MODERATION_BASE_URL}")
    return described


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


# --- The command ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--backend",
        help="offline (the rules and the learned screen), rules (the rules alone), moderation, classifier, "
        "or several joined by commas (default: offline)",
    )
    parser.add_argument(
        "--set", nargs="+", default=[str(p) for p in BLIND_SETS], help="labelled files (default: the blind sets)"
    )
    parser.add_argument("--split", choices=("all", "dev", "holdout"), default="all")
    subset = parser.add_mutually_exclusive_group()
    subset.add_argument("--limit", type=int, help="only the first N cases")
    subset.add_argument("--sample", type=int, help="about N cases, stratified by kind, severity and language")
    parser.add_argument("--seed", type=int, default=0, help="the sample's random seed")
    parser.add_argument("--mistakes", action="store_true", help="list the cases screened wrongly")
    parser.add_argument("--timing", action="store_true", help="time the offline line")
    parser.add_argument("--base-url", help="the classifier's OpenAI-compatible server (…/v1)")
    parser.add_argument("--model", help="the classifier's model id (default: the one the server lists)")
    parser.add_argument("--api-key", default="x", help="the classifier server's key (default: x)")
    parser.add_argument("--window", type=int, help="the classifier model's context window, in tokens")
    parser.add_argument("--classifier-model", choices=("summary", "chat"), help="SAFETY_CLASSIFIER_MODEL")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--moderation-url", help="the moderation endpoint's base URL (…/v1)")
    target.add_argument(
        "--scripted-moderation", action="store_true", help="moderation against tests/llm_server.py's keyword scorer"
    )
    parser.add_argument("--moderation-model", help="SAFETY_MODERATION_MODEL")
    parser.add_argument("--moderation-key", default="x", help="the moderation endpoint's key (default: x)")
    parser.add_argument("--timeout", type=float, help="SAFETY_BACKEND_TIMEOUT_SECONDS for the run")
    args = parser.parse_args(argv)
    default = "moderation" if args.scripted_moderation else "offline"
    args.backends = [b.strip() for b in (args.backend or default).split(",") if b.strip()]
    unknown = set(args.backends) - {"offline", "rules", *REMOTE}
    if unknown or not args.backends:
        parser.error(f"unknown backend(s): {', '.join(sorted(unknown)) or '(none)'}")
    if args.scripted_moderation and "moderation" not in args.backends:
        parser.error("--scripted-moderation screens with the moderation backend: add it to --backend")
    for name in ("limit", "sample"):
        if (getattr(args, name) or 1) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    load_before = machine.load()
    from safety.evaluation import evaluate, load_cases, split_of

    cases = [c for path in args.set for c in load_cases(path) if args.split == "all" or split_of(c) == args.split]
    subset = ""
    if args.limit:
        cases, subset = cases[: args.limit], f", first {args.limit}"
    elif args.sample:
        cases = stratified_sample(cases, args.sample, seed=args.seed)
        subset = f", stratified sample of {len(cases)} (seed {args.seed})"
    remote = any(b in REMOTE for b in args.backends)
    calls = Calls()
    with ExitStack() as stack:
        moderation_url = args.moderation_url
        if args.scripted_moderation:
            from tests.llm_server import ScriptedLLM

            scripted = ScriptedLLM().start()
            stack.callback(scripted.stop)
            moderation_url = scripted.base_url
        targets: list[str] = []
        product_timeout = 0.0
        if remote:
            stack.enter_context(throwaway_django())
        else:
            settings_only()
            from django.conf import settings

            product_timeout = float(settings.SAFETY_BACKEND_TIMEOUT_SECONDS)
            targets = configure_targets(args, moderation_url)
        report = evaluate(screen_function(args.backends, calls), cases)

    title = "+".join(args.backends)
    print(f"# Screening: {title} on {', '.join(Path(p).name for p in args.set)} ({args.split}{subset})")
    if args.scripted_moderation:
        print(f"\n**{SCRIPTED_TITLE}.**\n")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine.cpu_model()}, {machine.cores()} cores, "
        f"{machine.ram_gb()} GB, load {load_before} before, {machine.load()} after"
    )
    for line in targets:
        print(f"- {line}")
    print()
    print(report.markdown())
    print()
    print(report.targets_markdown())
    if calls.ms:
        print()
        print(calls.markdown(product_timeout))
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
