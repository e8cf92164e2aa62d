"""Reviews scheduled from quiz results with FSRS (py-fsrs). Pure functions, no I/O.

Each graded quiz is one review of its skill: its score (right answers out of the graded ones;
`ungraded` answers are left out, as for mastery) is mapped to an FSRS rating, and FSRS's
scheduler, with its own default weights, turns the skill's reviews into a memory state
(stability, difficulty) and the date the skill is due again: when its probability of recall
falls to LEARNING_REVIEWS["desired_retention"].

The scheduler is deterministic: no fuzz (the same results always give the same dates) and no
learning or relearning steps. FSRS's default steps (1 and 10 minutes) are for flashcards drilled
in one sitting; a quiz in a conversation is a day-scale event, so every result is scheduled in
whole days from its stability (at least a day). Why FSRS, the mapping and the simulated cohort:
docs/learning.md#reviews.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from fsrs import Card, Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

# The rating of a quiz's score, the first bound the score is below: a quiz failed (under half
# right) is forgotten (Again), a shaky pass is Hard, a good one Good, a perfect one Easy.
RATING_BOUNDS: tuple[tuple[float, Rating], ...] = ((0.5, Rating.Again), (0.75, Rating.Hard), (1.0, Rating.Good))


def rating_for(*, correct: int, graded: int) -> Rating | None:
    """The FSRS rating of a quiz with `correct` right answers out of `graded` (right or wrong;
    ungraded ones not counted): < 50 % Again, < 75 % Hard, < 100 % Good, 100 % Easy. None when
    nothing was graded: the quiz is not a review."""
    if graded <= 0:
        return None
    score = correct / graded
    for bound, rating in RATING_BOUNDS:
        if score < bound:
            return rating
    return Rating.Easy


def make_scheduler(
    *, desired_retention: float, maximum_interval_days: int, parameters: tuple[float, ...] | None = None
) -> Scheduler:
    """FSRS's scheduler as the product uses it (see the module docstring), with FSRS's default
    weights unless `parameters` are given (the simulated cohort's students, bench/review_schedule.py)."""
    if not 0 < desired_retention < 1 or maximum_interval_days < 1:
        raise ImproperlyConfigured(
            "LEARNING_REVIEWS: desired_retention must be between 0 and 1, maximum_interval_days at least 1"
        )
    return Scheduler(
        parameters=parameters if parameters is not None else DEFAULT_PARAMETERS,
        desired_retention=desired_retention,
        learning_steps=(),
        relearning_steps=(),
        maximum_interval=maximum_interval_days,
        enable_fuzzing=False,
    )


def scheduler_from_settings() -> Scheduler:
    """The product's scheduler, LEARNING_REVIEWS applied."""
    options: dict[str, Any] = dict(settings.LEARNING_REVIEWS)
    unknown = set(options) - {"desired_retention", "maximum_interval_days"}
    if unknown:
        raise ImproperlyConfigured(f"LEARNING_REVIEWS has unknown keys: {sorted(unknown)}")
    return make_scheduler(
        desired_retention=float(options.get("desired_retention", 0.9)),
        maximum_interval_days=int(options.get("maximum_interval_days", 365)),
    )


def utc(moment: datetime) -> datetime:
    """`moment` in datetime.UTC, which py-fsrs requires (a database may return another UTC tzinfo)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class CardState:
    """A skill's FSRS card, as ReviewCard stores it: after at least one review, so stability,
    difficulty and last_review are set."""

    state: int  # fsrs.State
    step: int | None
    stability: float
    difficulty: float
    due: datetime
    last_review: datetime
    reviews: int

    def card(self) -> Card:
        # card_id is py-fsrs's, unused here; passing it skips the millisecond it sleeps to make one.
        return Card(
            card_id=1,
            state=State(self.state),
            step=self.step,
            stability=self.stability,
            difficulty=self.difficulty,
            due=utc(self.due),
            last_review=utc(self.last_review),
        )


def review(card: CardState | None, *, rating: Rating, at: datetime, scheduler: Scheduler) -> CardState:
    """The card after a review rated `rating` at `at` (None: the skill's first review)."""
    at = utc(at)
    before = card.card() if card is not None else Card(card_id=1, due=at)
    after, _log = scheduler.review_card(before, rating, at)
    assert after.stability is not None and after.difficulty is not None  # set by any review
    return CardState(
        state=int(after.state),
        step=after.step,
        stability=after.stability,
        difficulty=after.difficulty,
        due=after.due,
        last_review=at,
        reviews=(card.reviews if card is not None else 0) + 1,
    )


def replay(results: Iterable[tuple[datetime, int, int]], *, scheduler: Scheduler) -> CardState | None:
    """The card after every graded quiz of a skill, `(submitted_at, correct, graded)`, replayed in
    submission order (ties keep the given order); None when none of them counts as a review."""
    card = None
    for at, correct, graded in sorted(results, key=lambda r: r[0]):
        rating = rating_for(correct=correct, graded=graded)
        if rating is not None:
            card = review(card, rating=rating, at=at, scheduler=scheduler)
    return card


def retrievability(card: CardState, *, now: datetime, scheduler: Scheduler) -> float:
    """FSRS's probability that the skill is recalled at `now` (0 to 1), from whole days elapsed."""
    return float(scheduler.get_card_retrievability(card.card(), utc(now)))


def overdue_days(due: datetime, *, now: datetime) -> float:
    """Days since `due` (0 when not yet due)."""
    return max(0.0, (now - due).total_seconds() / 86400)
