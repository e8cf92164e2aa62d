"""The fallback memory, written for those who read it: the student sees a neutral note in their
language whose title keeps the conversation's subject; why it waits for a teacher is shown to
teachers only (`review_reason`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from conversations.models import Conversation
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from memory.models import AIMemory
from tests.conftest import client_for
from tests.conversations.test_turn import send

ENDED = datetime(2026, 12, 5, 15, 0, tzinfo=ZoneInfo("UTC"))


@pytest.fixture
def fallback(clients: dict[str, Any], llm: Any) -> AIMemory:
    """A conversation on "Fractions with a real model" whose summary the model cannot write."""
    resp = clients["alice"].post("/api/v1/conversations/", {"subject": "Fractions with a real model"}, format="json")
    cid = resp.json()["id"]
    assert send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1").status_code == 201
    conversation_close(conversation_id=cid)
    Conversation.objects.filter(pk=cid).update(ended_at=ENDED)
    llm.script("summary", {"content": "not json"}, {"content": "still not json"})
    assert conversation_summary_write(conversation_id=cid) is Outcome.FALLBACK
    return AIMemory.objects.get(source_conversation_id=cid)


def test_the_fallback_keeps_the_subjects_words_and_says_nothing_of_a_failure(fallback):
    """Its title is the subject, whole, then the date; its content says what the conversation
    was about and the student's question, and nothing addressed to a teacher."""
    assert fallback.title == "Fractions with a real model, 5 December 2026"
    assert fallback.content.startswith("A tutoring conversation about Fractions with a real model on 5 December 2026")
    assert "\u201cHow do I add 1/2 and 1/3\u201d" in fallback.content
    for word in ("teacher", "review", "automatic", "could not"):
        assert word not in fallback.content.lower()
    assert fallback.needs_review is True


def test_the_review_reason_is_shown_to_teachers_only(fallback, school):
    """The student's memories show no review reason; the teacher's show why to review it."""
    mine = client_for(school["alice"]).get("/api/v1/memories/").json()["results"]
    assert [m["review_reason"] for m in mine if m["id"] == fallback.pk] == [""]
    assert client_for(school["alice"]).get(f"/api/v1/memories/{fallback.pk}/").json()["review_reason"] == ""
    teacher = client_for(school["teacher_a"])
    theirs = teacher.get("/api/v1/memories/", {"student": school["alice"].pk}).json()["results"]
    reason = next(m["review_reason"] for m in theirs if m["id"] == fallback.pk)
    assert "No automatic summary could be written" in reason
    assert teacher.get(f"/api/v1/memories/{fallback.pk}/").json()["review_reason"] == reason
    settled = teacher.patch(f"/api/v1/memories/{fallback.pk}/", {"title": fallback.title}, format="json").json()
    assert settled["needs_review"] is False and settled["review_reason"] == ""


def test_a_french_students_fallback_is_in_french(clients, llm, school):
    """Written in the student's language, the date included."""
    school["alice"].language = "fr"
    school["alice"].save()
    resp = clients["alice"].post("/api/v1/conversations/", {"subject": "Les fractions"}, format="json")
    cid = resp.json()["id"]
    assert send(clients["alice"], cid, "Comment additionner 1/2 et 1/3 ?", "m1").status_code == 201
    conversation_close(conversation_id=cid)
    Conversation.objects.filter(pk=cid).update(ended_at=ENDED)
    llm.script("summary", {"content": "not json"}, {"content": "still not json"})
    assert conversation_summary_write(conversation_id=cid) is Outcome.FALLBACK
    memory = AIMemory.objects.get(source_conversation_id=cid)
    assert memory.title == "Les fractions, 5 décembre 2026"
    assert memory.content.startswith("Une conversation de tutorat sur Les fractions le 5 décembre 2026")
