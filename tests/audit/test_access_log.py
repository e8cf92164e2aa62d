"""The access log: every read of a student's records by someone else appends an entry (who,
when, what kind, which ids, through which surface), one INSERT per request; the student reading
their own records leaves none. The school's administrators and staff read it, newest first;
the student finds it in their export. It is append-only but for its period's purge."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from audit.models import AccessEntry, AppendOnly
from audit.services import access_log_purge
from audit.tasks import access_log_purge_due
from learning.models import SkillMastery
from memory.mcp import _recall
from memory.models import AIMemory
from memory.services.writing import memory_create
from tests.conftest import build_school, build_schools, client_for, make_user
from tests.conversations.test_turn import send, start
from tests.insights.conftest import ask, ask_class
from tests.privacy.test_export import exported


@pytest.fixture
def school(db: None) -> dict[str, Any]:
    """Both schools (`build_schools`), so that `clients` has their administrators too."""
    return build_schools(build_school())


def fact(student: User, title: str, content: str = "Seen in class.") -> AIMemory:
    return memory_create(
        student=student,
        kind=AIMemory.Kind.FACT,
        source=AIMemory.Source.EXTRACTION,
        title=title,
        content=content,
        confidence=0.8,
    )


def log_url(student: User) -> str:
    return f"/api/v1/students/{student.pk}/access-log/"


def entries(student: User) -> list[tuple[Any, ...]]:
    """The student's log, oldest first: (actor id, kind, surface, ids)."""
    rows = AccessEntry.objects.filter(student=student).order_by("at", "id")
    return list(rows.values_list("actor_id", "kind", "surface", "record_ids"))


def test_a_teachers_reads_and_question_are_in_the_log_the_administrator_and_the_export_show(school, clients, llm):
    """A teacher reading alice's memories and asking about her leaves two entries, which her
    school's administrator reads (newest first) and her export holds; alice reading her own
    memories, chatting and exporting leaves none of hers."""
    alice, teacher, admin = school["alice"], school["teacher_a"], school["admin_a"]
    memory = fact(alice, "Confuses numerator and denominator in fractions")
    assert clients["alice"].get("/api/v1/memories/").json()["count"] == 1
    assert clients["alice"].get(f"/api/v1/memories/{memory.pk}/").status_code == 200
    send(clients["alice"], start(clients["alice"]), "What is a fraction?")
    assert entries(alice) == []

    listed = clients["teacher_a"].get(f"/api/v1/memories/?student={alice.pk}")
    assert [m["id"] for m in listed.json()["results"]] == [memory.pk]
    answer = ask(clients["teacher_a"], alice.pk, "Why is alice stuck on fractions?")
    assert answer.status_code == 200, answer.content
    ask_id = answer.json()["id"]

    resp = clients["admin_a"].get(log_url(alice))
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["count"] == 2
    seen = [(e["actor"], e["kind"], e["surface"], e["record_ids"]) for e in body["results"]]
    reader = {"id": teacher.pk, "username": "teacher_a"}
    assert seen == [(reader, "insights", "insights", [ask_id]), (reader, "memories", "api", [memory.pk])]
    assert entries(alice) == [
        (teacher.pk, "memories", "api", [memory.pk]),
        (teacher.pk, "insights", "insights", [ask_id]),
    ]  # reading the log itself is not a read of her records

    _resp, document = exported(clients["admin_a"], alice.pk)
    assert [(e["actor"]["id"], e["kind"]) for e in document["access_log"]] == [
        (teacher.pk, "memories"),
        (teacher.pk, "insights"),
        (admin.pk, "export"),
    ]
    _resp, own = exported(clients["alice"], alice.pk)
    assert [e["kind"] for e in own["access_log"]] == ["memories", "insights", "export"]
    assert len(entries(alice)) == 3


@pytest.mark.parametrize(("who", "status"), [("teacher_a", 403), ("alice", 403), ("admin_b", 404), ("bob", 404)])
def test_only_the_schools_administrators_and_staff_read_the_log(school, clients, who, status):
    """Her teacher and alice herself: 403; the other school's administrator and another
    student: 404 (tests/accounts/test_tenancy.py has the whole matrix). Staff: 200."""
    resp = clients[who].get(log_url(school["alice"]))
    assert resp.status_code == status, resp.content
    assert resp.json()["error"]["code"] == ("forbidden" if status == 403 else "not_found")
    staff = make_user("clerk", User.Role.STAFF, is_staff=True)
    assert client_for(staff).get(log_url(school["alice"])).json() == {
        "count": 0,
        "next": None,
        "previous": None,
        "results": [],
    }


def test_a_list_records_each_student_of_its_page_in_one_insert(school, clients):
    """The teacher's memory list (no filter: every student of the class) records one entry per
    student returned, with their ids, in one INSERT; a page size past 100 is a 400 that records
    nothing."""
    alice, bob = school["alice"], school["bob"]
    a1, a2, b1 = fact(alice, "Likes chess puzzles a lot"), fact(alice, "Reads slowly but well"), fact(bob, "Draws")
    with CaptureQueriesContext(connection) as queries:
        resp = clients["teacher_a"].get("/api/v1/memories/")
    assert resp.status_code == 200
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "audit_accessentry"')]
    assert len(inserts) == 1
    teacher = school["teacher_a"].pk
    assert entries(alice) == [(teacher, "memories", "api", [a2.pk, a1.pk])]
    assert entries(bob) == [(teacher, "memories", "api", [b1.pk])]
    assert clients["teacher_a"].get("/api/v1/memories/?page_size=101").status_code == 400
    assert AccessEntry.objects.count() == 2


def test_the_reads_of_every_kind_are_recorded(school, clients):
    """Conversations, messages, files, the card, skills, reviews, quizzes, tasks, flags and the
    class's roster, read by her teacher, each leave an entry of their kind."""
    alice, teacher = school["alice"], clients["teacher_a"]
    cid = start(clients["alice"])
    for url in (
        f"/api/v1/conversations/?student={alice.pk}",
        f"/api/v1/conversations/{cid}/",
        f"/api/v1/conversations/{cid}/messages/",
        f"/api/v1/conversations/{cid}/files/",
        f"/api/v1/students/{alice.pk}/card/",
        f"/api/v1/students/{alice.pk}/card/changes/",
        f"/api/v1/students/{alice.pk}/skills/",
        f"/api/v1/students/{alice.pk}/reviews/",
        f"/api/v1/quizzes/?student={alice.pk}",
        f"/api/v1/tasks/?student={alice.pk}",
        f"/api/v1/safety/flags/?student={alice.pk}",
        f"/api/v1/classrooms/{school['class_a'].pk}/reviews/",
        f"/api/v1/classrooms/{school['class_a'].pk}/roster/",
    ):
        assert teacher.get(url).status_code == 200, url
    kinds = [kind for _actor, kind, _surface, _ids in entries(alice)]
    # The lists that returned none of her rows (files, card changes, quizzes, tasks, flags) record nothing.
    assert kinds == ["conversations", "conversations", "card", "skills", "reviews", "reviews", "skills"]
    assert entries(alice)[1] == (school["teacher_a"].pk, "conversations", "api", [cid])


def test_a_class_question_records_each_student_it_cites(school, clients, llm):
    """A question about the class that cites bob's record only: an entry for bob, none for alice."""
    alice, bob = school["alice"], school["bob"]
    fact(alice, "Loves reading adventure novels")
    memory = fact(bob, "Mixes up perimeter and area of rectangles", "He multiplies the sides for a perimeter.")
    SkillMastery.objects.create(
        student=bob,
        skill="perimeter and area",
        skill_key="perimeter and area",
        attempts=5,
        correct=1,
        estimate=0.2,
        estimated_at=timezone.now() - timedelta(days=1),
    )
    resp = ask_class(clients["teacher_a"], school["class_a"].pk, "Who struggles with perimeter and area?")
    assert resp.status_code == 200, resp.content
    assert {c["student"] for c in resp.json()["citations"]} == {bob.pk}
    assert entries(bob) == [(school["teacher_a"].pk, "insights", "insights", [resp.json()["id"]])]
    assert entries(alice) == []
    assert memory.pk  # bob's memory was the evidence cited


def test_an_agents_recall_over_mcp_is_recorded(school):
    """The MCP server's recall, for a teacher's agent: an entry with the memories it returned;
    for the student's own agent, none."""
    alice = school["alice"]
    memory = fact(alice, "Confuses numerator and denominator in fractions")
    assert [m["id"] for m in _recall(user=alice, query="fractions", k=5, student_id=None)] == [memory.pk]
    assert entries(alice) == []
    found = _recall(user=school["teacher_a"], query="fractions", k=5, student_id=alice.pk)
    assert [m["id"] for m in found] == [memory.pk]
    assert entries(alice) == [(school["teacher_a"].pk, "memories", "mcp", [memory.pk])]


def test_the_admins_change_view_of_a_students_row_is_recorded(school):
    """A superuser opening alice's memory, and her user row, in the admin: two entries; a
    teacher's row and the changelist: none."""
    alice = school["alice"]
    memory = fact(alice, "Confuses numerator and denominator in fractions")
    root = make_user("root", User.Role.STAFF, is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    assert client.get(f"/admin/memory/aimemory/{memory.pk}/change/").status_code == 200
    assert client.get(f"/admin/accounts/user/{alice.pk}/change/").status_code == 200
    assert client.get(f"/admin/accounts/user/{school['teacher_a'].pk}/change/").status_code == 200
    assert client.get("/admin/memory/aimemory/").status_code == 200
    assert entries(alice) == [(root.pk, "memories", "admin", [memory.pk]), (root.pk, "profile", "admin", [alice.pk])]


def test_the_log_is_append_only_but_for_its_period(school, settings):
    """No update, delete or re-save through the ORM; the daily purge deletes the entries older
    than ACCESS_LOG_DAYS and keeps the rest."""
    settings.ACCESS_LOG_DAYS = 30
    alice, teacher = school["alice"], school["teacher_a"]
    old = AccessEntry.objects.create(
        actor=teacher, student=alice, kind="memories", surface="api", at=timezone.now() - timedelta(days=31)
    )
    recent = AccessEntry.objects.create(
        actor=teacher, student=alice, kind="card", surface="api", at=timezone.now() - timedelta(days=29)
    )
    for attempt in (
        lambda: AccessEntry.objects.filter(pk=old.pk).update(kind="card"),
        lambda: AccessEntry.objects.filter(pk=old.pk).delete(),
        lambda: AccessEntry.objects.bulk_update([old], ["kind"]),
        old.save,
        old.delete,
    ):
        with pytest.raises(AppendOnly):
            attempt()
    assert access_log_purge_due() == 1
    assert list(AccessEntry.objects.values_list("pk", flat=True)) == [recent.pk]
    assert access_log_purge() == 0


def test_the_erasure_deletes_the_students_log_with_them(school, clients):
    """A student's erasure is the log's other exception: her entries go with her, counted in the
    erasure's record; bob's stay."""
    alice, bob = school["alice"], school["bob"]
    fact(alice, "Likes chess puzzles a lot")
    fact(bob, "Draws maps of imaginary lands")
    assert clients["teacher_a"].get("/api/v1/memories/").status_code == 200
    root = make_user("root", User.Role.STAFF, is_staff=True, is_superuser=True)
    resp = client_for(root).post(
        f"/api/v1/students/{alice.pk}/erase/", {"confirm": alice.pk, "reason": "The family asked"}, format="json"
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["counts"]["deleted"]["audit.AccessEntry"] == 1
    assert not AccessEntry.objects.filter(student_id=alice.pk).exists()
    assert len(entries(bob)) == 1
