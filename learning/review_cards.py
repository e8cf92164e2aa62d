"""Reads and writes of review cards (learning.models.ReviewCard): a graded quiz counted as a
review of its skill, and what is due, for a student, a class and the prompt.

Reads of a student's cards go through accounts.selectors.student_get_visible (a student outside
the requester's scope is a 404), or, for an active staff account, any active student;
`reviews_due_for_record` is the chat turn's, for the student who owns the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Classroom, User
from accounts.selectors import classroom_get_overseen, enrollments_current, student_get_overseen
from core.errors import Forbidden
from learning import reviews
from learning.mastery import BktParams, decayed
from learning.models import Answer, Quiz, QuizAttempt, ReviewCard, SkillMastery
from learning.prompts import ReviewItem
from learning.validation import skill_key

# Answers that count: right or wrong (pending and ungraded ones do not).
GRADED_RESULTS = (Answer.Result.CORRECT, Answer.Result.INCORRECT)

# --- Writes ---------------------------------------------------------------------------------------


def _card_state(card: ReviewCard) -> reviews.CardState:
    return reviews.CardState(
        state=card.state,
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
        reviews=card.reviews,
    )


def graded_quizzes_of(*, student_id: int, key: str) -> list[tuple[int, datetime, int, int]]:
    """The student's graded quizzes of the skill `key`, `(quiz id, submitted_at, correct, graded
    answers)`, in submission order: one query over the student's graded quizzes (labels are
    folded in Python, as skill_key does)."""
    graded = Count("attempt__answers", filter=Q(attempt__answers__result__in=GRADED_RESULTS))
    rows = (
        Quiz.objects.filter(student_id=student_id, status=Quiz.Status.GRADED, attempt__graded_at__isnull=False)
        .annotate(graded=graded)
        .order_by("attempt__submitted_at", "pk")
        .values_list("pk", "skill", "attempt__submitted_at", "attempt__correct", "graded")
    )
    # A graded quiz has its `correct` (the attempt_score constraint).
    return [(pk, at, correct or 0, n) for pk, label, at, correct, n in rows if skill_key(label) == key and n]


def review_card_record(*, mastery: SkillMastery, quiz: Quiz, attempt: QuizAttempt, correct: int, graded: int) -> None:
    """Count a graded quiz (`correct` right of `graded`) as a review of its skill, at the attempt's
    submission, in the grading transaction.

    The caller holds the lock on `mastery` (learning.services._mastery_record), which serialises
    every write of the skill's card. A quiz counted already (the card's `last_quiz`) changes
    nothing. A first card, or a quiz submitted before the card's last review (a short answer the
    model graded after a later quiz), is rebuilt by replaying all the skill's graded quizzes in
    submission order, which gives the same card however often it runs.
    """
    rating = reviews.rating_for(correct=correct, graded=graded)
    if rating is None:
        return
    scheduler = reviews.scheduler_from_settings()
    card = ReviewCard.objects.filter(mastery=mastery).first()
    if card is not None and card.last_quiz_id == quiz.pk:
        return
    if card is not None and attempt.submitted_at >= card.last_review:
        state = reviews.review(_card_state(card), rating=rating, at=attempt.submitted_at, scheduler=scheduler)
        last_quiz_id = quiz.pk
    elif card is None and mastery.attempts == graded:
        # This quiz is the skill's first graded one.
        state = reviews.review(None, rating=rating, at=attempt.submitted_at, scheduler=scheduler)
        last_quiz_id = quiz.pk
    else:
        history = graded_quizzes_of(student_id=mastery.student_id, key=mastery.skill_key)
        replayed = reviews.replay([(at, c, n) for _pk, at, c, n in history], scheduler=scheduler)
        if replayed is None:
            return
        state, last_quiz_id = replayed, history[-1][0]
    ReviewCard.objects.update_or_create(
        mastery=mastery,
        defaults={
            "student_id": mastery.student_id,
            "skill_key": mastery.skill_key,
            "state": state.state,
            "step": state.step,
            "stability": state.stability,
            "difficulty": state.difficulty,
            "due": state.due,
            "last_review": state.last_review,
            "reviews": state.reviews,
            "last_quiz_id": last_quiz_id,
        },
    )


# --- Reads ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewRow:
    """A skill's review as the API shows it (learning.review_apis.ReviewOutput)."""

    skill: str
    skill_key: str
    due_at: datetime
    overdue_days: float
    retrievability: float
    stability: float
    difficulty: float
    reviews: int
    last_review_at: datetime | None
    estimate: float  # the BKT mastery now (learning.mastery)


def _review_row(card: ReviewCard, *, now: datetime, scheduler: Any, params: BktParams) -> ReviewRow:
    row = card.mastery
    return ReviewRow(
        skill=row.skill,
        skill_key=card.skill_key,
        due_at=card.due,
        overdue_days=round(reviews.overdue_days(card.due, now=now), 4),
        retrievability=round(reviews.retrievability(_card_state(card), now=now, scheduler=scheduler), 4),
        stability=round(card.stability, 4),
        difficulty=round(card.difficulty, 4),
        reviews=card.reviews,
        last_review_at=card.last_review,
        estimate=round(decayed(row.estimate, elapsed=now - row.estimated_at, params=params), 4),
    )


def _most_urgent_first(rows: list[ReviewRow]) -> list[ReviewRow]:
    """Lowest probability of recall first, then the longest overdue, then by skill."""
    return sorted(rows, key=lambda r: (r.retrievability, r.due_at, r.skill_key))


def student_reviews(*, user: Any, student_id: int) -> tuple[User, datetime, list[ReviewRow], list[ReviewRow]]:
    """(the student, now, the due reviews, the next LEARNING_REVIEWS_UPCOMING ones) of a student
    `user` may see. Due: `due` at or before now, the lowest probability of recall first; upcoming:
    soonest first. Two queries."""
    student = student_get_overseen(user=user, student_id=student_id)
    now, scheduler, params = timezone.now(), reviews.scheduler_from_settings(), BktParams.from_settings()
    cards = ReviewCard.objects.filter(student=student).select_related("mastery")
    due = [_review_row(c, now=now, scheduler=scheduler, params=params) for c in cards.filter(due__lte=now)]
    upcoming = cards.filter(due__gt=now).order_by("due", "pk")[: settings.LEARNING_REVIEWS_UPCOMING]
    rows = [_review_row(c, now=now, scheduler=scheduler, params=params) for c in upcoming]
    return student, now, _most_urgent_first(due), rows


def _classroom_get(*, user: Any, classroom_id: int) -> Classroom:
    """A classroom whose reviews `user` may read (accounts.selectors.classroom_get_overseen: its
    teachers, its school's administrators, staff). A student is Forbidden (a class's figures are
    never a student's); anyone else NotFound."""
    if getattr(user, "role", None) == User.Role.STUDENT:
        raise Forbidden(_("Only the class's teachers can read its reviews."))
    return classroom_get_overseen(user=user, classroom_id=classroom_id)


@dataclass(frozen=True)
class StudentReviews:
    id: int
    username: str
    due: list[ReviewRow]


def classroom_reviews(*, user: Any, classroom_id: int) -> tuple[Classroom, datetime, list[StudentReviews]]:
    """Each current student of the class (accounts.selectors.enrollments_current), by username,
    with their due reviews (most urgent first; none: an empty list). Three queries whatever the
    class's size."""
    classroom = _classroom_get(user=user, classroom_id=classroom_id)
    now, scheduler, params = timezone.now(), reviews.scheduler_from_settings(), BktParams.from_settings()
    students = list(
        enrollments_current()
        .filter(classroom=classroom)
        .order_by("student__username")
        .values_list("student_id", "student__username")
    )
    due: dict[int, list[ReviewRow]] = {}
    cards = ReviewCard.objects.filter(student_id__in=[pk for pk, _name in students], due__lte=now)
    for card in cards.select_related("mastery"):
        due.setdefault(card.student_id, []).append(_review_row(card, now=now, scheduler=scheduler, params=params))
    rows = [StudentReviews(id=pk, username=name, due=_most_urgent_first(due.get(pk, []))) for pk, name in students]
    return classroom, now, rows


def reviews_due_for_record(*, student_id: int, now: datetime) -> list[ReviewItem]:
    """The student's due reviews for the prompt's learning record, at most
    LEARNING_RECORD_MAX_REVIEWS, the lowest probability of recall first, among the
    LEARNING_RECORD_SKILL_SCAN longest overdue. One query. The chat turn's, for the student who
    owns the conversation (an inactive student has none)."""
    scheduler, params = reviews.scheduler_from_settings(), BktParams.from_settings()
    cards = (
        ReviewCard.objects.filter(student_id=student_id, student__is_active=True, due__lte=now)
        .select_related("mastery")
        .order_by("due", "pk")[: settings.LEARNING_RECORD_SKILL_SCAN]
    )
    rows = _most_urgent_first([_review_row(c, now=now, scheduler=scheduler, params=params) for c in cards])
    return [
        ReviewItem(skill=r.skill, due_at=r.due_at, retrievability=r.retrievability, estimate=r.estimate)
        for r in rows[: settings.LEARNING_RECORD_MAX_REVIEWS]
    ]
