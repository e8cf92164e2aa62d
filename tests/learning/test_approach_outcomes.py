"""The procedural tier's outcomes: a quiz graded after a conversation whose prompt showed an
approach counts as a success or a failure of that approach, once per quiz; an approach the
tutor was not shown is left alone. The tutor then sees the counts."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memory.models import AIMemory
from memory.services.records import memory_derived_store
from tests.learning.conftest import ALL_RIGHT, answers_body, make_quiz

# Wrong or skipped, all decided without the model: 0 of 5.
WRONG = ["2/6", "0.1", "", "1/3", ""]


def _approach(student: Any, title: str, content: str, ref: str) -> AIMemory:
    memory, _ = memory_derived_store(
        student_id=student.pk,
        kind=AIMemory.Kind.APPROACH,
        source=AIMemory.Source.EXTRACTION,
        source_ref=ref,
        title=title,
        content=content,
        evidence=[],
        confidence=0.8,
        model="scripted-summary",
    )
    return memory


def _turn(client: Any, text: str, key: str) -> None:
    cid = client.post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
    response = client.post(
        f"/api/v1/conversations/{cid}/messages/", {"content": text, "client_message_id": key}, format="json"
    )
    assert response.status_code == 201, response.content


def test_a_quiz_after_a_session_counts_for_the_approaches_it_showed(clients, school, llm, settings):
    """Success for the approach shown before a passed quiz, failure before a failed one, nothing
    for a quiz with no session since the previous one, nothing for an approach not shown."""
    settings.MEMORY_TIER_COUNT = 1  # only the most confident approach is in the prompt
    alice = school["alice"]
    shown = _approach(alice, "Visual fraction bars before symbols", "Fraction bars first, then the symbols.", "t:1")
    hidden = _approach(alice, "Rhymes to remember times tables", "Rhymes helped with the sevens.", "t:2")
    AIMemory.objects.filter(pk=hidden.pk).update(confidence=0.6)

    _turn(clients["alice"], "Can we practise fractions?", "k1")
    shown.refresh_from_db()
    assert shown.recall_count == 1 and shown.last_recalled_at is not None
    quiz = make_quiz(alice)
    response = clients["alice"].post(
        f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, ALL_RIGHT), format="json"
    )
    assert response.status_code in (200, 201), response.content
    shown.refresh_from_db()
    hidden.refresh_from_db()
    assert (shown.successes, shown.failures) == (1, 0)
    assert (hidden.successes, hidden.failures) == (0, 0)

    # A second quiz with no session in between counts for nothing; after one, a failure counts.
    second = make_quiz(alice)
    clients["alice"].post(f"/api/v1/quizzes/{second.pk}/answers/", answers_body(second, WRONG), format="json")
    shown.refresh_from_db()
    assert (shown.successes, shown.failures) == (1, 0)
    _turn(clients["alice"], "More fractions please.", "k2")
    third = make_quiz(alice)
    clients["alice"].post(f"/api/v1/quizzes/{third.pk}/answers/", answers_body(third, WRONG), format="json")
    shown.refresh_from_db()
    assert (shown.successes, shown.failures) == (1, 1)

    _turn(clients["alice"], "And decimals?", "k3")
    prompt = str(llm.calls("chat")[-1]["messages"])
    assert "what worked with this student, confidence 0.8, worked 1, failed 1" in prompt
    assert shown.last_recalled_at <= timezone.now()
