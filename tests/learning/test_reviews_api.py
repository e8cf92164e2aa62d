"""The reviews over the API (a student's, a class's) and in the tutor's prompt: what is due, most
urgent first, who may read it, and the learning record's short list the scripted model receives."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts.models import User
from learning.models import ReviewCard
from learning.prompts import REVIEWS_HEADING, LearningRecord, ReviewItem, learning_record_block
from learning.selectors import learning_record_for
from tests.conftest import client_for, make_user
from tests.conversations.test_turn import send, start
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE
from tests.learning.test_chat_turn import record_of
from tests.learning.test_reviews import answered


def make_due(student, skill, *, days_overdue, reviewed_days_before=None):
    """Move the card of `skill` back in time: reviewed some days before it fell due, due
    `days_overdue` days ago."""
    now = timezone.now()
    card = ReviewCard.objects.get(student=student, skill_key=skill)
    interval = card.due - card.last_review
    due = now - timedelta(days=days_overdue)
    last = due - (timedelta(days=reviewed_days_before) if reviewed_days_before is not None else interval)
    ReviewCard.objects.filter(pk=card.pk).update(due=due, last_review=last)


@pytest.fixture
def staff(db):
    return make_user("operator", User.Role.STAFF, is_staff=True)


def test_a_students_reviews_due_most_urgent_first_and_upcoming(clients, school, staff):
    """Due: every skill whose date has passed, the lowest probability of recall first, with how
    overdue it is and the mastery now; upcoming: the next ones, soonest first. The student, their
    teacher and staff read the same."""
    alice = school["alice"]
    answered(alice, THREE_OF_FIVE)  # Hard: due tomorrow
    answered(alice, ALL_RIGHT, skill="area")  # Easy: due in 8 days
    answered(alice, ALL_RIGHT, skill="perimeter")
    answered(alice, THREE_OF_FIVE, skill="volume")
    make_due(alice, "area", days_overdue=2)
    make_due(alice, "perimeter", days_overdue=20)
    resp = clients["alice"].get(f"/api/v1/students/{alice.pk}/reviews/")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["student"] == alice.pk
    assert [r["skill"] for r in body["due"]] == ["perimeter", "area"]
    perimeter, area = body["due"]
    assert perimeter["retrievability"] < area["retrievability"] < 0.9
    assert perimeter["overdue_days"] == pytest.approx(20, abs=0.01)
    assert (area["reviews"], area["skill_key"]) == (1, "area")
    assert 0 < area["estimate"] < 1 and area["stability"] > 0 and 1 <= area["difficulty"] <= 10
    assert [r["skill"] for r in body["upcoming"]] == sorted([SKILL, "volume"])
    assert {r["overdue_days"] for r in body["upcoming"]} == {0}
    skills = {s["skill"]: s["estimate"] for s in clients["alice"].get(f"/api/v1/students/{alice.pk}/skills/").json()}
    assert area["estimate"] == pytest.approx(skills["area"], abs=1e-3)

    for reader in (clients["teacher_a"], client_for(staff)):
        again = reader.get(f"/api/v1/students/{alice.pk}/reviews/").json()
        assert [r["skill"] for r in again["due"]] == ["perimeter", "area"]
    assert clients["bob"].get(f"/api/v1/students/{alice.pk}/reviews/").status_code == 404


def test_upcoming_is_capped(clients, school):
    alice = school["alice"]
    for i in range(settings.LEARNING_REVIEWS_UPCOMING + 2):
        answered(alice, ALL_RIGHT, skill=f"skill {i}")
    body = clients["alice"].get(f"/api/v1/students/{alice.pk}/reviews/").json()
    assert body["due"] == [] and len(body["upcoming"]) == settings.LEARNING_REVIEWS_UPCOMING


def test_a_class_reviews(clients, school, staff):
    """Each student of the class by username with their due reviews (none: []); its teacher and
    staff read it; a student of the class gets 403, another class's teacher 404."""
    alice, bob = school["alice"], school["bob"]
    answered(alice, THREE_OF_FIVE)
    answered(bob, ALL_RIGHT)
    answered(school["carol"], THREE_OF_FIVE)  # another class
    make_due(alice, SKILL, days_overdue=1)
    url = f"/api/v1/classrooms/{school['class_a'].pk}/reviews/"
    resp = clients["teacher_a"].get(url)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["classroom"] == school["class_a"].pk
    assert [(s["username"], [r["skill"] for r in s["due"]]) for s in body["students"]] == [
        ("alice", [SKILL]),
        ("bob", []),
    ]
    assert client_for(staff).get(url).json()["students"] == body["students"]
    for student in ("alice", "bob"):
        refused = clients[student].get(url)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert clients["teacher_b"].get(url).status_code == 404
    assert client_for(staff).get("/api/v1/classrooms/999999/reviews/").status_code == 404


def test_a_teacher_with_is_staff_is_still_scoped(clients, school):
    """is_staff alone does not widen a teacher's reach: only staff accounts see every class."""
    school["teacher_b"].is_staff = True
    school["teacher_b"].save()
    assert clients["teacher_b"].get(f"/api/v1/classrooms/{school['class_a'].pk}/reviews/").status_code == 404
    assert clients["teacher_b"].get(f"/api/v1/students/{school['alice'].pk}/reviews/").status_code == 404


# --- In the prompt --------------------------------------------------------------------------------


def test_the_record_lists_at_most_three_due_reviews(school, django_assert_num_queries):
    """The learning record holds the due reviews, the most urgent first, at most
    LEARNING_RECORD_MAX_REVIEWS, in a constant number of queries."""
    alice = school["alice"]
    for days, skill in enumerate(["a", "b", "c", "d", "e"], start=1):
        answered(alice, ALL_RIGHT, skill=skill)
        make_due(alice, skill, days_overdue=days * 3)
    answered(alice, ALL_RIGHT, skill="not due")
    with django_assert_num_queries(3):
        record = learning_record_for(student_id=alice.pk)
    assert [r.skill for r in record.reviews] == ["e", "d", "c"]
    assert len(record.reviews) == settings.LEARNING_RECORD_MAX_REVIEWS


def test_the_review_lines_and_the_budget():
    """Each due review says how overdue it is, its chance of recall and the mastery now, after the
    open tasks; a small budget leaves them out, counted, never cut."""
    now = timezone.now()
    items = [
        ReviewItem(skill="Fractions <b>", due_at=now - timedelta(days=3), retrievability=0.71, estimate=0.62),
        ReviewItem(skill="area", due_at=now, retrievability=0.9, estimate=0.4),
    ]
    record = LearningRecord(now=now, tasks=[], recent=[], weakest=[], reviews=items)
    block = learning_record_block(record, budget_tokens=600)
    assert REVIEWS_HEADING in block
    assert "- Fractions <b>: overdue by 3 days; chance of recall now about 71%; estimated mastery 62%" in block
    assert "- area: due today; chance of recall now about 90%; estimated mastery 40%" in block
    small = learning_record_block(record, budget_tokens=135)
    assert "area" not in small and small.endswith("(1 more item not shown)\n</learning_record>")


def test_the_tutor_is_told_which_reviews_are_due(clients, llm, school):
    """Through a chat turn, the scripted model's learning record names the due skill, how overdue
    it is and its mastery, with the offer of a short quiz."""
    alice = school["alice"]
    answered(alice, THREE_OF_FIVE)
    answered(alice, ALL_RIGHT, skill="area")  # not due
    make_due(alice, SKILL, days_overdue=4)
    llm.script("chat", {"content": "Shall we do a short quiz on fractions?"})
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "Hi!").status_code == 201
    record = record_of(llm.calls("chat")[-1]["messages"])
    assert REVIEWS_HEADING in record
    lines = [line for line in record.splitlines() if "chance of recall" in line]
    assert len(lines) == 1 and lines[0].startswith(f"- {SKILL}: overdue by 4 days;")
    assert "estimated mastery" in lines[0]
