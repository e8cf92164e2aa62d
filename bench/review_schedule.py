"""Scheduled reviews against reviewing in order, on a simulated cohort (docs/learning.md#reviews).

    .venv/bin/python bench/review_schedule.py [--students 200] [--skills 40] [--days 120]
        [--per-day 1] [--questions 5] [--intro-every 2] [--spread 0.35] [--seed 7] [--json]

Each of N students learns M skills, one every `--intro-every` days: a lesson and a first quiz.
Then every day each student takes `--per-day` quizzes of `--questions` questions, chosen by
one of two strategies, from the same students and the same random numbers:

- **scheduled**: the product's scheduler (learning.reviews, LEARNING_REVIEWS): the skills due
  first, then the rest, each group by the lowest probability of recall the scheduler predicts
  (then the longest overdue): every quiz it may take is taken, so both strategies take as many;
- **in order**: round robin over the skills introduced so far.

A skill's true memory follows FSRS's own model (its forgetting curve and its stability and
difficulty updates), with each student's own weights the scheduler does not know: the initial
stabilities scaled by a memory factor (log-normal, sigma `--spread`) and the initial difficulty
moved by a per-skill offset (normal, sigma 1). Each question of a quiz is right with the true
probability of recall at that moment; the score gives the rating (learning.reviews.rating_for),
which updates both the true memory (the student's weights) and the scheduler's card (FSRS's
default weights): the quiz is practice as well as a measurement.

Measured: the share of introduced skills whose true probability of recall is at least
THRESHOLD (0.9, the retention the scheduler targets), each evening, averaged over the horizon,
and on the last day; and the mean probability of recall. Prints a Markdown table with the date
and the machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import sys
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fsrs import Card, Rating, Scheduler  # noqa: E402
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS  # noqa: E402

from bench import machine  # noqa: E402
from learning import reviews  # noqa: E402
from tutor.settings.learning import LEARNING_REVIEWS  # noqa: E402

THRESHOLD = 0.9
STRATEGIES = ("scheduled", "in order")
START = datetime.datetime(2026, 9, 1, 17, tzinfo=datetime.UTC)  # quizzes at 17:00 each day


@dataclass(frozen=True)
class Options:
    students: int = 200
    skills: int = 40
    days: int = 120
    per_day: int = 1
    questions: int = 5
    intro_every: int = 2
    spread: float = 0.35
    seed: int = 7


@dataclass
class Result:
    strategy: str
    quizzes: int
    on_due: int  # scheduled: quizzes of a skill the scheduler had due
    share_mean: float  # share of introduced skills at or above THRESHOLD, averaged over the evenings
    share_end: float
    recall_mean: float  # mean true probability of recall, averaged over the evenings
    recall_end: float


def _bounded(index: int, value: float) -> float:
    return min(max(value, LOWER_BOUNDS_PARAMETERS[index]), UPPER_BOUNDS_PARAMETERS[index])


def student_weights(rng: random.Random, options: Options) -> list[tuple[float, ...]]:
    """One student's true FSRS weights per skill (see the module docstring)."""
    factor = math.exp(rng.gauss(0, options.spread))
    weights = []
    for _ in range(options.skills):
        w = list(DEFAULT_PARAMETERS)
        for i in range(4):
            w[i] = _bounded(i, w[i] * factor)
        w[4] = _bounded(4, w[4] + rng.gauss(0, 1))
        weights.append(tuple(w))
    return weights


def quiz(rng: random.Random, recall: float, questions: int) -> Rating:
    correct = sum(rng.random() < recall for _ in range(questions))
    rating = reviews.rating_for(correct=correct, graded=questions)
    assert rating is not None
    return rating


def urgency(
    scheduler: Scheduler, cards: list[Card | None], now: datetime.datetime, skill: int
) -> tuple[bool, float, datetime.datetime]:
    """The scheduled strategy's order: due first, then the lowest predicted recall, then the
    longest overdue."""
    card = cards[skill]
    assert card is not None
    return (card.due > now, scheduler.get_card_retrievability(card, now), card.due)


def simulate_student(strategy: str, index: int, options: Options) -> tuple[list[float], list[float], int, int]:
    """One student under `strategy`: the share at or above THRESHOLD and the mean recall each
    evening, the review quizzes taken, and those on a skill due."""
    # The student's weights and their quiz outcomes come from their own seeds, the same for both
    # strategies (common random numbers): the strategies differ by their choices alone.
    weights = student_weights(random.Random(options.seed * 1_000_003 + index), options)
    outcomes = random.Random(options.seed * 7_919 + index)
    retention, maximum = float(LEARNING_REVIEWS["desired_retention"]), int(LEARNING_REVIEWS["maximum_interval_days"])
    truth_schedulers = [
        reviews.make_scheduler(desired_retention=retention, maximum_interval_days=maximum, parameters=w)
        for w in weights
    ]
    scheduler = reviews.make_scheduler(desired_retention=retention, maximum_interval_days=maximum)
    truth: list[Card | None] = [None] * options.skills
    cards: list[Card | None] = [None] * options.skills
    shares, recalls, taken, on_due, cursor = [], [], 0, 0, 0

    def practise(skill: int, now: datetime.datetime) -> None:
        true_scheduler: Scheduler = truth_schedulers[skill]
        before = truth[skill]
        recall = true_scheduler.get_card_retrievability(before, now) if before is not None else 0.0
        rating = quiz(outcomes, recall if before is not None else 0.8, options.questions)
        truth[skill] = true_scheduler.review_card(before or Card(card_id=1, due=now), rating, now)[0]
        cards[skill] = scheduler.review_card(cards[skill] or Card(card_id=1, due=now), rating, now)[0]

    for day in range(options.days):
        now = START + datetime.timedelta(days=day)
        introduced = [s for s in range(options.skills) if s * options.intro_every <= day]
        new = [s for s in introduced if s * options.intro_every == day]
        for skill in new:  # a lesson, then its first quiz (answered as after a lesson: 80 % per question)
            practise(skill, now)
        candidates = [s for s in introduced if s not in new]
        if strategy == "scheduled":
            chosen = sorted(candidates, key=partial(urgency, scheduler, cards, now))[: options.per_day]
            on_due += sum(1 for s in chosen if (c := cards[s]) is not None and c.due <= now)
        else:
            chosen = []
            for _ in range(min(options.per_day, len(candidates))):
                while cursor % options.skills not in candidates:
                    cursor += 1
                chosen.append(cursor % options.skills)
                cursor += 1
        for skill in chosen:
            practise(skill, now)
        taken += len(chosen)
        evening = now + datetime.timedelta(days=1)  # before the next day's quizzes
        recall = [
            truth_schedulers[s].get_card_retrievability(card, evening)
            for s, card in enumerate(truth)
            if card is not None
        ]
        shares.append(sum(r >= THRESHOLD for r in recall) / len(recall))
        recalls.append(sum(recall) / len(recall))
    return shares, recalls, taken, on_due


def simulate(options: Options) -> list[Result]:
    results = []
    for strategy in STRATEGIES:
        share_days = [0.0] * options.days
        recall_days = [0.0] * options.days
        taken = on_due = 0
        for index in range(options.students):
            shares, recalls, quizzes, due = simulate_student(strategy, index, options)
            share_days = [a + b for a, b in zip(share_days, shares, strict=True)]
            recall_days = [a + b for a, b in zip(recall_days, recalls, strict=True)]
            taken, on_due = taken + quizzes, on_due + due
        n = options.students
        results.append(
            Result(
                strategy=strategy,
                quizzes=taken,
                on_due=on_due,
                share_mean=sum(share_days) / n / options.days,
                share_end=share_days[-1] / n,
                recall_mean=sum(recall_days) / n / options.days,
                recall_end=recall_days[-1] / n,
            )
        )
    return results


def table(results: list[Result]) -> str:
    lines = [
        f"| strategy | review quizzes | on a due skill | share >= {THRESHOLD} (mean) | (last day) "
        "| mean recall | (last day) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        due = f"{r.on_due:,}" if r.strategy == "scheduled" else "-"
        lines.append(
            f"| {r.strategy} | {r.quizzes:,} | {due} | {r.share_mean:.1%} | {r.share_end:.1%} "
            f"| {r.recall_mean:.3f} | {r.recall_end:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Options()
    for name, value in asdict(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args()
    options = Options(**{name: getattr(args, name) for name in asdict(defaults)})
    started = datetime.datetime.now(datetime.UTC)
    results = simulate(options)
    elapsed = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    print(
        f"{started:%Y-%m-%d}, {machine.cores()} CPU ({machine.cpu_model()}), load {machine.load()}, "
        f"{elapsed:.1f} s; {options}; LEARNING_REVIEWS {LEARNING_REVIEWS}"
    )
    print(table(results))
    if args.json:
        print(json.dumps({"options": asdict(options), "results": [asdict(r) for r in results]}, indent=2))


if __name__ == "__main__":
    main()
