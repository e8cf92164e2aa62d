"""The teacher page in Chromium (tests/web/teacher.mjs) against the production server and the
scripted model: a teacher follows one student (the evidence behind a fact and the conversation
it came from, their skills, quizzes and tasks, their card, the review queue, a question about
them answered with its citations) and their class (the skills table at a glance, a question
about the class), in English and French, and at 390 px wide. The database keeps what the page did."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import Resolver404, resolve
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.services import conversation_create
from core.errors import unknown_api_url
from insights.models import AskLog
from learning.models import ReviewCard
from learning.services import quiz_answers_submit, task_create
from memory.card import card_propose
from memory.models import AIMemory, CardChange, StudentCard, SupersessionReview
from memory.services.notes import teacher_note_create
from memory.services.records import memory_derived_store
from memory.services.writing import memory_create
from tests.conftest import ROOT
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE, answers_body, make_quiz
from tests.llm_server import ScriptedLLM
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "web" / "teacher.mjs"
FACT_TITLE = "Adds numerators and denominators separately"
SUMMARY_TITLE = "Adding fractions with unlike denominators"
LINES = ["I never know how to add 1/2 and 1/3.", "Write both in sixths: 3/6 and 2/6 make 5/6."]
CARD = {
    "goals": ["Brevet in June", "Fractions without help"],
    "interests": ["Football", "Drawing"],
    "level": "4e",
    # 20 values of at most 120 characters (the longest a value may be): far past the card's 300 tokens.
    "tooLong": [
        f"Interest {n}: football drills, match days, passing games, goalkeeping, set pieces and Saturday tactics"
        for n in range(20)
    ],
}


def _password(user: Any) -> None:
    user.set_password("web-" + user.username)
    user.save(update_fields=["password"])


def _answered(student: Any, given: list[str]) -> Any:
    quiz = make_quiz(student)
    quiz_answers_submit(
        user=student, quiz_id=quiz.pk, client_attempt_id=f"q{quiz.pk}", answers=answers_body(quiz, given)["answers"]
    )
    return quiz


def _alice(school: dict[str, Any]) -> dict[str, Any]:
    """Alice's conversation, a summary and the fact drawn from it, a pair to review, a fallback
    summary to check, a graded quiz, a task and a proposed accommodation."""
    alice, teacher = school["alice"], school["teacher_a"]
    conversation = conversation_create(user=alice, subject="Fractions")
    for seq, line in enumerate(LINES, start=1):
        role = Message.Role.STUDENT if seq % 2 else Message.Role.TUTOR
        Message.objects.create(
            conversation=conversation,
            seq=seq,
            role=role,
            content=line,
            client_message_id=f"c{seq}" if seq % 2 else None,
        )
    Conversation.objects.filter(pk=conversation.pk).update(message_count=len(LINES), status=Conversation.Status.ENDED)
    summary = memory_create(
        student=alice,
        kind=AIMemory.Kind.SUMMARY,
        source=AIMemory.Source.SUMMARY_TASK,
        source_conversation=conversation,
        title=SUMMARY_TITLE,
        content="Alice added 1/2 and 1/3 by writing both in sixths, after adding the denominators first.",
    )
    fact, _ = memory_derived_store(
        student_id=alice.pk,
        kind=AIMemory.Kind.FACT,
        source=AIMemory.Source.EXTRACTION,
        source_ref=f"fact:{summary.pk}",
        title=FACT_TITLE,
        content="Alice adds the denominators together unless reminded to find a common one.",
        evidence=[summary.pk],
        confidence=0.8,
        model="scripted",
    )
    older = teacher_note_create(
        teacher=teacher, student_id=alice.pk, title="Needs help with long division", content="x"
    )
    newer = teacher_note_create(teacher=teacher, student_id=alice.pk, title="Long division is fine now", content="y")
    pair = SupersessionReview.objects.create(
        student=alice, older=older, newer=newer, confidence=0.5, reason="Maybe an update"
    )
    geometry = conversation_create(user=alice, subject="Geometry")
    Message.objects.create(
        conversation=geometry, seq=1, role=Message.Role.STUDENT, content="What is an angle?", client_message_id="g1"
    )
    Conversation.objects.filter(pk=geometry.pk).update(message_count=1)
    fallback = memory_create(
        student=alice,
        kind=AIMemory.Kind.SUMMARY,
        source=AIMemory.Source.SUMMARY_TASK,
        source_conversation=geometry,
        title="Fallback summary of a short conversation",
        content="Alice asked about fractions.",
        needs_review=True,
        confidence=0.3,
    )
    quiz = _answered(alice, THREE_OF_FIVE)
    task = task_create(
        teacher=teacher,
        classroom_id=None,
        student_id=alice.pk,
        title="Exercise 4 p. 12",
        instructions="",
        subject="Maths",
        due_at=None,
    )
    change = card_propose(
        student_id=alice.pk,
        field="accommodations",
        op="add",
        value="Dyslexia",
        confidence=0.9,
        memory_id=fact.pk,
        reason="She said long texts are hard to read.",
    )
    assert change is not None and change.status == CardChange.Status.PENDING
    return {
        "student": {"id": alice.pk, "username": alice.username},
        "conversation": conversation.pk,
        "summary": summary.pk,
        "fact": fact.pk,
        "older": older.pk,
        "supersession": pair.pk,
        "needsReview": fallback.pk,
        "quiz": quiz.pk,
        "task": task.pk,
        "pendingChange": change.pk,
    }


def _run(browser: dict[str, str], artifacts_dir: Path, config: dict[str, Any]) -> dict[str, Any]:
    result = run_browser_script(browser, SCRIPT, config, artifacts_dir, f"teacher page ({config['part']}) at 390 px")
    assert result["pageErrors"] == []
    return result


def _config(
    server: str, browser: dict[str, str], artifacts_dir: Path, part: str, data: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "teacher": {"username": "teacher_a", "password": "web-teacher_a"},
        "part": part,
        "data": data,
        **extra,
    }


@pytest.mark.browser
def test_the_teacher_follows_a_student(browser, server, llm: ScriptedLLM, artifacts_dir, school) -> None:
    """Under a fact, its evidence (the summary) opens the conversation it came from; the
    transcript reads in order. The skills, the graded quiz (3 of 5, each answer right or wrong)
    and the task with its status are shown. The card is saved, and refused past its token limit
    with the server's message. The review queue accepts the proposed accommodation (now on the
    card), replaces the older memory of a pair and confirms a fallback summary. A question about
    the student streams, then shows the memory and the quiz it cites, marks the claim without
    evidence and never shows the forged ref. Labels are words in English and French (no raw
    key), and the page fits 390 px."""
    _password(school["teacher_a"])
    data = _alice(school)
    forged = data["fact"] + 10_000
    llm.script(
        "ask",
        {
            "content": (
                f"Alice adds the denominators together [m{data['fact']}]. "
                f"Her latest quiz on it was 3 of 5 [quiz {data['quiz']}]. "
                f"She will get it soon. She also hates maps [m{forged}]."
            ),
            "stream_seconds": 1.0,
        },
        {"content": "Alice is doing well this term."},
    )
    config = _config(
        server,
        browser,
        artifacts_dir,
        "student",
        data,
        card=CARD,
        expect={
            "question": "Why is Alice stuck on fractions?",
            "accommodation": "Dyslexia",
            "noteTitle": "Asked for more fraction exercises",
            "uncitedQuestion": "How is Alice doing?",
        },
    )
    seen = _run(browser, artifacts_dir, config)["seen"]

    # Counts in words, one message or many.
    meta = seen["conversationMeta"]
    assert meta["Fractions"].startswith("Ended · 2 messages") and "1 message" in meta["Geometry"]
    assert "1 messages" not in " ".join(meta.values())
    # The card's size in words a teacher reads, not tokens.
    assert seen["cardView"]["card_size"].endswith("% of the room the tutor keeps for the card")
    assert "token" not in seen["cardView"]["card_size"]
    # A two-word note title: the rule is on the form, the refusal next to the field, in words.
    assert "4 to 10 words" in seen["noteRule"]
    refused = seen["noteError"]
    assert refused["text"] == "Title must have 4 to 10 words (got 2)." and not refused["pageError"]
    assert refused["invalid"] == "true" and "note-title-error" in refused["describedBy"].split()
    assert refused["focused"] == "note-title" and 0 <= refused["gap"] < 40 and refused["inView"]
    assert seen["noteErrorAfter"] == 0
    assert AIMemory.objects.filter(student=school["alice"], title="Asked for more fraction exercises").exists()
    # The ask box says the answer is coming before its first words; an answer citing nothing says so first.
    assert seen["askOrder"] == ["thinking", "streaming", "answer"] and seen["askWarning"] == 0
    assert seen["uncited"]["warning"] == "Cette réponse ne cite aucune source : vérifiez-la avant de vous y fier."
    assert seen["uncited"]["first"] == "no-citation"

    assert SUMMARY_TITLE in seen["evidence"]["text"] and "Conversation summary" in seen["evidence"]["text"]
    assert seen["transcript"]["messages"] == LINES
    assert [who.split(" · ")[0] for who in seen["transcript"]["who"]] == ["alice", "Tutor"]
    assert sorted(c.split(", ")[0] for c in seen["conversations"]) == ["Fractions", "Geometry", "Maths"]
    [skill] = seen["skills"]
    assert skill[0] == SKILL and skill[1].endswith(("needs help", "learning", "nearly there"))
    assert seen["quizScore"] == "3 of 5 right"
    assert sorted(seen["quizResults"]) == sorted(["right", "right", "right", "wrong", "wrong"])
    assert seen["task"].startswith("Exercise 4 p. 12 · to do")

    card = StudentCard.objects.get(student=school["alice"])
    assert (card.goals, card.interests, card.level) == (CARD["goals"], CARD["interests"], CARD["level"])
    assert card.student_editable == ["interests"] and card.accommodations == ["Dyslexia"]
    assert seen["cardView"]["card_goals"] == "Brevet in June, Fractions without help"
    assert "Goals · added “Brevet in June” · applied" in seen["cardHistory"]
    assert "The student may edit · added “Interests” · applied" in seen["cardHistory"]
    assert "300" in seen["cardError"] and "tokens" in seen["cardError"]
    accepted = CardChange.objects.get(pk=data["pendingChange"])
    assert (accepted.status, accepted.decided_by) == (CardChange.Status.APPLIED, school["teacher_a"])
    assert CardChange.objects.filter(student=school["alice"], source="teacher", field="goals", op="add").count() == 2
    assert "Dyslexia" in seen["proposal"] and "Accommodations" in seen["proposal"]
    assert seen["reviewItems"] == 3 and seen["reviewAfter"] == "Nothing to review."
    assert SupersessionReview.objects.get(pk=data["supersession"]).status == SupersessionReview.Status.APPLIED
    assert AIMemory.objects.get(pk=data["older"]).status == AIMemory.Status.SUPERSEDED
    assert not AIMemory.objects.get(pk=data["needsReview"]).needs_review

    ask = seen["ask"]
    assert seen["streamed"]
    cited = {c["ref"]: c for c in ask["citations"]}
    assert set(cited) == {f"m{data['fact']}", f"quiz {data['quiz']}"}
    assert (cited[f"m{data['fact']}"]["label"], cited[f"m{data['fact']}"]["title"]) == ("Memory", FACT_TITLE)
    assert cited[f"quiz {data['quiz']}"]["label"] == "Quiz"
    assert ask["links"] == [f"m{data['fact']}", f"quiz {data['quiz']}"]
    assert [u for u in ask["unsupported"] if "She will get it soon." in u]
    assert f"m{forged}" not in ask["text"] and "[m" not in ask["text"]
    log = AskLog.objects.filter(student=school["alice"]).earliest("pk")  # the second question cites nothing
    assert (log.asker, log.dropped) == (school["teacher_a"], [f"m{forged}"])

    french = seen["french"]
    assert french["card"] == "Fiche de alice" and french["review"] == "À examiner"
    assert french["citationKinds"] == ["Mémoire", "Quiz"]
    assert french["unsupported"] == ["(aucune source citée)"] * 2
    assert french["quizScore"] == "3 bonnes réponses sur 5"
    assert french["skills"][:2] == ["Compétence", "Maîtrise"]
    assert french["evidence"] == "Tirée de (1) :"


def _classrooms_served() -> bool:
    try:
        return resolve("/api/v1/classrooms/").func is not unknown_api_url
    except Resolver404:
        return False


@pytest.mark.browser
def test_the_class_at_a_glance(browser, server, llm: ScriptedLLM, artifacts_dir, school) -> None:
    """The class's table: one row per student, one column per skill, each cell the mastery as a
    number and coloured by band (bob's, mastered, not the colour of alice's), the review due marked
    in words, a legend in words; a question about the class names its students, and a name
    opens that student. French and 390 px too. Needs the list of one's classrooms (GET /classrooms/)."""
    assert _classrooms_served(), "GET /api/v1/classrooms/ is not served: the page cannot list the teacher's classes"
    _password(school["teacher_a"])
    data = _alice(school)
    _answered(school["bob"], ALL_RIGHT)
    for _ in range(3):
        _answered(school["bob"], ALL_RIGHT)
    ReviewCard.objects.filter(student=school["bob"]).update(due=timezone.now() - timedelta(days=2))
    llm.script(
        "ask",
        {
            "content": f"alice still adds the denominators together [quiz {data['quiz']}]. bob has mastered it.",
            "stream_seconds": 0.5,
        },
    )
    config = _config(
        server,
        browser,
        artifacts_dir,
        "class",
        data,
        expect={"classQuestion": "Who still confuses adding fractions?", "openedStudent": "alice"},
    )
    seen = _run(browser, artifacts_dir, config)["seen"]

    assert seen["classCaption"] == "Mastery per student and skill, 5A"
    assert seen["classHeaders"][0] == "Student" and seen["classHeaders"][1].startswith(SKILL)
    rows = {row["student"]: row["cells"][0] for row in seen["classCells"]}
    assert set(rows) == {"alice", "bob"}
    alice, bob = rows["alice"], rows["bob"]
    assert "mastery-mastered" in bob["className"] and "review due" in bob["text"]
    assert "mastery-mastered" not in alice["className"] and "review due" not in alice["text"]
    assert alice["colour"] != bob["colour"]
    for cell in (alice, bob):
        assert cell["text"].split(" ")[0].isdigit() and "%" in cell["text"]
    assert seen["legend"][-1] == "review due a review of this skill is due"
    assert "95 % or more: mastered" in seen["legend"]
    assert "95 % ou plus : acquis" in seen["legendFr"]
    assert seen["classCaptionFr"] == "Maîtrise par élève et par compétence, 5A"
    assert seen["classAsk"]["named"][0].startswith("alice") and seen["classAsk"]["named"][1] == "bob"
    assert seen["classAsk"]["citations"] == [f"quiz {data['quiz']}"]
    assert AskLog.objects.filter(classroom=school["class_a"]).count() == 1
