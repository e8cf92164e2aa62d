"""The student's page in Chromium, driven by tests/web/student_page.mjs (playwright-core), against
the production server, a Celery worker and the scripted model: conversations, quizzes, retries,
tasks, files, the crisis resources and "what do you know about me?", in English and French,
and at a phone's width."""

from __future__ import annotations

import json
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import resolve
from django.utils import timezone

from conversations.models import Conversation, Message
from core.errors import unknown_api_url
from learning.models import Quiz, Task, TaskStatus
from learning.services import quiz_create_from_tool, task_create
from memory.models import StudentCard
from safety.resources import resources_for
from tests.conftest import ROOT
from tests.conversations.test_save_memory_tool import tool_step
from tests.learning.conftest import quiz_args
from tests.llm_server import ScriptedLLM
from tests.web.conftest import artefacts

SCRIPT = ROOT / "tests" / "web" / "student_page.mjs"

QUIZ_REPLY = "Here is a short quiz on fractions: take your time."
CHECK_REPLY = "Yes: 2/4 and 1/2 are the same fraction, both are a half."
OBTUSE_REPLY = "An obtuse angle is more than 90 degrees and less than 180."
CRISIS_REPLY = "I am really glad you told me. You matter."
PERCENT_REPLY = "10% of 50 is 5: a tenth of 50. " * 6
CRISIS_REPLY_FR = "Je suis content que tu me l'aies dit. Tu comptes."
# The answers typed, in the quiz's order (tests/learning/conftest.py QUIZ_ARGS): right (a choice),
# right (a decimal comma), right (a folded short text), wrong, and a short text that only the
# model can grade (pending, then "correct", the scripted grader's default verdict).
ANSWERS = ["3/4", "0,83", "Denominator", "1/3", "They need the same bottom number"]
ANGLES_QUIZ = {
    "topic": "Angles",
    "skill": "naming angles",
    "questions": [
        {
            "kind": "multiple_choice",
            "prompt": "An angle of 120 degrees is…",
            "choices": ["acute", "right", "obtuse"],
            "answer": "obtuse",
            "explanation": "More than 90 and less than 180 degrees: obtuse.",
        }
    ],
}


def _conversation(student: Any, subject: str, days_ago: int) -> Conversation:
    conversation = Conversation.objects.create(student=student, subject=subject, last_activity_at=timezone.now())
    Conversation.objects.filter(pk=conversation.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    conversation.refresh_from_db()
    return conversation


def _message(conversation: Conversation, seq: int, role: str, content: str, **fields: Any) -> Message:
    return Message.objects.create(conversation=conversation, seq=seq, role=role, content=content, **fields)


@pytest.mark.browser
@pytest.mark.worker
def test_a_student_uses_every_part_of_the_page(
    browser: dict[str, str], server: str, worker: Any, llm: ScriptedLLM, school: dict[str, Any], artifacts_dir: Path
) -> None:
    """In Chromium, alice signs in on her latest open conversation and:
    - asks for a quiz: the tutor's create_quiz shows a form in the conversation; she answers it
      and sees her score, each answer right or wrong with the explanations, "being graded" for
      the short text the model grades, then the graded result;
    - sends a message that fails three ways (no network, no model set, the model down): it
      stays with a retry mark and a student's text (never the operator's), and "Send again"
      sends it with the same client_message_id until the reply comes, stored once;
    - opens an older conversation, sends again its message left unanswered, and ends it;
    - changes a task's status (the line saying so covers nothing), edits the part of her card
      her teacher opened to her, shares a file and sees it read, sees the crisis resources for a
      message in crisis (once: in the notice, not again in the reply), and asks what the tutor
      knows about her (when the endpoint exists);
    - starts a new conversation, which ends the open one; while its first reply streams, the
      list already counts 2 messages;
    - never sees a raw key; reads the page in French, where a crisis written in English is
      answered in French; and at 390 px wide it fits, a task's status line covering nothing."""
    alice, teacher = school["alice"], school["teacher_a"]
    alice.set_password("web-alice")
    alice.save(update_fields=["password"])
    geometry = _conversation(alice, "Geometry", days_ago=3)
    asked = _message(geometry, 1, "student", "What is a right angle?", client_message_id="old-1")
    _message(geometry, 2, "tutor", "A right angle is exactly 90 degrees.", reply_to=asked)
    _message(geometry, 3, "student", "And an obtuse one?", client_message_id="old-2")
    Conversation.objects.filter(pk=geometry.pk).update(message_count=3)  # what the turn's lock counts from
    angles = quiz_create_from_tool(student_id=alice.pk, conversation_id=geometry.pk, arguments=ANGLES_QUIZ)
    fractions = _conversation(alice, "Fractions", days_ago=1)
    task = task_create(
        teacher=teacher,
        classroom_id=None,
        student_id=alice.pk,
        title="Read chapter 3",
        subject="Maths",
        instructions="Pages 40 to 45.",
        due_at=timezone.now() + timedelta(days=2),
    )
    StudentCard.objects.create(student=alice, interests=["Football"], student_editable=["interests"])
    llm.script(
        "chat",
        tool_step(("create_quiz", json.dumps(quiz_args()))),
        {"content": QUIZ_REPLY},
        {"status": 503},
        {"content": CHECK_REPLY},
        {"content": OBTUSE_REPLY},
        {"content": CRISIS_REPLY},
        {"content": CRISIS_REPLY_FR},
        {"content": PERCENT_REPLY, "stream_seconds": 4.0},
    )
    ask_url = f"/api/v1/students/{alice.pk}/ask/"
    config: dict[str, Any] = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "student": {"username": "alice", "password": "web-alice"},
        "answers": ANSWERS,
        "replies": {
            "quiz": QUIZ_REPLY,
            "check": CHECK_REPLY,
            "obtuse": OBTUSE_REPLY,
            "crisis": CRISIS_REPLY,
            "percent": PERCENT_REPLY.strip(),
            "crisisFr": CRISIS_REPLY_FR,
        },
        "resources": resources_for(student_id=alice.pk, language="en"),
        "resourcesFr": resources_for(student_id=alice.pk, language="fr"),
        "askAvailable": resolve(ask_url).func is not unknown_api_url,
    }

    run = subprocess.run(
        [browser["node"], str(SCRIPT), json.dumps(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    (artifacts_dir / "browser.log").write_text(run.stdout + run.stderr)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT ")) if lines else {}
    artefacts.append(
        f"student page: {len(result.get('screenshots', []))} screenshots (one at 390x844) and logs in {artifacts_dir}"
        + ("" if config["askAvailable"] else f"; {ask_url} is not served yet: the ask step was skipped")
    )
    assert run.returncode == 0 and result.get("ok"), (
        f"{result.get('error') or run.stderr[-3000:]}\n(screenshots and logs in {artifacts_dir})"
    )

    # The quiz made in the turn was answered once, and graded by the model's verdict.
    made = Quiz.objects.get(student=alice, conversation=fractions)
    assert made.status == Quiz.Status.GRADED and made.attempt.answers.count() == len(ANSWERS)
    assert made.attempt.correct == 4
    assert Quiz.objects.get(pk=angles.pk).status == Quiz.Status.OPEN
    # Each retried message is stored once, under the one client_message_id the page sent.
    sent = result["seen"]["retry_ids"]
    assert len(sent) == 4 and len(set(sent)) == 1, sent
    checked = Message.objects.get(conversation=fractions, role="student", content__startswith="Is 2/4")
    assert checked.client_message_id == sent[0] and checked.reply.content == CHECK_REPLY
    obtuse = Message.objects.get(conversation=geometry, seq=3)
    assert obtuse.reply.content == OBTUSE_REPLY
    assert Message.objects.filter(conversation=geometry, role="student").count() == 2
    geometry.refresh_from_db()
    assert geometry.status == Conversation.Status.ENDED
    # Starting "Percentages" ended Fractions: one conversation is open.
    assert Conversation.objects.get(pk=fractions.pk).status == Conversation.Status.ENDED
    [percentages] = Conversation.objects.filter(student=alice, status=Conversation.Status.ACTIVE)
    assert percentages.subject == "Percentages" and percentages.message_count == 2
    seen = result["seen"]
    # The list counted the student's message and the reply while it streamed.
    assert seen["count_streaming"].endswith("2 messages") and seen["count_after"].endswith("2 messages")
    assert seen["list_after_start"]["Fractions"].startswith("Terminée")
    # The lines that say what an action did sit in the page's flow, covering nothing.
    for where in ("task_status", "phone_task_status"):
        assert seen[where]["text"] and seen[where]["position"] == "static" and not seen[where]["covered"], seen[where]
    # The help lines are shown once, in the notice, not again in the reply; in French on a French page.
    assert seen["crisis"]["reply"] == CRISIS_REPLY and seen["crisis"]["in_notice"]
    assert seen["crisis_fr"]["message"].startswith("Merci de me l'avoir dit")
    assert seen["crisis_fr"]["resources"] == [r["name"] for r in resources_for(student_id=alice.pk, language="fr")]
    assert seen["crisis_fr"]["reply"] == CRISIS_REPLY_FR
    last_reply = Message.objects.filter(conversation=fractions, role="tutor").last()
    assert last_reply is not None and last_reply.content.startswith(CRISIS_REPLY_FR)
    # The card's interests, edited by the student (their teacher let them).
    assert StudentCard.objects.get(student=alice).interests == ["Football", "Chess"]
    assert seen["card_editable"] == "You may change: interests."
    assert TaskStatus.objects.get(task=task, student=alice).status == TaskStatus.Status.DONE
    assert fractions.files.get().status == "ready"
    assert Task.objects.count() == 1
