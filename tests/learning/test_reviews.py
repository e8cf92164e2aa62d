"""Reviews scheduled from quiz results: the score's FSRS rating, the due dates it gives, and the
card the grading transaction keeps per skill, once per quiz, whatever order grading finishes in."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest
from django.apps import apps
from django.utils import timezone
from fsrs import Rating

from learning import reviews
from learning.models import Answer, QuizAttempt, ReviewCard, SkillMastery
from learning.review_cards import graded_quizzes_of, review_card_record
from learning.services import answer_grade_store, quiz_answers_submit
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE, answers_body, make_quiz

ALL_WRONG = ["2/6", "0.1", "", "1/3", ""]  # short texts left blank: wrong at once
MONDAY = datetime(2026, 1, 5, 16, 30, tzinfo=UTC)


def answered(student, given, **changes):
    quiz = make_quiz(student, **changes)
    body = answers_body(quiz, given, attempt=f"q{quiz.pk}")
    quiz_answers_submit(
        user=student, quiz_id=quiz.pk, client_attempt_id=body["client_attempt_id"], answers=body["answers"]
    )
    return quiz


@pytest.mark.parametrize(
    ("correct", "graded", "rating"),
    [
        (0, 5, Rating.Again),
        (2, 5, Rating.Again),
        (1, 2, Rating.Hard),
        (3, 5, Rating.Hard),
        (3, 4, Rating.Good),
        (4, 5, Rating.Good),
        (9, 10, Rating.Good),
        (5, 5, Rating.Easy),
        (1, 1, Rating.Easy),
        (0, 1, Rating.Again),
        (0, 0, None),
    ],
)
def test_the_score_maps_to_a_rating(correct, graded, rating):
    """< 50 % Again, < 75 % Hard, < 100 % Good, 100 % Easy; nothing graded is no review."""
    assert reviews.rating_for(correct=correct, graded=graded) == rating


def test_a_first_quiz_is_due_in_whole_days_by_its_result(settings):
    """A first quiz failed or shaky is due the next day, a good one in 2 days, a perfect one in 8:
    FSRS's initial stabilities with its default weights, no fuzz, no minute-long steps."""
    scheduler = reviews.scheduler_from_settings()
    due = {
        rating: reviews.review(None, rating=rating, at=MONDAY, scheduler=scheduler).due - MONDAY for rating in Rating
    }
    assert due == {
        Rating.Again: timedelta(days=1),
        Rating.Hard: timedelta(days=1),
        Rating.Good: timedelta(days=2),
        Rating.Easy: timedelta(days=8),
    }


def test_a_perfect_streak_spaces_out_and_a_failure_brings_the_skill_back():
    """Each perfect quiz taken when due pushes the next one further, up to the year's cap; a
    failed quiz after a streak brings it back within days, and the same results always give the
    same dates."""
    scheduler = reviews.scheduler_from_settings()
    card, at, gaps = None, MONDAY, []
    for _ in range(4):
        card = reviews.review(card, rating=Rating.Easy, at=at, scheduler=scheduler)
        gaps.append((card.due - at).days)
        at = card.due
    assert gaps == [8, 66, 365, 365]
    assert card.reviews == 4
    good = reviews.replay([(MONDAY, 4, 5), (MONDAY + timedelta(days=2), 5, 5)], scheduler=scheduler)
    failed = reviews.review(good, rating=Rating.Again, at=good.due, scheduler=scheduler)
    assert (failed.due - good.due).days <= 2 < (good.due - MONDAY).days
    assert failed.stability < good.stability and failed.difficulty > good.difficulty
    again = reviews.replay([(MONDAY, 4, 5), (MONDAY + timedelta(days=2), 5, 5)], scheduler=scheduler)
    assert again == good


def test_the_chance_of_recall_is_the_target_when_due():
    """At the due date the probability of recall is about the desired retention (0.9), 1 right
    after the review, and lower past it."""
    scheduler = reviews.scheduler_from_settings()
    card = reviews.replay([(MONDAY, 4, 5), (MONDAY + timedelta(days=2), 4, 5)], scheduler=scheduler)
    assert card is not None
    assert reviews.retrievability(card, now=card.last_review, scheduler=scheduler) == 1
    at_due = reviews.retrievability(card, now=card.due, scheduler=scheduler)
    later = reviews.retrievability(card, now=card.due + timedelta(days=10), scheduler=scheduler)
    assert at_due == pytest.approx(0.9, abs=0.01) and later < at_due
    assert reviews.overdue_days(card.due, now=card.due - timedelta(hours=1)) == 0
    assert reviews.overdue_days(card.due, now=card.due + timedelta(hours=36)) == 1.5


def test_grading_a_quiz_writes_the_skills_card_at_its_submission(school):
    """The settle transaction creates the card (3/5: Hard, due a day after the submission), then
    counts the next quiz of the skill on it; a failed skill is due sooner than a perfect one."""
    alice = school["alice"]
    first = answered(alice, THREE_OF_FIVE)
    card = ReviewCard.objects.get(student=alice)
    submitted = QuizAttempt.objects.get(quiz=first).submitted_at
    assert (card.skill_key, card.reviews, card.last_quiz_id, card.last_review) == (SKILL, 1, first.pk, submitted)
    assert card.mastery == SkillMastery.objects.get(student=alice)
    assert card.due == submitted + timedelta(days=1)
    assert card.state == ReviewCard.State.REVIEW and card.step is None

    second = answered(alice, ALL_RIGHT, skill=SKILL.upper())  # the same skill, written otherwise
    card.refresh_from_db()
    assert (card.reviews, card.last_quiz_id) == (2, second.pk)
    assert ReviewCard.objects.filter(student=alice).count() == 1

    answered(alice, ALL_WRONG, skill="perimeter")
    answered(alice, ALL_RIGHT, skill="area")
    failed, perfect = (ReviewCard.objects.get(student=alice, skill_key=key) for key in ("perimeter", "area"))
    assert failed.due < perfect.due
    assert (perfect.due - perfect.last_review).days == 8


def test_a_quiz_is_counted_once(school):
    """A redelivered grading task changes nothing, and counting the same quiz again is a no-op."""
    alice = school["alice"]
    quiz = make_quiz(alice)
    body = answers_body(quiz, ["3/4", "0.83", "the bottom number", "1/2", "same denominators"], attempt="a")
    quiz_answers_submit(user=alice, quiz_id=quiz.pk, client_attempt_id="a", answers=body["answers"])
    pending = list(Answer.objects.filter(attempt__quiz=quiz, result=Answer.Result.PENDING))
    assert len(pending) == 2 and not ReviewCard.objects.exists()
    assert answer_grade_store(answer_id=pending[0].pk, result="correct")
    assert not ReviewCard.objects.exists()  # one answer still pending: not settled
    assert answer_grade_store(answer_id=pending[1].pk, result="incorrect")
    card = ReviewCard.objects.get()
    assert (card.reviews, card.last_quiz_id) == (1, quiz.pk)
    before = ReviewCard.objects.values().get()

    assert not answer_grade_store(answer_id=pending[1].pk, result="correct")  # the task again
    mastery = SkillMastery.objects.get()
    attempt = QuizAttempt.objects.get(quiz=quiz)
    review_card_record(mastery=mastery, quiz=quiz, attempt=attempt, correct=4, graded=5)
    assert ReviewCard.objects.values().get() == before


def test_a_quiz_graded_after_a_later_one_is_replayed_in_submission_order(school):
    """A short answer the model grades after a later quiz of the skill was settled: the card is
    rebuilt from both quizzes in submission order, and building it again changes nothing."""
    alice = school["alice"]
    early = make_quiz(alice)
    body = answers_body(early, ["3/4", "0.83", "the bottom number", "1/2", ""], attempt="early")
    quiz_answers_submit(user=alice, quiz_id=early.pk, client_attempt_id="early", answers=body["answers"])
    QuizAttempt.objects.filter(quiz=early).update(submitted_at=timezone.now() - timedelta(days=3))
    late = answered(alice, ALL_RIGHT)
    assert ReviewCard.objects.get().reviews == 1

    [pending] = Answer.objects.filter(attempt__quiz=early, result=Answer.Result.PENDING)
    answer_grade_store(answer_id=pending.pk, result="correct")
    card = ReviewCard.objects.get()
    history = graded_quizzes_of(student_id=alice.pk, key=SKILL)
    assert [pk for pk, *_ in history] == [early.pk, late.pk]
    expected = reviews.replay([(at, c, n) for _pk, at, c, n in history], scheduler=reviews.scheduler_from_settings())
    assert expected is not None
    assert (card.reviews, card.last_quiz_id, card.last_review, card.due) == (
        2,
        late.pk,
        expected.last_review,
        expected.due,
    )
    assert card.stability == pytest.approx(expected.stability)

    before = ReviewCard.objects.values().get()
    review_card_record(
        mastery=SkillMastery.objects.get(),
        quiz=early,
        attempt=QuizAttempt.objects.get(quiz=early),
        correct=4,
        graded=4,
    )
    after = ReviewCard.objects.values().get()
    assert {k: v for k, v in after.items() if k != "updated_at"} == {
        k: v for k, v in before.items() if k != "updated_at"
    }


def test_a_quiz_with_no_graded_answer_is_no_review(school):
    """Every answer ungraded (the model could not grade them): no mastery and no card."""
    alice = school["alice"]
    only_text = [
        {"kind": "short_text", "prompt": "Name the bottom number.", "answer": "denominator", "explanation": "x"}
    ]
    quiz = make_quiz(alice, questions=only_text)
    body = answers_body(quiz, ["the lower one"], attempt="u")
    quiz_answers_submit(user=alice, quiz_id=quiz.pk, client_attempt_id="u", answers=body["answers"])
    [pending] = Answer.objects.filter(attempt__quiz=quiz)
    answer_grade_store(answer_id=pending.pk, result="ungraded")
    assert not ReviewCard.objects.exists()


def test_the_migration_gives_every_skill_the_card_grading_would_have(school):
    """The data migration replays each skill's graded quizzes: the same cards as grading wrote."""
    alice, bob = school["alice"], school["bob"]
    answered(alice, THREE_OF_FIVE)
    answered(alice, ALL_RIGHT)
    answered(alice, ALL_WRONG, skill="perimeter")
    answered(bob, ALL_RIGHT)
    fields = ["student_id", "mastery_id", "skill_key", "state", "step", "due", "last_review", "reviews", "last_quiz"]
    written = sorted(ReviewCard.objects.values_list(*fields))
    stabilities = sorted(ReviewCard.objects.values_list("mastery_id", "stability", "difficulty"))
    ReviewCard.objects.all().delete()

    migration = importlib.import_module("learning.migrations.0003_review_card")
    migration.cards_backfill(apps, None)
    assert sorted(ReviewCard.objects.values_list(*fields)) == written
    for (m1, s1, d1), (m2, s2, d2) in zip(
        stabilities, sorted(ReviewCard.objects.values_list("mastery_id", "stability", "difficulty")), strict=True
    ):
        assert (m1, s1, d1) == (m2, pytest.approx(s2), pytest.approx(d2))
