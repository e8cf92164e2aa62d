"""Mastery per skill: the BKT math (pure) and its update in the grading transaction."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from learning import mastery
from learning.mastery import BktParams, decayed, observe, record
from learning.models import SkillMastery
from learning.services import quiz_answers_submit
from tests.learning.conftest import ALL_RIGHT, THREE_OF_FIVE, answers_body, make_quiz

P = BktParams(p_init=0.3, p_learn=0.1, p_slip=0.1, p_guess=0.2, half_life_days=60, trend_window=5)


def test_one_step_by_hand():
    """The textbook update: Bayes' rule with slip and guess, then the chance to learn."""
    # correct: 0.3*0.9 / (0.3*0.9 + 0.7*0.2) = 0.27/0.41; then + (1 - that) * 0.1
    right = 0.27 / 0.41
    assert observe(0.3, True, P) == pytest.approx(right + (1 - right) * 0.1)
    # incorrect: 0.3*0.1 / (0.3*0.1 + 0.7*0.8) = 0.03/0.59
    wrong = 0.03 / 0.59
    assert observe(0.3, False, P) == pytest.approx(wrong + (1 - wrong) * 0.1)


def test_estimates_move_with_results_and_stay_probabilities():
    """Right answers raise the estimate, wrong ones lower it, strictly inside (0, 1): after many
    right answers a wrong one still counts."""
    p = P.p_init
    for _ in range(100):
        nxt = observe(p, True, P)
        assert p <= nxt <= mastery.ESTIMATE_MAX
        p = nxt
    assert p == mastery.ESTIMATE_MAX
    assert observe(observe(observe(p, False, P), False, P), False, P) < 0.8
    for _ in range(100):
        nxt = observe(p, False, P)
        assert mastery.ESTIMATE_MIN <= nxt <= p
        p = nxt
    # Repeated failures settle where learning balances the evidence, above 0.
    assert 0 < p < 0.2


def test_decay_halves_the_distance_to_the_prior_every_half_life():
    assert decayed(0.9, elapsed=timedelta(days=60), params=P) == pytest.approx(0.3 + 0.6 / 2)
    assert decayed(0.9, elapsed=timedelta(days=120), params=P) == pytest.approx(0.3 + 0.6 / 4)
    assert decayed(0.1, elapsed=timedelta(days=60), params=P) == pytest.approx(0.2)  # up toward the prior
    assert decayed(0.9, elapsed=timedelta(0), params=P) == 0.9
    no_decay = BktParams(half_life_days=0)
    assert decayed(0.9, elapsed=timedelta(days=1000), params=no_decay) == 0.9


def test_record_trend_spans_the_last_results():
    """The trend is the estimate's change over the last trend_window results; a fresh skill
    starts at the prior."""
    first = record(estimate=None, history=[], elapsed=timedelta(0), results=[True, True, False], params=P)
    assert len(first.history) == 4 and first.history[0] == P.p_init
    assert first.trend == pytest.approx(first.estimate - P.p_init)
    later = record(estimate=first.estimate, history=first.history, elapsed=timedelta(0), results=[False] * 4, params=P)
    assert len(later.history) == P.trend_window + 1
    assert later.trend < 0
    assert later.trend == pytest.approx(later.history[-1] - later.history[0])


def test_record_decays_before_new_results():
    """Old evidence counts less: a long pause pulls a high estimate toward the prior first."""
    fresh = record(estimate=0.95, history=[0.9, 0.95], elapsed=timedelta(0), results=[True], params=P)
    stale = record(estimate=0.95, history=[0.9, 0.95], elapsed=timedelta(days=180), results=[True], params=P)
    assert stale.estimate < fresh.estimate


@pytest.mark.parametrize(
    "bad",
    [{"p_slip": 0.6, "p_guess": 0.5}, {"p_init": 0}, {"p_learn": 1.0}, {"half_life_days": -1}, {"trend_window": 0}],
)
def test_parameters_are_checked(bad):
    with pytest.raises(ImproperlyConfigured):
        BktParams(**bad)


def test_parameters_come_from_the_settings(settings):
    settings.LEARNING_MASTERY = {"p_init": 0.5, "half_life_days": 0}
    assert BktParams.from_settings() == BktParams(p_init=0.5, half_life_days=0)
    settings.LEARNING_MASTERY = {"p_int": 0.5}
    with pytest.raises(ImproperlyConfigured, match="unknown keys"):
        BktParams.from_settings()


def test_grading_updates_the_skill_once_per_quiz(school):
    """Each graded quiz adds its answers, in question order, to its skill: counts, latest result,
    estimate and trend. Two spellings of a label are one skill."""
    alice = school["alice"]
    first = make_quiz(alice)
    quiz_answers_submit(user=alice, quiz_id=first.pk, client_attempt_id="a", answers=_answers(first, THREE_OF_FIVE))
    row = SkillMastery.objects.get(student=alice)
    expected = record(
        estimate=None,
        history=[],
        elapsed=timedelta(0),
        results=[True, True, True, False, False],
        params=BktParams.from_settings(),
    )
    assert row.estimate == pytest.approx(expected.estimate)
    assert (row.attempts, row.correct, row.latest_correct, row.latest_total) == (5, 3, 3, 5)

    second = make_quiz(alice, skill="  Adding Fractions with UNLIKE denominators ")
    quiz_answers_submit(user=alice, quiz_id=second.pk, client_attempt_id="b", answers=_answers(second, ALL_RIGHT))
    row.refresh_from_db()
    assert SkillMastery.objects.filter(student=alice).count() == 1
    assert (row.attempts, row.correct, row.latest_correct, row.latest_quiz_id) == (10, 8, 5, second.pk)
    assert row.estimate > expected.estimate and row.trend > 0
    assert row.skill == "Adding Fractions with UNLIKE denominators"


def _answers(quiz, given):
    return answers_body(quiz, given)["answers"]
