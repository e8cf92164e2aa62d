"""The student card's API and services (memory.card): who reads and edits what, the change log,
proposals and their decision, and the token limit."""

from __future__ import annotations

import pytest

from memory import card as cards
from memory.card_prompts import CardView, card_tokens
from memory.models import CardChange, StudentCard
from tests.memory.recall_helpers import note


def url(student) -> str:
    return f"/api/v1/students/{student.pk}/card/"


def patch(client, student, body):
    return client.patch(url(student), body, format="json")


def test_a_student_without_a_card_gets_the_empty_card(clients, school):
    """No card yet: 200 with empty fields, the limit, no date; reading writes no row."""
    for who in ("alice", "teacher_a"):
        resp = clients[who].get(url(school["alice"]))
        assert resp.status_code == 200, resp.content
        body = resp.json()
        assert body["student"] == school["alice"].pk
        assert body["goals"] == body["accommodations"] == body["interests"] == body["pending"] == []
        assert (body["level"], body["register"], body["student_editable"]) == ("", "", [])
        assert (body["token_count"], body["token_limit"], body["updated_at"]) == (0, 300, None)
    assert not StudentCard.objects.exists()


def test_a_teacher_edits_every_field_and_each_change_is_logged(clients, school):
    """A teacher's PATCH replaces the lists and sets the texts; each value added or removed and
    each text set is an applied change by that teacher; the card's tokens are counted."""
    alice, teacher = school["alice"], school["teacher_a"]
    body = {
        "goals": ["Prepare the brevet in June"],
        "accommodations": ["Dyslexia: short sentences", "Extra time"],
        "interests": ["football"],
        "level": "4e, solid in geometry",
        "register": "informal",
        "student_editable": ["interests", "goals"],
    }
    resp = patch(clients["teacher_a"], alice, body)
    assert resp.status_code == 200, resp.content
    card = resp.json()
    assert card["goals"] == ["Prepare the brevet in June"] and card["interests"] == ["football"]
    assert card["student_editable"] == ["goals", "interests"] and card["updated_at"]
    view = CardView(
        goals=("Prepare the brevet in June",),
        accommodations=("Dyslexia: short sentences", "Extra time"),
        interests=("football",),
        level="4e, solid in geometry",
        register="informal",
    )
    assert card["token_count"] == card_tokens(view, language="en") > 0
    changes = {(c.field, c.op, c.value) for c in CardChange.objects.all()}
    assert changes == {
        ("goals", "add", "Prepare the brevet in June"),
        ("accommodations", "add", "Dyslexia: short sentences"),
        ("accommodations", "add", "Extra time"),
        ("interests", "add", "football"),
        ("level", "set", "4e, solid in geometry"),
        ("register", "set", "informal"),
        ("student_editable", "add", "goals"),
        ("student_editable", "add", "interests"),
    }
    assert {(c.status, c.source, c.actor_id, c.decided_by_id) for c in CardChange.objects.all()} == {
        ("applied", "teacher", teacher.pk, teacher.pk)
    }
    resp = patch(clients["teacher_a"], alice, {"interests": ["football", "chess"], "level": ""})
    assert resp.status_code == 200
    latest = list(CardChange.objects.order_by("-id").values_list("field", "op", "value")[:2])
    assert set(latest) == {("interests", "add", "chess"), ("level", "set", "")}
    log = clients["teacher_a"].get(url(alice) + "changes/").json()
    assert log["count"] == 10 and log["results"][0]["actor"] == {"id": teacher.pk, "username": "teacher_a"}


def test_a_student_edits_only_what_the_teacher_allows(clients, school):
    """The student may edit the fields in student_editable; any other, accommodations and
    student_editable itself are a 403 card_field_not_editable that changes nothing."""
    alice = school["alice"]
    assert patch(clients["teacher_a"], alice, {"student_editable": ["interests"]}).status_code == 200
    resp = patch(clients["alice"], alice, {"interests": ["skateboarding", "manga"]})
    assert resp.status_code == 200, resp.content
    assert resp.json()["interests"] == ["skateboarding", "manga"]
    assert CardChange.objects.filter(source="student", actor=alice).count() == 2
    for body in (
        {"goals": ["No homework ever"]},
        {"accommodations": ["No quizzes"]},
        {"student_editable": ["goals"]},
        {"interests": ["chess"], "level": "Expert"},
    ):
        before = CardChange.objects.count()
        resp = patch(clients["alice"], alice, body)
        assert resp.status_code == 403, body
        assert resp.json()["error"]["code"] == "card_field_not_editable"
        assert CardChange.objects.count() == before
    assert StudentCard.objects.get(student=alice).interests == ["skateboarding", "manga"]


def test_bad_input_is_a_400(clients, school):
    alice = school["alice"]
    for body in ({}, {"goals": "not a list"}, {"goals": [""]}, {"goals": ["x" * 121]}, {"student_editable": ["x"]}):
        resp = patch(clients["teacher_a"], alice, body)
        assert resp.status_code == 400, (body, resp.content)
        assert resp.json()["error"]["code"] == "invalid"


def test_a_card_past_its_token_limit_is_refused_with_the_count(clients, school, settings):
    """A write that takes the card past MEMORY_CARD_MAX_TOKENS is a 400 card_too_long naming the
    count and the limit; nothing is written. A card over a lowered limit may still shrink."""
    alice = school["alice"]
    settings.MEMORY_CARD_MAX_TOKENS = 120
    assert patch(clients["teacher_a"], alice, {"goals": ["Prepare the brevet in June"]}).status_code == 200
    long_goals = [f"Goal number {i} about fractions, decimals and percentages" for i in range(12)]
    resp = patch(clients["teacher_a"], alice, {"goals": long_goals})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == "card_too_long" and "120" in error["message"]
    assert error["details"]["token_limit"] == 120 and error["details"]["token_count"] > 120
    assert str(error["details"]["token_count"]) in error["message"]
    assert StudentCard.objects.get(student=alice).goals == ["Prepare the brevet in June"]
    assert CardChange.objects.count() == 1
    settings.MEMORY_CARD_MAX_TOKENS = 300
    assert patch(clients["teacher_a"], alice, {"goals": long_goals[:6]}).status_code == 200
    settings.MEMORY_CARD_MAX_TOKENS = 50
    assert patch(clients["teacher_a"], alice, {"goals": long_goals[:3]}).status_code == 200
    assert patch(clients["teacher_a"], alice, {"goals": long_goals[:4]}).status_code == 400


def propose(student, field="interests", op="add", value="football", confidence=0.95, memory=None):
    return cards.card_propose(
        student_id=student.pk,
        field=field,
        op=op,
        value=value,
        confidence=confidence,
        memory_id=memory.pk if memory else None,
    )


def test_proposals_apply_at_high_confidence_and_accommodations_wait(school):
    """An interest at 0.95 is applied at once; at 0.6 it waits; an accommodation waits whatever
    its confidence. The same proposal again, or what the card already says, is not repeated."""
    alice = school["alice"]
    fact = note(alice, "Talks about football matches", "Fact: Loves football | Plays every weekend.")
    applied = propose(alice, memory=fact)
    assert applied is not None and (applied.status, applied.source, applied.memory_id) == (
        "applied",
        "extraction",
        fact.pk,
    )
    assert applied.decided_at is not None and applied.decided_by is None and applied.actor is None
    assert StudentCard.objects.get(student=alice).interests == ["football"]
    assert propose(alice, value="Football") is None  # the card says it already
    unsure = propose(alice, value="chess", confidence=0.6)
    assert unsure is not None and unsure.status == "pending"
    assert propose(alice, value="Chess", confidence=0.6) is None  # pending already
    accommodation = propose(alice, field="accommodations", value="Dyslexia", confidence=1.0)
    assert accommodation is not None and accommodation.status == "pending"
    card = StudentCard.objects.get(student=alice)
    assert card.accommodations == [] and card.interests == ["football"]
    with pytest.raises(ValueError):
        propose(alice, field="level", op="add", value="4e")
    with pytest.raises(ValueError):
        propose(alice, field="student_editable", value="goals")


def test_a_teacher_accepts_or_rejects_a_pending_change_once(clients, school):
    """Accepting applies the change to the card; a decided change is a 409 change_decided; a
    rejected proposal is not proposed again. The student sees neither the pending proposals nor
    the refused ones, and may not decide them (404)."""
    alice = school["alice"]
    dyslexia = propose(alice, field="accommodations", value="Dyslexia", confidence=0.9)
    chess = propose(alice, value="chess", confidence=0.6)
    assert dyslexia is not None and chess is not None
    pending = clients["teacher_a"].get(url(alice)).json()["pending"]
    assert {p["id"] for p in pending} == {dyslexia.pk, chess.pk}
    mine = clients["alice"].get(url(alice)).json()
    assert mine["pending"] == [] and mine["accommodations"] == []
    assert clients["alice"].post(f"/api/v1/card-changes/{dyslexia.pk}/accept/").status_code == 404
    resp = clients["teacher_a"].post(f"/api/v1/card-changes/{dyslexia.pk}/accept/")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["status"] == "applied" and body["decided_by"] == {"id": school["teacher_a"].pk, "username": "teacher_a"}
    assert StudentCard.objects.get(student=alice).accommodations == ["Dyslexia"]
    again = clients["teacher_a"].post(f"/api/v1/card-changes/{dyslexia.pk}/reject/")
    assert again.status_code == 409 and again.json()["error"]["code"] == "change_decided"
    assert clients["teacher_a"].post(f"/api/v1/card-changes/{chess.pk}/reject/").json()["status"] == "rejected"
    assert propose(alice, value="chess", confidence=0.6) is None
    assert "chess" not in StudentCard.objects.get(student=alice).interests
    own = clients["alice"].get(url(alice) + "changes/").json()["results"]
    assert [c["id"] for c in own] == [dyslexia.pk] and own[0]["reason"] == ""
    assert {c["id"] for c in clients["teacher_a"].get(url(alice) + "changes/").json()["results"]} == {
        dyslexia.pk,
        chess.pk,
    }


def test_an_accepted_change_past_the_limit_is_refused_and_stays_pending(clients, school, settings):
    alice = school["alice"]
    settings.MEMORY_CARD_MAX_TOKENS = 90
    long = "Extra time on every written test, with a reader for the instructions and large print"
    change = propose(alice, field="accommodations", value=long, confidence=0.9)
    assert patch(clients["teacher_a"], alice, {"goals": ["Prepare the brevet in June"]}).status_code == 200
    resp = clients["teacher_a"].post(f"/api/v1/card-changes/{change.pk}/accept/")
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "card_too_long"
    change.refresh_from_db()
    assert change.status == "pending" and StudentCard.objects.get(student=alice).accommodations == []


def test_a_high_confidence_proposal_that_does_not_fit_waits(school, settings):
    """Applied at once only if the card stays within its limit; else it waits for a teacher."""
    settings.MEMORY_CARD_MAX_TOKENS = 40
    change = propose(school["alice"], value="football and basketball on weekends with friends from school")
    assert change is not None and change.status == "pending"
    assert StudentCard.objects.get(student=school["alice"]).interests == []


def test_staff_read_edit_and_decide_any_students_card(clients, school):
    """An active staff account reads any student's card with its proposals, edits it (logged as
    staff) and decides its proposals; staff without is_staff get 404 like anyone outside."""
    from tests.conftest import client_for, make_user

    alice = school["alice"]
    root = client_for(make_user("root", "staff", is_staff=True, is_superuser=True))
    clerk = client_for(make_user("clerk", "staff"))
    change = propose(alice, field="accommodations", value="Extra time", confidence=0.9)
    assert [p["id"] for p in root.get(url(alice)).json()["pending"]] == [change.pk]
    assert patch(root, alice, {"goals": ["Pass the brevet"]}).status_code == 200
    assert CardChange.objects.get(field="goals").source == "staff"
    assert root.post(f"/api/v1/card-changes/{change.pk}/accept/").json()["status"] == "applied"
    assert clerk.get(url(alice)).status_code == 404
    assert clerk.post(f"/api/v1/card-changes/{change.pk}/reject/").status_code == 404
