"""Fixtures for the export and the erasure: staff accounts, and a student with a bit of everything."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.utils import timezone

from accounts.models import Enrollment, User
from conversations import file_extraction
from conversations.models import ContextCheckpoint, ConversationFile, Message, ReplyMemory
from learning.models import Quiz
from memory.card import card_propose, card_update
from memory.models import AIMemory, ConsolidationDecision, SupersessionReview
from memory.search import fts
from memory.search.backend import search_backend
from memory.services.notes import memory_note_save, teacher_note_create
from memory.services.records import memory_summary_store
from safety.models import Delivery, Flag, FlagAction
from tests.conftest import client_for, make_user
from tests.conversations.test_files import upload
from tests.conversations.test_save_memory_tool import tool_step
from tests.conversations.test_turn import send, start
from tests.learning.conftest import THREE_OF_FIVE, answers_body, quiz_args


@pytest.fixture
def root(db: None) -> User:
    """A superuser: every permission, privacy's included."""
    return make_user("root", User.Role.STAFF, is_staff=True, is_superuser=True)


@pytest.fixture
def clerk(db: None) -> User:
    """Staff without privacy's permissions."""
    return make_user("clerk", User.Role.STAFF, is_staff=True)


@pytest.fixture
def exporter(db: None) -> User:
    """Staff granted privacy.export_student only."""
    user = make_user("exporter", User.Role.STAFF, is_staff=True)
    user.user_permissions.add(Permission.objects.get(content_type__app_label="privacy", codename="export_student"))
    return User.objects.get(pk=user.pk)  # a fresh instance: no cached permissions


@dataclass
class Rich:
    student: User
    word: str
    conversation: int
    note: int
    teacher_only: int
    older: int
    newer: int
    quiz: int
    file: int
    storage_name: str
    flag: int
    withheld: str


def superseded_pair(student: User, word: str, *, evidence: list[int]) -> tuple[AIMemory, AIMemory]:
    """A fact replaced by a newer one: the older is superseded and points at the newer."""
    now = timezone.now()
    newer = AIMemory.objects.create(
        student=student,
        kind=AIMemory.Kind.FACT,
        title=f"Now prefers {word} diagrams",
        content=f"Draws {word} diagrams before any symbol.",
        source=AIMemory.Source.EXTRACTION,
        evidence=evidence,
        confidence=0.8,
        model="scripted-summary",
        created_at=now,
    )
    older = AIMemory.objects.create(
        student=student,
        kind=AIMemory.Kind.FACT,
        title=f"Prefers {word} tables",
        content=f"Likes {word} tables.",
        source=AIMemory.Source.EXTRACTION,
        evidence=evidence,
        confidence=0.6,
        model="scripted-summary",
        status=AIMemory.Status.SUPERSEDED,
        superseded_by=newer,
        archived_reason=f"Replaced by a newer fact about {word}.",
        created_at=now - timedelta(days=2),
    )
    search_backend().index(
        [
            fts.IndexRow(
                memory_id=newer.pk,
                student_id=student.pk,
                text=fts.memory_text(newer.title, newer.content),
                language="en",
            )
        ]
    )
    return older, newer


def build_rich_student(school: dict[str, Any], llm: Any) -> Rich:
    """A student of teacher_a's class whose every kind of row holds one unique word: two chat
    turns (a note between them, a create_quiz quiz, the access log), an answered quiz (mastery and
    a quiz_result memory), an uploaded and extracted file, a checkpoint, a summary, a teacher-only
    note, a superseded fact, an approach, a review, a consolidation decision, a task with a
    status, a session, a token and an admin log entry."""
    word = "zorblax" + uuid.uuid4().hex[:10]
    student = make_user(f"{word}_kid", first_name=f"Kid{word}")
    Enrollment.objects.create(classroom=school["class_a"], student=student)
    client = client_for(student)

    llm.script("chat", {"content": f"Noted, {word}!"})
    cid = start(client)
    assert send(client, cid, f"My secret word is {word}. Help with fractions?", "m1").status_code == 201
    # What the save_memory tool stores (the tool's own path is tested in tests/conversations).
    memory_note_save(
        student_id=student.pk,
        conversation_id=cid,
        title=f"Calls every fraction a {word}",
        content=f"The student says {word} for a fraction.",
    )
    llm.script(
        "chat",
        tool_step(("create_quiz", json.dumps(quiz_args(topic=f"Fractions {word}")))),
        {"content": f"A quiz on {word}."},
    )
    assert send(client, cid, f"Test me on {word}", "m2").status_code == 201
    quiz = Quiz.objects.get(student=student)
    resp = client.post(f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, THREE_OF_FIVE), format="json")
    assert resp.status_code == 201, resp.content

    resp = upload(client, cid, "notes.txt", f"{word} homework notes\n".encode())
    assert resp.status_code == 201, resp.content
    file_id = resp.json()["id"]
    file_extraction.file_extract(file_id=file_id)
    stored = ConversationFile.objects.get(pk=file_id)
    assert stored.status == "ready" and word in stored.text

    ContextCheckpoint.objects.create(
        conversation_id=cid,
        covers_through_seq=2,
        covered_messages=2,
        covered_tokens=20,
        summary=f"Earlier they spoke of {word}.",
        summary_tokens=8,
    )
    assert client.post(f"/api/v1/conversations/{cid}/end/").status_code == 202
    memory_summary_store(
        student_id=student.pk,
        conversation_id=cid,
        title=f"Fractions practice with {word} words",
        content=f"The student practised fractions and called them {word}. They did well.",
    )
    note = AIMemory.objects.get(student=student, kind=AIMemory.Kind.NOTE)
    hidden = teacher_note_create(
        teacher=school["teacher_a"],
        student_id=student.pk,
        title=f"Worried about {word} at home",
        content=f"Teachers only: {word}.",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    older, newer = superseded_pair(student, word, evidence=[note.pk])
    # The access log of the last reply holds the note (the turn may have logged it already) and a
    # teacher-only note, which a prompt never holds, to prove a student's export leaves it out.
    reply = Message.objects.filter(conversation_id=cid, role=Message.Role.TUTOR).order_by("seq").last()
    assert reply is not None
    for memory_id in (note.pk, hidden.pk):
        rank = ReplyMemory.objects.filter(message=reply).count() + 1
        ReplyMemory.objects.get_or_create(
            message=reply, memory_id=memory_id, defaults={"rank": rank, "signals": {"latest": True}}
        )
    AIMemory.objects.create(
        student=student,
        kind=AIMemory.Kind.APPROACH,
        title=f"Short {word} examples work",
        content=f"Worked examples with {word}.",
        source=AIMemory.Source.EXTRACTION,
        successes=2,
        failures=1,
        created_at=timezone.now(),
    )
    SupersessionReview.objects.create(
        student=student, older=note, newer=newer, confidence=0.4, reason=f"Maybe the same {word}."
    )
    ConsolidationDecision.objects.create(
        student=student, key=uuid.uuid4().hex, members=[note.pk, newer.pk], outcome="skipped", reason=f"{word} differs"
    )
    # The student card: a teacher's edit (applied), and a proposal from the note waiting for a teacher.
    card_update(user=school["teacher_a"], student_id=student.pk, data={"interests": [f"{word} comics"]})
    card_propose(
        student_id=student.pk, field="accommodations", op="add", value=f"{word} time", confidence=0.9, memory_id=note.pk
    )

    resp = client_for(school["teacher_a"]).post(
        "/api/v1/tasks/", {"student": student.pk, "title": f"Worksheet {word}"}, format="json"
    )
    assert resp.status_code == 201, resp.content
    assert (
        client.post(f"/api/v1/tasks/{resp.json()['id']}/status/", {"status": "done"}, format="json").status_code == 200
    )

    # Safety: a withheld reply's flag (what the model wrote, kept for staff), with its log and an
    # alert, and a pattern citing a message and a memory.
    withheld = f"Withheld reply about {word}"
    first = Message.objects.filter(conversation_id=cid).order_by("seq").first()
    assert first is not None
    flag = Flag.objects.create(
        student=student,
        conversation_id=cid,
        message=reply,
        source=Flag.Source.REPLY,
        category="violence",
        categories=["violence"],
        severity="concern",
        scores={"offline": {"answered": True, "signals": [{"rule": word}]}},
        excerpt=withheld,
        original_text=withheld,
    )
    FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.CREATED)
    FlagAction.objects.create(
        flag=flag, kind=FlagAction.Kind.ACKNOWLEDGED, actor=school["teacher_a"], note=f"Spoke about {word}."
    )
    Delivery.objects.create(
        flag=flag, channel=Delivery.Channel.EMAIL, target="lead@school.test", status="failed", last_error=f"{word} 550"
    )
    pattern = Flag.objects.create(
        student=student, source=Flag.Source.PATTERN, category="distress", severity="concern", excerpt=f"{word} often"
    )
    pattern.cited_messages.set([first])
    pattern.cited_memories.set([note])

    Client().force_login(student)  # a database session
    LogEntry.objects.create(
        user=school["teacher_a"],
        content_type=ContentType.objects.get_for_model(User),
        object_id=str(student.pk),
        object_repr=student.username,
        action_flag=CHANGE,
        change_message="[]",
    )
    return Rich(
        student=student,
        word=word,
        conversation=cid,
        note=note.pk,
        teacher_only=hidden.pk,
        older=older.pk,
        newer=newer.pk,
        quiz=quiz.pk,
        file=file_id,
        storage_name=stored.storage_name,
        flag=flag.pk,
        withheld=withheld,
    )


@pytest.fixture
def rich(school: dict[str, Any], llm: Any) -> Rich:
    return build_rich_student(school, llm)
