"""The server's rules on request bodies are in the published schema, so that a client (and the
fuzzer) knows them: rules between fields, a memory title's 4 to 10 words, and refused text."""

from __future__ import annotations

import re

from memory.models import AIMemory
from tests.schema import published_schema


def component(name: str) -> dict:
    return published_schema()["components"]["schemas"][name]


def test_an_empty_patch_is_a_400_and_the_schema_says_so(clients, school) -> None:
    """PATCH /me/ and PATCH /memories/{id}/ with `{}` (or no body) answer 400; their schemas
    require a body, with the language, and with at least one field."""
    assert clients["alice"].patch("/api/v1/me/", {}, format="json").status_code == 400
    memory = AIMemory.objects.filter(student=school["alice"]).first() or AIMemory.objects.create(
        student=school["alice"],
        kind="note",
        source="save_memory_tool",
        title="Likes to draw fractions first",
        content="Pictures help.",
        created_at="2026-01-01T00:00:00Z",
    )
    assert clients["teacher_a"].patch(f"/api/v1/memories/{memory.pk}/", {}, format="json").status_code == 400
    assert component("PatchedMeInputRequest")["required"] == ["language"]
    for path in ("/api/v1/me/", "/api/v1/memories/{memory_id}/"):
        assert published_schema()["paths"][path]["patch"]["requestBody"]["required"] is True
    assert component("PatchedMemoryDetailInputRequest")["minProperties"] == 1


def test_a_task_names_a_classroom_or_a_student_and_the_schema_says_so(clients, school) -> None:
    """POST /tasks/ with both a classroom and a student (or neither) is a 400; the schema's oneOf
    admits exactly one."""
    body = {"title": "Exercises 4 to 6", "classroom": school["class_a"].pk, "student": school["alice"].pk}
    assert clients["teacher_a"].post("/api/v1/tasks/", body, format="json").status_code == 400
    rules = component("TaskListCreateInputRequest")["oneOf"]
    assert [rule["required"] for rule in rules] == [["classroom"], ["student"]]


def test_a_memory_title_pattern_is_the_services_rule() -> None:
    """The title's pattern accepts 4 to 10 words, whatever the spaces around them, and nothing else."""
    title = component("MemoryListCreateInputRequest")["properties"]["title"]
    pattern = re.compile(title["pattern"].replace("\\u0000", "\\x00"))
    for words in range(0, 13):
        text = "  " + " \t ".join(["word"] * words) + " "
        assert bool(pattern.match(text)) == (4 <= words <= 10), words
    assert not pattern.match("one two three fo\x00ur")


def test_refused_text_is_in_the_schema(clients, school) -> None:
    """A text field refusing blank text has a pattern refusing NUL and lone surrogates, and
    needing a character other than white space; the server refuses the same (400)."""
    title = component("TaskListCreateInputRequest")["properties"]["title"]
    pattern = re.compile(title["pattern"].replace("\\u0000", "\\x00"))
    assert pattern.match("Read chapter 3") and not pattern.match("Read\x00") and not pattern.match("   ")
    for bad in ("Read\x00 chapter 3", "   "):
        body = {"title": bad, "classroom": school["class_a"].pk}
        assert clients["teacher_a"].post("/api/v1/tasks/", body, format="json").status_code == 400
