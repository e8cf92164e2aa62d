"""The server's rules on request bodies are in the published schema, so that a client (and the
fuzzer) knows them: rules between fields, a memory title's 4 to 10 words, and refused text."""

from __future__ import annotations

import re

import jsonschema_rs
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.timezone import now
from rest_framework import serializers

from conversations.models import Conversation
from core.api import StrictCharField
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


def test_a_text_of_one_character_is_refused_by_the_schema_exactly_when_the_server_refuses_it() -> None:
    """Every one-character text (U+0001 to U+FFFF, surrogates aside) is refused by the schema's
    pattern, as a JSON Schema validator reads it, exactly when the server refuses it as blank
    once trimmed: U+001F alone included, which JSON Schema's `\\s` does not take for white space."""
    pattern = component("TaskListCreateInputRequest")["properties"]["title"]["pattern"]
    schema = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    field = StrictCharField(max_length=200)
    differ = []
    for code in range(1, 0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        text = chr(code)
        try:
            field.run_validation(text)
            accepted = True
        except serializers.ValidationError:
            accepted = False
        if schema.is_valid(text) != accepted:
            differ.append(f"U+{code:04X}")
    assert differ == []


def test_a_title_counts_its_words_in_the_schema_as_the_server_does() -> None:
    """The title's word-count pattern splits words on what Python's str.split() does, U+001C to
    U+001F and U+0085 included: 4 words joined by any of them match, 3 do not."""
    pattern = component("MemoryListCreateInputRequest")["properties"]["title"]["pattern"]
    schema = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    for code in [code for code in range(0x3001) if chr(code).isspace()]:
        four, three = chr(code).join(["word"] * 4), chr(code).join(["word"] * 3)
        assert len(four.split()) == 4 and schema.is_valid(four), f"U+{code:04X}"
        assert not schema.is_valid(three), f"U+{code:04X}"


def test_a_summarys_sentences_rule_is_in_the_schema(clients, school) -> None:
    """PATCH /memories/{id}/ of a summary with one sentence is a 400; the content's description
    (and the operation's) states the 2-to-4-sentence rule, which no JSON Schema can (it depends
    on the memory's kind)."""
    conversation = Conversation.objects.create(student=school["alice"], subject="Fractions", last_activity_at=now())
    summary = AIMemory.objects.create(
        student=school["alice"],
        source_conversation=conversation,
        kind=AIMemory.Kind.SUMMARY,
        source=AIMemory.Source.SUMMARY_TASK,
        title="Fractions practice with pictures first",
        content="Alice added fractions. She drew them first.",
        created_at="2026-01-01T00:00:00Z",
    )
    resp = clients["teacher_a"].patch(
        f"/api/v1/memories/{summary.pk}/", {"content": "Only one sentence."}, format="json"
    )
    assert resp.status_code == 400, resp.content
    assert "2 to 4 sentences" in component("PatchedMemoryDetailInputRequest")["properties"]["content"]["description"]
    operation = published_schema()["paths"]["/api/v1/memories/{memory_id}/"]["patch"]
    assert "2 to 4 sentences" in operation["description"]


def test_an_upload_of_one_byte_that_is_no_allowed_type_is_refused_and_the_schema_says_so(clients, school) -> None:
    """A one-byte file that is not text is a 400 `file_type_not_allowed`, an empty one a 400
    `file_empty`: the file field's schema has minLength 1 and its description says the type is
    found from the content, whatever the size."""
    cid = clients["alice"].post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
    for data, code in ((b"\x01", "file_type_not_allowed"), (b"", "file_empty")):
        body = {"file": SimpleUploadedFile("note", data, content_type="application/octet-stream")}
        resp = clients["alice"].post(f"/api/v1/conversations/{cid}/files/", body, format="multipart")
        assert resp.status_code == 400 and resp.json()["error"]["code"] == code, resp.content
    field = component("ConversationFilesInputRequest")["properties"]["file"]
    assert field["minLength"] == 1
    assert "whatever its size" in field["description"] and "file_type_not_allowed" in field["description"]
