"""A student's export: one JSON document, streamed, for their teacher, staff and themself."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.http import HttpResponse
from django.test import AsyncClient
from openapi_core.contrib.django import DjangoOpenAPIResponse
from rest_framework.authtoken.models import Token

from accounts.models import GuardianLink, User
from audit.models import AccessEntry
from memory.models import AIMemory
from privacy import export
from tests import schema
from tests.conftest import client_for, make_user

TOP_KEYS = {
    "format",
    "exported_at",
    "student",
    "conversations",
    "memories",
    "supersession_reviews",
    "card",
    "card_changes",
    "learning",
    "consent_changes",
    "reply_memories",
    "asks",
    "access_log",
}
MEMORY_KEYS = {
    "id",
    "kind",
    "tier",
    "title",
    "content",
    "status",
    "visibility",
    "archived_reason",
    "source",
    "source_ref",
    "source_conversation",
    "author",
    "evidence",
    "confidence",
    "needs_review",
    "model",
    "superseded_by",
    "supersedes",
    "links",
    "successes",
    "failures",
    "recall_count",
    "last_recalled_at",
    "created_at",
    "updated_at",
}


def url(student_id: int) -> str:
    return f"/api/v1/students/{student_id}/export/"


def exported(client: Any, student_id: int) -> tuple[Any, dict[str, Any]]:
    """The streamed response and its document, checked against the published schema (the
    suite's own check skips streams)."""
    resp = client.get(url(student_id))
    assert resp.status_code == 200, resp.content if not resp.streaming else resp.status_code
    assert resp.streaming is True
    body = b"".join(resp.streaming_content)
    plain = HttpResponse(body, content_type=resp["Content-Type"], status=200)
    schema._openapi().validate_response(schema._Request(resp.wsgi_request), DjangoOpenAPIResponse(plain))
    return resp, json.loads(body)


def test_the_teacher_exports_the_whole_record(clients, school, rich):
    """The class's teacher gets every key of the documented shape, as an attachment, with
    teacher-only notes, messages, files' metadata only, the memories' chain both ways, and the
    safety flags."""
    resp, doc = exported(clients["teacher_a"], rich.student.pk)
    assert resp["Content-Type"] == "application/json"
    assert resp["Content-Disposition"].startswith("attachment; filename=")
    assert set(doc) == TOP_KEYS | {"safety_flags"}
    assert doc["format"] == "tutor-export/1"
    student = doc["student"]
    assert student["id"] == rich.student.pk and student["username"] == rich.student.username
    assert not {"password", "token", "auth_token"} & set(student)
    assert [c["id"] for c in student["classrooms"]] == [school["class_a"].pk]

    [conversation] = doc["conversations"]
    assert {"id", "subject", "status", "messages", "files", "checkpoints"} <= set(conversation)
    assert [m["seq"] for m in conversation["messages"]] == [1, 2, 3, 4]
    assert rich.word in conversation["messages"][0]["content"]
    [file] = conversation["files"]
    assert set(file) == {"id", "name", "content_type", "size", "status", "created_at"}
    assert rich.word in conversation["checkpoints"][0]["summary"]

    memories = {m["id"]: m for m in doc["memories"]}
    assert all(set(m) == MEMORY_KEYS for m in memories.values())
    assert rich.teacher_only in memories
    assert {m["kind"] for m in memories.values()} >= {"note", "summary", "quiz_result", "file", "fact", "approach"}
    assert memories[rich.older]["status"] == "superseded"
    assert memories[rich.older]["superseded_by"] == rich.newer
    assert memories[rich.newer]["supersedes"] == [rich.older]
    assert memories[rich.newer]["tier"] == "semantic" and memories[rich.note]["tier"] == "episodic"
    assert memories[rich.newer]["evidence"] == [rich.note]
    assert rich.word in memories[rich.older]["archived_reason"]

    assert [r["newer"] for r in doc["supersession_reviews"]] == [rich.newer]
    assert doc["card"]["interests"] == [f"{rich.word} comics"] and doc["card"]["token_count"] > 0
    changes = {c["status"]: c for c in doc["card_changes"]}
    assert set(changes) == {"applied", "pending"} and changes["pending"]["memory"] == rich.note
    learning = doc["learning"]
    assert set(learning) == {"quizzes", "skills", "reviews", "tasks"}
    [quiz] = learning["quizzes"]
    assert quiz["id"] == rich.quiz and len(quiz["answers"]) == 5
    assert learning["skills"][0]["attempts"] > 0
    assert [r["skill"] for r in learning["reviews"]] == [learning["skills"][0]["id"]]
    assert learning["tasks"][0]["progress"]["status"] == "done"
    assert doc["reply_memories"] and {r["memory"] for r in doc["reply_memories"]} <= set(memories)
    # Who read her records: this export, recorded before the document was written.
    assert doc["access_log"][-1]["kind"] == "export"
    assert doc["access_log"][-1]["actor"]["username"] == "teacher_a"


def test_staff_with_the_permission_export_any_student(rich, root, exporter, clerk):
    """Staff with privacy.export_student (superusers have it) export any student, teacher-only
    notes and safety flags included; staff without it are a 404, like anyone outside the class."""
    for user in (root, exporter):
        _resp, doc = exported(client_for(user), rich.student.pk)
        assert rich.teacher_only in {m["id"] for m in doc["memories"]}
        assert rich.flag in {f["id"] for f in doc["safety_flags"]}
    assert client_for(clerk).get(url(rich.student.pk)).status_code == 404


def test_the_staff_export_holds_the_flags_with_their_log_and_alerts(rich, root):
    """Each flag about the student, oldest first, with the withheld reply's text, every action
    of its log and every alert; a pattern names the message and memory it cites."""
    _resp, doc = exported(client_for(root), rich.student.pk)
    flags = {f["id"]: f for f in doc["safety_flags"]}
    flag = flags[rich.flag]
    assert (flag["source"], flag["severity"], flag["student"]) == ("reply", "concern", rich.student.pk)
    assert flag["original_text"] == rich.withheld
    assert [a["kind"] for a in flag["actions"]] == ["created", "acknowledged"]
    assert rich.word in flag["actions"][1]["note"]
    assert [(d["channel"], d["status"]) for d in flag["deliveries"]] == [("email", "failed")]
    [pattern] = [f for f in flags.values() if f["source"] == "pattern"]
    assert pattern["cited_memories"] == [rich.note] and len(pattern["cited_messages"]) == 1


def test_the_student_exports_their_own_without_teacher_only_notes(rich):
    """A student exports their own record (GDPR's right of access), without the teacher-only
    note, any id pointing at it, or its text, and without the safety flags about them."""
    _resp, doc = exported(client_for(rich.student), rich.student.pk)
    assert set(doc) == TOP_KEYS  # no safety flags: a student never sees one
    assert rich.withheld not in json.dumps(doc)
    ids = {m["id"] for m in doc["memories"]}
    assert rich.teacher_only not in ids
    assert {rich.note, rich.older, rich.newer} <= ids
    text = json.dumps(doc)
    assert "Worried about" not in text and "Teachers only" not in text
    for m in doc["memories"]:
        assert rich.teacher_only not in [m["superseded_by"], *m["supersedes"], *m["evidence"], *m["links"]]
    assert all(r["memory"] != rich.teacher_only for r in doc["reply_memories"])
    # The card as the student's API shows it: the changes applied, not the proposal waiting.
    assert [c["status"] for c in doc["card_changes"]] == ["applied"]


def test_the_guardians_export_holds_no_words_of_the_child_nor_flags(rich, school):
    """The guardian's export is the student's own copy without her messages, checkpoints and
    questions: no teacher-only note, no safety flag, none of the words she typed."""
    guardian = make_user("guardian_rich", User.Role.GUARDIAN, school=rich.student.school)
    GuardianLink.objects.create(guardian=guardian, student=rich.student)
    _resp, doc = exported(client_for(guardian), rich.student.pk)
    assert "safety_flags" not in doc
    assert [c["id"] for c in doc["conversations"]] == [rich.conversation]
    assert all(c["messages"] == [] and c["checkpoints"] == [] for c in doc["conversations"])
    assert doc["asks"] == []
    text = str(doc)
    assert "My secret word is" not in text and rich.withheld not in text
    ids = {m["id"] for m in doc["memories"]}
    assert rich.teacher_only not in ids and rich.note in ids
    assert AccessEntry.objects.filter(student=rich.student, actor=guardian, surface="export").count() == 1


def test_a_student_does_not_see_expected_answers_of_an_open_quiz(clients, school, llm):
    """The student's own export shows a quiz as the API does: no expected answers before they answer."""
    from learning.services import quiz_create_from_tool
    from tests.conversations.test_turn import start
    from tests.learning.conftest import QUIZ_ARGS

    cid = start(clients["alice"])
    quiz_create_from_tool(student_id=school["alice"].pk, conversation_id=cid, arguments=QUIZ_ARGS)
    _resp, own = exported(clients["alice"], school["alice"].pk)
    assert {q["expected_answer"] for q in own["learning"]["quizzes"][0]["questions"]} == {None}
    _resp, teachers = exported(clients["teacher_a"], school["alice"].pk)
    assert None not in {q["expected_answer"] for q in teachers["learning"]["quizzes"][0]["questions"]}


def test_the_export_names_models_as_the_api_does_never_by_a_host_path(clients, school):
    """Messages and memories are exported by their apps' own serializers (the API's): a model
    that a server named by the path of its weights is its id, in the student's own export too."""
    from conversations.models import Message
    from memory.services.records import memory_summary_store
    from tests.conversations.test_turn import start

    path = "/srv/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    cid = start(clients["alice"])
    Message.objects.create(conversation_id=cid, seq=1, role="tutor", content="Hello", model=path)
    summary, _created = memory_summary_store(
        student_id=school["alice"].pk,
        conversation_id=cid,
        title="Adding fractions with unlike denominators today",
        content="Alice added fractions. She found common denominators.",
    )
    AIMemory.objects.filter(pk=summary.pk).update(model=path)
    _resp, doc = exported(clients["alice"], school["alice"].pk)
    assert path not in json.dumps(doc)
    assert doc["conversations"][0]["messages"][0]["model"] == "SmolLM2-135M-Instruct.Q4_1"
    assert {m["model"] for m in doc["memories"]} == {"SmolLM2-135M-Instruct.Q4_1"}


@pytest.mark.parametrize("intruder", ["bob", "carol", "teacher_b"])
def test_another_student_or_another_class_gets_404(clients, school, intruder):
    """Another student (same class or not) and a teacher of another class get 404."""
    resp = clients[intruder].get(url(school["alice"].pk))
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"


def test_an_empty_record_is_a_valid_document(clients, school):
    """A student with no data yet: the same keys, empty lists."""
    _resp, doc = exported(clients["bob"], school["bob"].pk)
    assert set(doc) == TOP_KEYS
    assert doc["conversations"] == doc["memories"] == doc["reply_memories"] == []
    assert doc["card"]["interests"] == [] and doc["card"]["updated_at"] is None and doc["card_changes"] == []
    assert doc["learning"] == {"quizzes": [], "skills": [], "reviews": [], "tasks": []}


def test_rows_are_written_by_chunks(clients, school, monkeypatch):
    """Many rows: every one is in the document, written a chunk at a time."""
    monkeypatch.setattr(export, "CHUNK_SIZE", 3)
    from memory.services.notes import teacher_note_create

    for n in range(7):
        teacher_note_create(
            teacher=school["teacher_a"],
            student_id=school["alice"].pk,
            title=f"Note number {n} on fractions",
            content="x",
        )
    pieces = list(export.student_export(student=school["alice"], viewer=school["teacher_a"], include_teacher_only=True))
    doc = json.loads(b"".join(pieces))
    assert [m["title"] for m in doc["memories"]] == [f"Note number {n} on fractions" for n in range(7)]
    assert len(pieces) > 7


def test_under_asgi_the_document_is_an_async_stream(school):
    """Under an ASGI server the view streams an asynchronous iterator (Django would read a
    synchronous one whole into memory first)."""
    from memory.services.notes import teacher_note_create

    teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk, title="Likes geometry puzzles a lot", content="x"
    )
    token, _ = Token.objects.get_or_create(user=school["teacher_a"])

    async def fetch() -> tuple[bool, bytes]:
        resp: Any = await AsyncClient().get(url(school["alice"].pk), headers={"Authorization": f"Token {token.key}"})
        assert resp.status_code == 200
        return resp.is_async, b"".join([chunk async for chunk in resp.streaming_content])

    is_async, body = async_to_sync(fetch)()
    assert is_async
    doc = json.loads(body)
    assert [m["title"] for m in doc["memories"]] == ["Likes geometry puzzles a lot"]
    assert doc["memories"][0]["kind"] == AIMemory.Kind.TEACHER_NOTE
