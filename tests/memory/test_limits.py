"""Every stored text is bounded in characters as well as words, on every way in: the API (a 400
in the envelope, and `maxLength` in the schema), the tutor's tools (an error the model reads),
the model's own output (refused or cut, never stored unbounded) and the app's records. NUL bytes
and lone surrogates, which PostgreSQL or UTF-8 cannot store, are refused on every path as the
API's text fields refuse them. (MCP: tests/memory/test_mcp.py.)"""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from conversations.models import Conversation
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from learning.models import Quiz, Task, TaskStatus
from memory.lifecycle_prompts import parse_extraction
from memory.models import AIMemory
from memory.prompts import fallback_summary, parse_summary
from memory.services.records import memory_record_save
from memory.validation import CONTENT_MAX_CHARS, REASON_MAX_CHARS, TITLE_MAX_CHARS
from tests.conversations.test_save_memory_tool import last_tool_output, tool_step
from tests.conversations.test_turn import send, start
from tests.learning.conftest import QUIZ_ARGS, quiz_args
from tests.memory.recall_helpers import note

TITLE = "Adds fractions with unlike denominators"
# The case: a valid 200-word note whose one word weighs 2.4 MB.
HUGE_WORD = "x" * 2_400_000
OVER = "y" * (CONTENT_MAX_CHARS + 1)


def _details(response) -> dict:
    assert response.status_code == 400, response.content[:500]
    error = response.json()["error"]
    assert error["code"] == "invalid"
    return error["details"]


# --- The API ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", HUGE_WORD),
        ("content", OVER),
        ("content", "Has a NUL \x00 byte in it."),
        ("title", "Adds fractions " + "z" * TITLE_MAX_CHARS),
    ],
)
def test_a_teacher_note_over_a_limit_is_a_400_and_nothing_is_stored(clients, school, field, value):
    """POST /memories/: a content over CONTENT_MAX_CHARS (one 2.4 MB word included), a title over
    TITLE_MAX_CHARS, or a NUL byte: 400 `invalid` naming the field; no memory is stored."""
    body = {"student": school["alice"].pk, "title": TITLE, "content": "Uses drawings first.", field: value}
    details = _details(clients["teacher_a"].post("/api/v1/memories/", body, format="json"))
    assert field in details
    assert not AIMemory.objects.exists()


def test_a_teacher_note_at_the_limit_is_stored_whole(clients, school):
    content = "w" * (CONTENT_MAX_CHARS - 10) + " the end."
    body = {"student": school["alice"].pk, "title": TITLE, "content": content}
    response = clients["teacher_a"].post("/api/v1/memories/", body, format="json")
    assert response.status_code == 201, response.content[:500]
    assert AIMemory.objects.get().content == content


def test_a_correction_over_the_limit_is_a_400_and_changes_nothing(clients, school):
    memory = note(school["alice"], TITLE, "Uses drawings first.")
    response = clients["teacher_a"].patch(f"/api/v1/memories/{memory.pk}/", {"content": OVER}, format="json")
    assert "content" in _details(response)
    memory.refresh_from_db()
    assert memory.content == "Uses drawings first."


def test_the_schema_gives_the_limits_in_characters(client, db):
    """The published schema says maxLength for every text a client writes, from the same constants."""
    schemas = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    expected = {
        ("MemoryListCreateInputRequest", "title"): TITLE_MAX_CHARS,
        ("MemoryListCreateInputRequest", "content"): CONTENT_MAX_CHARS,
        ("PatchedMemoryDetailInputRequest", "title"): TITLE_MAX_CHARS,
        ("PatchedMemoryDetailInputRequest", "content"): CONTENT_MAX_CHARS,
        ("MemoryArchiveInputRequest", "reason"): REASON_MAX_CHARS,
        ("MemorySupersedeInputRequest", "reason"): REASON_MAX_CHARS,
    }
    for (name, field), limit in expected.items():
        assert schemas[name]["properties"][field].get("maxLength") == limit, (name, field)
    for field in ("title", "instructions", "subject"):
        assert isinstance(schemas["TaskListCreateInputRequest"]["properties"][field].get("maxLength"), int), field


def test_a_task_with_a_nul_byte_or_over_long_text_is_refused_by_the_service(school):
    """task_create itself bounds what it stores (not only the API's serializer)."""
    from learning.services import task_create
    from learning.validation import TASK_INSTRUCTIONS_MAX_CHARS

    for changes in ({"instructions": "i" * (TASK_INSTRUCTIONS_MAX_CHARS + 1)}, {"title": "Read\x00 chapter 3"}):
        kwargs = {"title": "Read chapter 3", "instructions": "", **changes}
        with pytest.raises(ValidationError):
            task_create(teacher=school["teacher_a"], classroom_id=school["class_a"].pk, student_id=None, **kwargs)
    assert not Task.objects.exists()


# --- The tutor's tools --------------------------------------------------------------------------


def test_tool_calls_over_a_limit_or_with_a_nul_get_an_error_and_store_nothing(clients, llm, settings):
    """save_memory with a 2.4 MB word or a NUL byte, create_quiz with a NUL byte in a question or
    a choice, update_task with a NUL in its reason: each comes back to the model as an error
    naming the field, the turn completes, and nothing is stored."""
    # The scripted server reads and parses the 2.4 MB arguments again in the next request: on a
    # busy machine that passes the suite's 5 s read timeout, which this test is not about.
    settings.LLM_TIMEOUT_SECONDS = 60.0
    bad_question = {**QUIZ_ARGS["questions"][0], "prompt": "1/2 + 1/4 = ?\x00"}
    bad_choice = {**QUIZ_ARGS["questions"][0], "choices": ["3/4", "2/6\x00", "1/6"]}
    llm.script(
        "chat",
        tool_step(
            ("save_memory", json.dumps({"title": TITLE, "content": HUGE_WORD})),
            ("save_memory", json.dumps({"title": TITLE, "content": OVER})),
            ("save_memory", json.dumps({"title": TITLE + "\u0000", "content": "Uses drawings."})),
            ("create_quiz", json.dumps(quiz_args(questions=[bad_question]))),
            ("create_quiz", json.dumps(quiz_args(questions=[bad_choice]))),
            ("create_quiz", json.dumps(quiz_args(topic="Fractions\x00"))),
        ),
        {"content": "Let's continue."},
    )
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid)
    assert resp.status_code == 201, resp.content[:500]
    outputs = [m["content"] for m in last_tool_output(llm)]
    assert len(outputs) == 6 and all(o.startswith("Error") for o in outputs), outputs
    assert f"{CONTENT_MAX_CHARS} characters" in outputs[0] and f"{CONTENT_MAX_CHARS} characters" in outputs[1]
    assert all("Null characters" in o for o in outputs[2:]), outputs[2:]
    assert not AIMemory.objects.exists() and not Quiz.objects.exists()


def test_update_task_with_a_nul_in_its_reason_is_refused(school):
    from learning.services import task_create
    from learning.tools import UpdateTask
    from llm.tools import ToolContext, tool_call_run

    task = task_create(teacher=school["teacher_a"], classroom_id=None, student_id=school["alice"].pk, title="Read")
    conversation = Conversation.objects.create(student=school["alice"], last_activity_at=timezone.now())
    run = tool_call_run(
        tools=[UpdateTask()],
        context=ToolContext(student_id=school["alice"].pk, conversation_id=conversation.pk),
        name="update_task",
        arguments=json.dumps({"task": task.pk, "status": "done", "reason": "Finished\x00"}),
    )
    assert run.text.startswith("Error") and "Null characters" in run.text
    assert not TaskStatus.objects.exists()


# --- The model's output and the app's records ---------------------------------------------------


def test_a_summary_over_the_character_limit_is_refused_by_the_parser():
    """A summary the model wrote past CONTENT_MAX_CHARS is refused (repaired or replaced by the
    fallback), as one past 200 words is."""
    answer = json.dumps({"title": TITLE, "content": f"Worked on {OVER}. Then added fractions."})
    with pytest.raises(ValueError, match=f"{CONTENT_MAX_CHARS} characters"):
        parse_summary(answer)


def test_an_extracted_fact_over_the_limit_or_with_a_nul_is_dropped():
    answer = json.dumps(
        {
            "facts": [
                {"tier": "semantic", "title": TITLE, "content": f"Writes {OVER}.", "evidence": [7], "confidence": 0.9},
                {"tier": "semantic", "title": TITLE, "content": "Has a \x00 here.", "evidence": [7], "confidence": 0.9},
                {"tier": "semantic", "title": TITLE, "content": "Draws fractions.", "evidence": [7], "confidence": 0.9},
            ]
        }
    )
    facts, dropped = parse_extraction(answer, new_id=7, known_ids=set())
    assert [f.content for f in facts] == ["Draws fractions."]
    assert f"{CONTENT_MAX_CHARS} characters" in dropped[0] and "Null characters" in dropped[1], dropped


def test_the_fallback_summary_of_huge_questions_is_within_the_limits():
    """A conversation whose questions are one enormous word each still gets a valid fallback."""
    from memory.validation import validate_content, validate_title

    title, content = fallback_summary(
        subject="Fractions " + "s" * 5000, date="2026-01-05", questions=[HUGE_WORD, "q" * 50_000, OVER], messages=6
    )
    assert validate_title(title) == title
    assert validate_content(content, is_summary=True) == content
    assert len(content) <= CONTENT_MAX_CHARS


def test_the_fallback_summary_is_stored_for_a_conversation_of_huge_messages(clients, llm):
    """The summary task stores the fallback when the model fails, however long the student's words."""
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "x" * 19_000, "m1").status_code == 201
    assert send(clients["alice"], cid, "Then " + "z" * 19_000, "m2").status_code == 201
    conversation_close(conversation_id=cid)
    llm.script("summary", {"content": "not json"}, {"content": "still not json"})
    assert conversation_summary_write(conversation_id=cid) is Outcome.FALLBACK
    summary = AIMemory.objects.get(kind="summary")
    assert len(summary.content) <= CONTENT_MAX_CHARS and len(summary.title) <= TITLE_MAX_CHARS


def test_a_record_memory_of_one_huge_word_is_cut_to_the_limits(school):
    """A file's or a quiz's memory is the app's rendering of a record: cut to CONTENT_MAX_CHARS
    (and TITLE_MAX_CHARS), with a mark, never stored whole; NUL bytes and lone surrogates dropped."""
    memory, created = memory_record_save(
        student_id=school["alice"].pk,
        kind=AIMemory.Kind.FILE,
        source_ref="file:1",
        title="Uploaded file " + "n" * 1000,
        content=f"The student uploaded notes.txt. It begins: {HUGE_WORD}\x00\ud800",
    )
    assert created
    memory.refresh_from_db()
    assert len(memory.content) <= CONTENT_MAX_CHARS and memory.content.endswith("[...]")
    assert memory.content.startswith("The student uploaded notes.txt. It begins: xxx")
    assert "\x00" not in memory.content and "\ud800" not in memory.content
    assert len(memory.title) <= TITLE_MAX_CHARS


# --- The admin ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["r" * (REASON_MAX_CHARS + 1), "Wrong \x00 pupil"])
def test_the_admins_archive_action_refuses_a_reason_over_the_limit(school, reason):
    """The admin's archive action refuses a reason over REASON_MAX_CHARS, or with a NUL byte (its
    action form first, the service behind it): nothing is archived, no reason is cut."""
    from django.test import Client

    from accounts.models import User

    memory = note(school["alice"], TITLE, "Uses drawings first.")
    root = User.objects.create_superuser("root", "root@example.com", "root-password-1")
    client = Client()
    client.force_login(root)
    resp = client.post(
        "/admin/memory/aimemory/",
        {"action": "archive_selected", "_selected_action": [memory.pk], "reason": reason},
        follow=True,
    )
    assert resp.status_code == 200
    memory.refresh_from_db()
    assert (memory.status, memory.archived_reason) == ("active", "")
