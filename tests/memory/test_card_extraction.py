"""Card changes proposed by fact extraction (memory.extraction.card_proposals_store): an
accommodation waits for a teacher, then reaches the tutor's prompt; an interest is applied at
high confidence; each names the fact it follows from."""

from __future__ import annotations

import json

from memory import extraction
from memory.card_prompts import CARD_PREAMBLE
from memory.models import AIMemory, CardChange, StudentCard
from tests.conversations.test_turn import send, start
from tests.memory.recall_helpers import note

DYSLEXIA = "Fact: Dyslexic reader of long texts | Prefers short sentences and large print."


def chat_card(llm) -> str:
    """The card the model received in the latest chat prompt, or ""."""
    messages = llm.calls("chat")[-1]["messages"]
    return next((str(m["content"]) for m in messages if str(m["content"]).startswith(CARD_PREAMBLE)), "")


def test_a_proposed_accommodation_waits_for_a_teacher_then_reaches_the_prompt(clients, school, llm):
    """The model proposes "Dyslexia" from a note: it stays pending, out of the card and of the
    prompt, until the class's teacher accepts it; the next prompt's card holds it."""
    alice = school["alice"]
    source = note(alice, "Reading support for long word problems", DYSLEXIA)
    outcome, (fact,) = extraction.facts_extract(memory_id=source.pk)
    assert outcome is extraction.Outcome.STORED
    change = CardChange.objects.get(student=alice)
    assert (change.field, change.op, change.value, change.status) == ("accommodations", "add", "Dyslexia", "pending")
    assert (change.source, change.memory_id, change.confidence) == ("extraction", fact.pk, 0.9)
    assert change.reason == fact.title
    assert StudentCard.objects.get(student=alice).accommodations == []

    cid = start(clients["alice"])
    assert send(clients["alice"], cid, cmid="before").status_code == 201
    assert "Dyslexia" not in chat_card(llm)

    pending = clients["teacher_a"].get(f"/api/v1/students/{alice.pk}/card/").json()["pending"]
    assert [(p["id"], p["memory"], p["source"]) for p in pending] == [(change.pk, fact.pk, "extraction")]
    assert clients["teacher_a"].post(f"/api/v1/card-changes/{change.pk}/accept/").status_code == 200
    assert send(clients["alice"], cid, "And now?", cmid="after").status_code == 201
    assert "- Dyslexia\n" in chat_card(llm)


def test_an_interest_is_applied_at_high_confidence_and_never_proposed_twice(school, llm):
    """ "football" at 0.95 is on the card at once; the same from another memory adds nothing."""
    alice = school["alice"]
    first = note(alice, "Talks about his football club", "Fact: Plays football every weekend | Loves football.")
    extraction.facts_extract(memory_id=first.pk)
    card = StudentCard.objects.get(student=alice)
    assert card.interests == ["football"] and card.token_count > 0
    change = CardChange.objects.get(student=alice)
    assert (change.status, change.decided_by, change.decided_at is not None) == ("applied", None, True)
    again = note(alice, "Football again in the break", "Fact: Watches football with friends | Talks of football.")
    extraction.facts_extract(memory_id=again.pk)
    assert CardChange.objects.filter(student=alice).count() == 1
    assert StudentCard.objects.get(student=alice).interests == ["football"]


def test_a_french_students_proposal_is_in_french(school, llm):
    alice = school["alice"]
    alice.language = "fr"
    alice.save(update_fields=["language"])
    source = note(
        alice,
        "Lecture des longs énoncés de problèmes",
        "Fact: Lectrice dyslexique des longs textes | Elle lit mieux des phrases courtes.",
    )
    extraction.facts_extract(memory_id=source.pk)
    assert CardChange.objects.get(student=alice).value == "Dyslexie"


def test_a_card_change_naming_a_refused_fact_is_dropped(school, llm):
    """The fact it names was refused (nothing in common with its memory): the change goes too.
    One below the confidence floor, or of a field the card has not, is dropped as well; one that
    names no fact cites the memory it was drawn from."""
    alice = school["alice"]
    source = note(alice, "Fractions practice on Monday", "She practised adding fractions with pictures.")
    invented = {
        "tier": "semantic",
        "title": "Owns three horses at home",
        "content": "Rides horses on her farm.",
        "confidence": 0.9,
        "evidence": [source.pk],
        "updates": None,
        "update_confidence": 0.0,
        "update_reason": "",
    }
    card = [
        {"field": "interests", "op": "add", "value": "horses", "confidence": 0.95, "fact": 0},
        {"field": "interests", "op": "add", "value": "drawing", "confidence": 0.3, "fact": None},
        {"field": "favourite_colour", "op": "set", "value": "blue", "confidence": 0.95, "fact": None},
        {"field": "level", "op": "add", "value": "5e", "confidence": 0.95, "fact": None},
        {"field": "goals", "op": "add", "value": "Master fractions", "confidence": 0.95, "fact": None},
    ]
    llm.script("extraction", {"content": json.dumps({"facts": [invented], "card": card})})
    outcome, stored = extraction.facts_extract(memory_id=source.pk)
    assert outcome is extraction.Outcome.STORED and stored == []
    assert list(CardChange.objects.values_list("field", "value", "memory_id")) == [
        ("goals", "Master fractions", source.pk)
    ]


def test_an_echoed_placeholder_shifts_nothing(school, llm):
    """A small model's placeholder item comes first and is refused; the change still names the
    right fact."""
    llm.extraction_echo = True
    alice = school["alice"]
    source = note(alice, "Reading support for long word problems", DYSLEXIA)
    _, (fact,) = extraction.facts_extract(memory_id=source.pk)
    assert CardChange.objects.get(student=alice).memory_id == fact.pk
    assert AIMemory.objects.filter(student=alice, kind="fact").count() == 1
