"""The memory lifecycle through its real paths: facts extracted by the summary model (the scripted
server's `default_extraction` rule), supersession by the model and by a teacher, the review
queue, consolidation of near-duplicates (hashed embeddings from the scripted server) and the
`consolidate` command. Nothing here is ever deleted."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from llm.models import LLMUsage
from memory import consolidation, extraction
from memory.models import AIMemory, ConsolidationDecision, SupersessionReview
from memory.services.embedding import memory_embeddings_write
from tests.memory.recall_helpers import note


def _facts(student) -> list[AIMemory]:
    return list(AIMemory.objects.filter(student=student, kind__in=["fact", "approach"]).order_by("pk"))


def test_facts_are_extracted_with_confidence_evidence_and_model(school, llm):
    """A note's "Fact:" and "Approach:" sentences become a fact and an approach, each citing the
    note, with the model's confidence and name; the call is metered; a second run adds nothing."""
    alice = school["alice"]
    source = note(
        alice,
        "Reading support for long word problems",
        "Fact: Dyslexic reader of long texts | Prefers short sentences and large print. "
        "Approach: Visual fraction bars first | Fraction bars before symbols helped her.",
    )
    outcome, stored = extraction.facts_extract(memory_id=source.pk)
    assert outcome is extraction.Outcome.STORED
    fact, approach = _facts(alice)
    assert (fact.kind, fact.tier, fact.source) == ("fact", "semantic", "extraction")
    assert (approach.kind, approach.tier) == ("approach", "procedural")
    assert fact.evidence == [source.pk] and fact.confidence == pytest.approx(0.9)
    assert fact.model == "scripted-summary" and fact.content == "Prefers short sentences and large print."
    assert LLMUsage.objects.filter(purpose="extraction", student=alice).count() == 1
    assert [m.pk for m in stored] == [fact.pk, approach.pk]
    assert extraction.facts_extract(memory_id=source.pk)[0] is extraction.Outcome.ALREADY_DONE
    assert len(_facts(alice)) == 2 and len(llm.calls("extraction")) == 1


def test_a_confident_update_supersedes_and_an_unsure_one_is_logged(school, llm):
    """ "Mastered fractions" after "struggles with fractions": at 0.9 the older fact is superseded
    (out of the index, readable, chained); at 0.5 both stay active and the pair waits for review."""
    alice = school["alice"]
    first = note(
        alice, "Fractions at the start of year", "Fact: Fractions level of the student | Struggles with fractions."
    )
    extraction.facts_extract(memory_id=first.pk)
    (old,) = _facts(alice)
    later = note(
        alice, "Fractions in the spring term", "Fact: Fractions level of the student | Has mastered fractions."
    )
    extraction.facts_extract(memory_id=later.pk)
    old.refresh_from_db()
    new = AIMemory.objects.get(student=alice, kind="fact", status="active")
    assert old.status == "superseded" and old.superseded_by_id == new.pk and old.archived_reason
    assert new.content == "Has mastered fractions."

    unsure = note(
        alice, "Fractions after the holidays", "Fact: Fractions level of the student | Forgot fractions. (unsure)"
    )
    extraction.facts_extract(memory_id=unsure.pk)
    newest = AIMemory.objects.filter(student=alice, kind="fact").latest("pk")
    new.refresh_from_db()
    assert new.status == "active" and newest.status == "active"
    review = SupersessionReview.objects.get(older=new, newer=newest)
    assert review.status == "open" and review.confidence == pytest.approx(0.5)


def test_chain_reviews_and_manual_supersession_over_the_api(clients, school, llm):
    """A teacher sees the chain, applies or dismisses a review, and supersedes by hand; another
    class's teacher gets 404 and a student is refused."""
    alice, teacher = school["alice"], clients["teacher_a"]
    first = note(
        alice, "Fractions at the start of year", "Fact: Fractions level of the student | Struggles with fractions."
    )
    extraction.facts_extract(memory_id=first.pk)
    second = note(
        alice, "Fractions after the holidays", "Fact: Fractions level of the student | Forgot fractions. (unsure)"
    )
    extraction.facts_extract(memory_id=second.pk)
    older, newer = _facts(alice)

    reviews = teacher.get("/api/v1/memory-reviews/", {"student": alice.pk}).json()["results"]
    assert [(r["older"]["id"], r["newer"]["id"]) for r in reviews] == [(older.pk, newer.pk)]
    assert clients["teacher_b"].get("/api/v1/memory-reviews/").json()["results"] == []
    review_id = reviews[0]["id"]
    assert clients["teacher_b"].post(f"/api/v1/memory-reviews/{review_id}/apply/").status_code == 404
    assert clients["alice"].post(f"/api/v1/memory-reviews/{review_id}/apply/").status_code == 403
    response = teacher.post(f"/api/v1/memory-reviews/{review_id}/apply/")
    assert response.status_code == 200 and response.json()["status"] == "applied"
    assert teacher.post(f"/api/v1/memory-reviews/{review_id}/dismiss/").status_code == 409
    older.refresh_from_db()
    assert older.status == "superseded" and older.superseded_by_id == newer.pk

    chain = teacher.get(f"/api/v1/memories/{newer.pk}/chain/").json()
    assert [m["id"] for m in chain["older"]] == [older.pk] and chain["newer"] == []
    detail = teacher.get(f"/api/v1/memories/{newer.pk}/").json()
    assert detail["supersedes"] == [older.pk] and detail["tier"] == "semantic"
    assert detail["evidence"] == [second.pk] and detail["source"] == "extraction"

    correction = teacher.post(
        "/api/v1/memories/",
        {"student": alice.pk, "title": "Fractions are solid again now", "content": "Checked in class."},
        format="json",
    ).json()
    url = f"/api/v1/memories/{newer.pk}/supersede/"
    assert clients["teacher_b"].post(url, {"by": correction["id"], "reason": "x"}, format="json").status_code == 404
    assert teacher.post(url, {"by": correction["id"]}, format="json").status_code == 400
    response = teacher.post(url, {"by": correction["id"], "reason": "Checked in class"}, format="json")
    assert response.status_code == 200 and response.json()["superseded_by"] == correction["id"]
    assert teacher.post(url, {"by": first.pk, "reason": "again"}, format="json").status_code == 409
    chain = teacher.get(f"/api/v1/memories/{older.pk}/chain/").json()
    assert [m["id"] for m in chain["newer"]] == [newer.pk, correction["id"]]
    search = teacher.get("/api/v1/memories/", {"student": alice.pk, "q": "fractions"}).json()["results"]
    assert {m["id"] for m in search}.isdisjoint({older.pk, newer.pk})
    assert AIMemory.objects.filter(pk__in=[older.pk, newer.pk]).count() == 2


# --- Garbage and unconfirmed facts ---------------------------------------------------------------


def _tier_block(student) -> list[int]:
    """The ids the chat prompt's "most confident" tier block would show now."""
    from memory.selectors import turn_memories

    chosen = turn_memories(student_id=student.pk, message="")
    return [pk for pk, signal in chosen.signals.items() if signal.get("tier")]


def test_an_item_repeating_the_prompts_placeholders_is_refused_and_never_prompted(clients, school, llm, caplog):
    """SmolLM2 answered the extraction prompt with its own placeholders (title "2 to 10 words",
    content "one or two sentences", confidence 0.7): that item is refused and logged, the real
    fact beside it is stored, and the next chat prompt never shows the placeholder text."""
    alice = school["alice"]
    llm.extraction_echo = True
    source = note(
        alice, "Reading support for long word problems", "Fact: Dyslexic reader of long texts | Prefers large print."
    )
    with caplog.at_level("INFO", logger="memory.extraction"):
        outcome, stored = extraction.facts_extract(memory_id=source.pk)
    assert outcome is extraction.Outcome.STORED
    assert [m.title for m in stored] == ["Dyslexic reader of long texts"]
    assert not AIMemory.objects.filter(title__icontains="10 words").exists()
    assert "repeats the prompt's instructions" in caplog.text
    cid = clients["alice"].post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
    sent = clients["alice"].post(
        f"/api/v1/conversations/{cid}/messages/", {"content": "Hello!", "client_message_id": "m1"}, format="json"
    )
    assert sent.status_code == 201, sent.content
    prompt = str(llm.calls("chat")[-1]["messages"])
    assert "one or two sentences" not in prompt and "10 words" not in prompt


def test_an_item_with_nothing_from_the_memory_it_cites_is_refused(school, llm):
    """An item that shares no content word with the memories it cites (invented, not drawn from
    them) is refused; one that does is kept."""
    alice = school["alice"]
    source = note(alice, "Fractions practice in class today", "She added fractions with unlike denominators.")
    invented = {
        "tier": "semantic",
        "title": "Loves astronomy and big telescopes",
        "content": "Wants to become an astronaut.",
        "confidence": 0.9,
        "evidence": [source.pk],
        "updates": None,
        "update_confidence": 0.0,
        "update_reason": "",
    }
    drawn = {**invented, "title": "Adds fractions with unlike denominators", "content": "Can add such fractions."}
    llm.script("extraction", {"content": json.dumps({"facts": [invented, drawn]})})
    outcome, stored = extraction.facts_extract(memory_id=source.pk)
    assert outcome is extraction.Outcome.STORED
    assert [m.title for m in stored] == ["Adds fractions with unlike denominators"]


def test_a_new_fact_waits_for_a_second_source_before_the_confident_block(school, llm):
    """A fact drawn from one memory is stored unconfirmed and kept out of the prompt's most
    confident block; the same fact drawn again from another memory confirms it (its evidence
    then cites both), and only then does it lead the block."""
    alice = school["alice"]
    first = note(
        alice, "Reading support for long word problems", "Fact: Reading needs of the student | Prefers large print."
    )
    extraction.facts_extract(memory_id=first.pk)
    (fact,) = _facts(alice)
    assert fact.confirmed_at is None and _tier_block(alice) == []
    second = note(
        alice, "Reading again in the spring term", "Fact: Reading needs of the student | Prefers large print."
    )
    outcome, stored = extraction.facts_extract(memory_id=second.pk)
    assert outcome is extraction.Outcome.STORED and stored == []
    fact.refresh_from_db()
    assert fact.confirmed_at is not None and fact.evidence == [first.pk, second.pk]
    assert _tier_block(alice) == [fact.pk] and len(_facts(alice)) == 1


def test_a_fact_citing_an_agreeing_known_memory_is_confirmed_at_once(school, llm):
    """An item that cites, besides the new memory, a known memory saying the same (content words
    in common with it too) has two sources: confirmed when stored."""
    alice = school["alice"]
    known = note(alice, "Large print helps her reading", "She reads better with large print.")
    new = note(alice, "Reading support for long word problems", "Large print again made reading easier.")
    item = {
        "tier": "semantic",
        "title": "Reads better with large print",
        "content": "Large print makes her reading easier.",
        "confidence": 0.8,
        "evidence": [new.pk, known.pk],
        "updates": None,
        "update_confidence": 0.0,
        "update_reason": "",
    }
    llm.script("extraction", {"content": json.dumps({"facts": [item]})})
    _, (fact,) = extraction.facts_extract(memory_id=new.pk)
    assert fact.confirmed_at is not None and fact.evidence == [known.pk, new.pk]
    assert _tier_block(alice) == [fact.pk]


def test_a_teachers_edit_confirms_a_fact(clients, school, llm):
    """A teacher saving an extracted fact (even with its text unchanged) confirms it."""
    alice = school["alice"]
    source = note(
        alice, "Reading support for long word problems", "Fact: Reading needs of the student | Prefers large print."
    )
    extraction.facts_extract(memory_id=source.pk)
    (fact,) = _facts(alice)
    assert _tier_block(alice) == []
    response = clients["teacher_a"].patch(f"/api/v1/memories/{fact.pk}/", {"title": fact.title}, format="json")
    assert response.status_code == 200, response.content
    fact.refresh_from_db()
    assert fact.confirmed_at is not None and _tier_block(alice) == [fact.pk]


def _embedded(*memories: AIMemory) -> None:
    memory_embeddings_write(memory_ids=[m.pk for m in memories])


def test_consolidation_merges_near_duplicates_once_and_skips_what_differs(school, openai_embedder, llm):
    """Three wordings of one note merge into one memory citing them, archived "merged into #id";
    two notes that name different numbers form a cluster the model will not merge (0.4): skipped
    and recorded. A second run asks nothing and changes nothing; a dry run writes nothing."""
    alice = school["alice"]
    same = [
        note(alice, "Likes football examples in maths", "She likes football examples in maths problems."),
        note(alice, "Likes football examples in maths", "She likes football examples in maths problems a lot."),
        note(alice, "Likes football examples in maths", "She really likes football examples in maths problems."),
    ]
    differ = [
        note(alice, "Times tables practice score today", "Scored 7 on the times tables practice."),
        note(alice, "Times tables practice score today", "Scored 9 on the times tables practice."),
    ]
    other = note(alice, "Geometry homework about triangles", "Finished the triangle angles worksheet.")
    _embedded(*same, *differ, other)
    assert {c.members for c in consolidation.clusters_find(student_id=alice.pk)} == {
        tuple(m.pk for m in same),
        tuple(m.pk for m in differ),
    }
    out = StringIO()
    call_command("consolidate", "--student", str(alice.pk), "--dry-run", stdout=out)
    assert out.getvalue().count("would ask the model") == 2
    assert not llm.calls("merge") and not ConsolidationDecision.objects.exists()

    report = consolidation.consolidate_student(student_id=alice.pk)
    assert report.count("merged into") == 1 and report.count("skipped") == 1
    merged = AIMemory.objects.get(student=alice, source="merge")
    assert merged.evidence == sorted(m.pk for m in same) and merged.kind == "note"
    for memory in same:
        memory.refresh_from_db()
        assert memory.status == "archived" and memory.archived_reason == f"merged into #{merged.pk}"
        assert memory.superseded_by_id == merged.pk
    assert AIMemory.objects.filter(pk__in=[m.pk for m in differ], status="active").count() == 2
    skipped = ConsolidationDecision.objects.get(outcome="skipped")
    assert "0.40" in skipped.reason and skipped.members == [m.pk for m in differ]

    calls, rows = len(llm.calls("merge")), AIMemory.objects.count()
    _embedded(merged)
    again = consolidation.consolidate_student(student_id=alice.pk)
    assert again.count("merged") == 0 and len(llm.calls("merge")) == calls and AIMemory.objects.count() == rows
    assert LLMUsage.objects.filter(purpose="consolidation", student=alice).count() == calls


def test_consolidate_command_refuses_an_unknown_student(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no student"):
        call_command("consolidate", "--student", "987654")
