"""Mastery over the API: per student (their teacher, or themself) and per class (its teacher)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from learning.mastery import BktParams, decayed
from learning.models import SkillMastery
from learning.services import quiz_answers_submit
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE, answers_body, make_quiz


def answer(student, given, **quiz_changes):
    quiz = make_quiz(student, **quiz_changes)
    quiz_answers_submit(
        user=student, quiz_id=quiz.pk, client_attempt_id=f"q{quiz.pk}", answers=answers_body(quiz, given)["answers"]
    )
    return quiz


def test_a_students_skills(clients, school):
    """Counts, the latest quiz and today's estimate per skill, by label; the same for the student
    and their teacher."""
    alice = school["alice"]
    answer(alice, THREE_OF_FIVE)
    latest = answer(alice, ALL_RIGHT, skill="comparing fractions")
    mine = clients["alice"].get(f"/api/v1/students/{alice.pk}/skills/")
    assert mine.status_code == 200, mine.content
    rows = mine.json()
    assert [r["skill"] for r in rows] == [SKILL, "comparing fractions"]
    fractions, comparing = rows
    assert (fractions["attempts"], fractions["correct"], fractions["latest_correct"], fractions["latest_total"]) == (
        5,
        3,
        3,
        5,
    )
    assert (comparing["latest_quiz_id"], comparing["latest_correct"]) == (latest.pk, 5)
    assert comparing["estimate"] > fractions["estimate"] > 0
    as_teacher = clients["teacher_a"].get(f"/api/v1/students/{alice.pk}/skills/").json()
    assert [(r["skill"], r["attempts"], r["last_result_at"]) for r in as_teacher] == [
        (r["skill"], r["attempts"], r["last_result_at"]) for r in rows
    ]
    assert clients["alice"].get(f"/api/v1/students/{school['bob'].pk}/skills/").status_code == 404


def test_a_class_per_skill(clients, school):
    """Per skill, the class average of the assessed students and each one's estimate, weakest
    first; only the class's teacher reads it."""
    answer(school["alice"], ALL_RIGHT)
    answer(school["bob"], THREE_OF_FIVE)
    answer(school["carol"], ALL_RIGHT)  # another class
    resp = clients["teacher_a"].get(f"/api/v1/classrooms/{school['class_a'].pk}/skills/")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert (body["classroom"], body["name"]) == (school["class_a"].pk, "5A")
    [skill] = body["skills"]
    assert skill["skill"] == SKILL
    students = skill["students"]
    assert [s["username"] for s in students] == ["bob", "alice"]
    assert skill["class_average"] == pytest.approx(sum(s["estimate"] for s in students) / 2, abs=1e-4)
    for who in ("alice", "bob", "carol", "teacher_b"):
        assert clients[who].get(f"/api/v1/classrooms/{school['class_a'].pk}/skills/").status_code == 404


def test_the_estimate_read_later_has_decayed(clients, school):
    """The API shows today's estimate: a result from a half-life ago is halfway back to the prior."""
    alice = school["alice"]
    answer(alice, THREE_OF_FIVE)
    row = SkillMastery.objects.get(student=alice)
    params = BktParams.from_settings()
    SkillMastery.objects.filter(pk=row.pk).update(estimated_at=timezone.now() - timedelta(days=params.half_life_days))
    shown = clients["alice"].get(f"/api/v1/students/{alice.pk}/skills/").json()[0]["estimate"]
    assert shown == pytest.approx(params.p_init + (row.estimate - params.p_init) / 2, abs=1e-4)
    assert decayed(row.estimate, elapsed=timedelta(0), params=params) == row.estimate
