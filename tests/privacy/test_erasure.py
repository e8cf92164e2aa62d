"""Legal erasure: everything about one student goes, in one transaction; usage stays, anonymised;
an audit record names no one; nothing else changes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count, Q, Sum

from accounts.models import User
from conversations.files import file_storage
from conversations.models import Conversation, Message
from llm.models import LLMUsage
from memory.models import AIMemory
from memory.search import fts
from memory.search.backend import search_backend
from memory.services.embedding import memory_embeddings_write
from memory.services.notes import teacher_note_create
from privacy.models import Erasure
from tests.conftest import client_for
from tests.conversations.test_turn import send, start
from tests.privacy.conftest import Rich, build_rich_student


def erase_url(student_id: int) -> str:
    return f"/api/v1/students/{student_id}/erase/"


def user_foreign_keys() -> list[tuple[Any, str]]:
    """(model, column) of every foreign key to the user model, in every installed app (auth,
    authtoken and the admin's log included)."""
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    found = []
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy:
            continue
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model is user_model:
                found.append((model, field.attname))
    return found


def rows_of(student_id: int) -> dict[str, int]:
    """Rows pointing at the student, per foreign key, and their database sessions."""
    counts = {
        f"{model._meta.label}.{column}": model._default_manager.filter(**{column: student_id}).count()
        for model, column in user_foreign_keys()
    }
    counts["sessions"] = sum(
        1 for s in Session.objects.all() if str(s.get_decoded().get("_auth_user_id")) == str(student_id)
    )
    return {key: n for key, n in counts.items() if n}


def rows_containing(needles: list[str]) -> dict[str, int]:
    """Rows of any table (every column, as text or bytes) holding one of the needles."""
    found: dict[str, int] = {}
    lowered = [n.lower() for n in needles]
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, memoryview):
                        value = bytes(value)
                    text = value.decode("utf-8", "ignore") if isinstance(value, bytes) else str(value)
                    if any(n in text.lower() for n in lowered):
                        found[table] = found.get(table, 0) + 1
                        break
    return found


def usage_totals() -> dict[str, Any]:
    return LLMUsage.objects.aggregate(
        rows=Count("id"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost")
    )


def bob_state(bob: User) -> dict[str, Any]:
    return {
        "rows": rows_of(bob.pk),
        "messages": Message.objects.filter(conversation__student=bob).count(),
        "memories": list(AIMemory.objects.filter(student=bob).values_list("pk", "title", "status")),
        "indexed": sorted(search_backend().indexed_ids(bob.pk)),
    }


@pytest.fixture
def bob_data(clients, school, llm) -> None:
    """Another student of the same class, with a conversation, a note and usage of his own."""
    cid = start(clients["bob"])
    assert send(clients["bob"], cid, "What is a prime number?", "b1").status_code == 201
    teacher_note_create(
        teacher=school["teacher_a"], student_id=school["bob"].pk, title="Likes prime numbers a lot", content="x"
    )


def needles(rich: Rich) -> list[str]:
    """The unique word, its index term (stemmed) and the username."""
    return [rich.word, *fts.analyse(rich.word, "en"), rich.student.username]


def test_erasure_leaves_nothing_of_the_student(
    school, rich, root, bob_data, openai_embedder, django_capture_on_commit_callbacks
):
    """After the erasure no table holds the unique word nor any row pointing at the student; the
    stored file is gone after commit; usage totals are unchanged, its rows anonymised; bob's
    data is untouched; the audit record names neither the student nor any content."""
    memory_embeddings_write(memory_ids=list(AIMemory.objects.filter(student=rich.student).values_list("pk", flat=True)))
    student_id = rich.student.pk
    assert rows_containing(needles(rich)), "the word is in the database before"
    before_rows = rows_of(student_id)
    for table in (
        "memory.MemoryEmbedding.student_id",
        "conversations.Conversation.student_id",
        "safety.Flag.student_id",
        "sessions",
    ):
        assert before_rows.get(table), table
    storage = file_storage()
    assert storage.exists(rich.storage_name)
    conversation_ids = list(Conversation.objects.filter(student_id=student_id).values_list("pk", flat=True))
    owned_usage = LLMUsage.objects.filter(Q(student_id=student_id) | Q(conversation_id__in=conversation_ids)).count()
    assert LLMUsage.objects.filter(student_id=student_id).exists()
    totals = usage_totals()
    bob_before = bob_state(school["bob"])

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        resp = client_for(root).post(
            erase_url(student_id),
            {"confirm": rich.student.username, "reason": "Request 2024-118 by e-mail"},
            format="json",
        )
    assert resp.status_code == 200, resp.content
    assert len(callbacks) == 1

    assert rows_containing(needles(rich)) == {}
    assert rows_of(student_id) == {}
    assert not User.objects.filter(pk=student_id).exists()
    assert not storage.exists(rich.storage_name)
    if connection.vendor == "sqlite":
        assert search_backend().indexed_ids(student_id) == set()
    assert usage_totals() == totals
    assert not LLMUsage.objects.filter(conversation_id__in=conversation_ids).exists()
    assert bob_state(school["bob"]) == bob_before

    body = resp.json()
    erasure = Erasure.objects.get()
    assert body["reference"] == erasure.reference and body["via"] == "api"
    assert erasure.erased_by == root and erasure.reason == "Request 2024-118 by e-mail"
    assert erasure.files_pending == 1 and erasure.files_failed == 0
    deleted = erasure.counts["deleted"]
    for label in (
        "conversations.Message",
        "memory.AIMemory",
        "memory.MemoryEmbedding",
        "learning.Quiz",
        "learning.ReviewCard",
        "accounts.User",
        "safety.Flag",
        "safety.FlagAction",
        "safety.Delivery",
    ):
        assert deleted[label] >= 1, label
    assert deleted["accounts.User"] == 1 and deleted["conversations.ReplyMemory"] >= 2
    assert erasure.counts["anonymised"]["llm.LLMUsage"] == owned_usage
    assert erasure.erased_by_id != student_id
    record = str(body) + erasure.reference + erasure.reason + str(erasure.counts)
    assert not any(n.lower() in record.lower() for n in needles(rich))


def test_a_storage_failure_is_logged_and_counted(
    school, llm, root, django_capture_on_commit_callbacks, monkeypatch, caplog
):
    """A file the storage cannot delete after commit is logged with its name and counted on the
    audit record; the erasure itself stands."""
    rich = build_rich_student(school, llm)
    storage = file_storage()

    def refuse(name: str) -> None:
        raise OSError("storage down")

    monkeypatch.setattr(type(storage), "delete", lambda self, name: refuse(name))
    with django_capture_on_commit_callbacks(execute=True):
        resp = client_for(root).post(
            erase_url(rich.student.pk), {"confirm": str(rich.student.pk), "reason": "Court order"}, format="json"
        )
    assert resp.status_code == 200, resp.content
    erasure = Erasure.objects.get()
    assert (erasure.files_pending, erasure.files_failed) == (1, 1)
    assert rich.storage_name in caplog.text
    assert not User.objects.filter(pk=rich.student.pk).exists()


@pytest.mark.parametrize("who", ["teacher_a", "teacher_b", "alice", "bob"])
def test_anyone_but_staff_gets_404_and_nothing_changes(clients, school, rich, who):
    """A teacher (even the student's own), another student: 404, as for a student that does not
    exist, whatever the body; nothing is deleted."""
    before = rows_of(rich.student.pk)
    resp = clients[who].post(
        erase_url(rich.student.pk), {"confirm": str(rich.student.pk), "reason": "Please"}, format="json"
    )
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"
    assert rows_of(rich.student.pk) == before and not Erasure.objects.exists()


def test_the_student_cannot_erase_themself(rich):
    """Erasure is staff's: the student's own request is a 404 too (they ask staff, who check it)."""
    resp = client_for(rich.student).post(
        erase_url(rich.student.pk), {"confirm": rich.student.username, "reason": "Me"}, format="json"
    )
    assert resp.status_code == 404
    assert User.objects.filter(pk=rich.student.pk).exists()


def test_staff_without_the_permission_get_403(rich, clerk):
    """Staff without privacy.erase_student: 403, nothing deleted."""
    before = rows_of(rich.student.pk)
    resp = client_for(clerk).post(
        erase_url(rich.student.pk), {"confirm": str(rich.student.pk), "reason": "Please"}, format="json"
    )
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "forbidden"
    assert rows_of(rich.student.pk) == before and not Erasure.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"confirm": "someone-else", "reason": "Request 12"},
        {"confirm": "", "reason": "Request 12"},
        {"reason": "Request 12"},
        {"confirm": "{id}", "reason": "   "},
        {"confirm": "{id}"},
    ],
)
def test_a_wrong_confirmation_or_no_reason_is_a_400_and_nothing_changes(rich, root, body):
    """`confirm` must be the student's id or username, and a reason is required: else 400 in the
    error envelope, nothing deleted."""
    payload = {k: v.format(id=rich.student.pk) for k, v in body.items()}
    before = rows_of(rich.student.pk)
    resp = client_for(root).post(erase_url(rich.student.pk), payload, format="json")
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert error["code"] == "invalid" and set(error["details"]) <= {"confirm", "reason"}
    assert rows_of(rich.student.pk) == before and not Erasure.objects.exists()


def test_only_students_are_erased(school, root):
    """A teacher's id, or an unknown one, is a 404."""
    for pk in (school["teacher_a"].pk, 999_999):
        resp = client_for(root).post(erase_url(pk), {"confirm": str(pk), "reason": "x"}, format="json")
        assert resp.status_code == 404
    assert User.objects.filter(pk=school["teacher_a"].pk).exists()


def test_erase_student_command(school, rich, django_capture_on_commit_callbacks):
    """`manage.py erase_student ID` refuses and deletes nothing; with --confirm it erases and
    records an erasure made from the command line."""
    student_id = rich.student.pk
    before = rows_of(student_id)
    with pytest.raises(CommandError, match="--confirm"):
        call_command("erase_student", str(student_id))
    assert rows_of(student_id) == before and not Erasure.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("erase_student", str(student_id), "--confirm", "--reason", "Ticket 77")
    assert rows_of(student_id) == {}
    assert rows_containing(needles(rich)) == {}
    erasure = Erasure.objects.get()
    assert (erasure.via, erasure.erased_by, erasure.reason) == ("command", None, "Ticket 77")
    assert not file_storage().exists(rich.storage_name)
    with pytest.raises(CommandError, match="no student"):
        call_command("erase_student", str(student_id), "--confirm")


def test_usage_costs_keep_counting_after_the_erasure(rich, root, settings):
    """Priced usage rows stay in the totals with no owner."""
    LLMUsage.objects.filter(student=rich.student).update(cost=Decimal("0.25"))
    total = LLMUsage.objects.aggregate(cost=Sum("cost"))["cost"]
    resp = client_for(root).post(
        erase_url(rich.student.pk), {"confirm": str(rich.student.pk), "reason": "x"}, format="json"
    )
    assert resp.status_code == 200
    assert LLMUsage.objects.aggregate(cost=Sum("cost"))["cost"] == total
    assert LLMUsage.objects.filter(student=None).count() >= 1
