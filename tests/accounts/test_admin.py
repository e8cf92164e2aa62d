"""The Django admin: staff accounts from createsuperuser, teachers with the staff flag in the
"Tutor staff" group, read-only views of conversations, memories and LLM usage, and archiving
through the memory service. A staff account sees no student data through the API; in the admin
it sees all, and a teacher their classes' (tests/accounts/test_admin_tenancy.py)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from accounts.models import TUTOR_STAFF_GROUP, User
from conversations.models import Message
from conversations.services import conversation_create
from core.errors import Forbidden
from llm.models import LLMUsage
from memory.models import AIMemory
from memory.search.backend import search_backend
from memory.services.lifecycle import memory_archive_by_staff
from memory.services.notes import teacher_note_create
from tests.conftest import client_for, make_user

# (admin URL prefix, the key of the row in `rows`)
MODELS = [
    ("conversations/conversation", "conversation"),
    ("conversations/message", "message"),
    ("memory/aimemory", "memory"),
    ("llm/llmusage", "usage"),
]


@pytest.fixture
def rows(school: dict[str, Any]) -> dict[str, Any]:
    """One of alice's rows of each kind the admin shows."""
    alice = school["alice"]
    conversation = conversation_create(user=alice, subject="Fractions")
    message = Message.objects.create(
        conversation=conversation,
        seq=1,
        role=Message.Role.STUDENT,
        content="What is 3/4 of 12?",
        client_message_id="m1",
    )
    memory = teacher_note_create(
        teacher=school["teacher_a"], student_id=alice.pk, title="Confuses numerator and denominator", content="x"
    )
    usage = LLMUsage.objects.create(
        purpose=LLMUsage.Purpose.CHAT, model="m", student=alice, conversation_id=conversation.pk
    )
    return {"conversation": conversation, "message": message, "memory": memory, "usage": usage}


@pytest.fixture
def superuser(db: None, monkeypatch: pytest.MonkeyPatch) -> User:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "root-password-1")
    call_command("createsuperuser", "--noinput", username="root", email="root@example.com", verbosity=0)
    return User.objects.get(username="root")


@pytest.fixture
def staff_teacher(school: dict[str, Any]) -> User:
    """Alice's teacher, given the staff flag and the Tutor staff group: the admin shows them their
    class's rows (tests/accounts/test_admin_tenancy.py: and no one else's)."""
    teacher = school["teacher_a"]
    teacher.is_staff = True
    teacher.save(update_fields=["is_staff"])
    teacher.groups.add(Group.objects.get(name=TUTOR_STAFF_GROUP))
    return teacher


def admin_client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_createsuperuser_makes_a_staff_account_not_a_student(superuser):
    """`createsuperuser --noinput` makes role staff, is_staff and is_superuser, with the password."""
    assert superuser.role == User.Role.STAFF
    assert not superuser.is_student and not superuser.is_teacher
    assert superuser.is_staff and superuser.is_superuser
    assert superuser.check_password("root-password-1")


def test_create_superuser_refuses_another_role(db):
    """A superuser cannot be made a student or a teacher."""
    with pytest.raises(ValueError, match="role=staff"):
        User.objects.create_superuser("root", "root@example.com", "pw", role=User.Role.STUDENT)
    assert not User.objects.exists()


def test_staff_account_sees_no_student_data_through_the_api(superuser, rows, school):
    """The scoping primitive fails closed for the staff role: empty lists and 404 on every row."""
    api = client_for(superuser)
    alice = school["alice"].pk
    for url in ("/api/v1/students/", "/api/v1/conversations/", "/api/v1/memories/"):
        resp = api.get(url)
        assert resp.status_code == 200, resp.content
        assert resp.json()["count"] == 0
    for url in (
        f"/api/v1/students/{alice}/",
        f"/api/v1/conversations/{rows['conversation'].pk}/",
        f"/api/v1/memories/{rows['memory'].pk}/",
        f"/api/v1/conversations/?student={alice}",
        f"/api/v1/memories/?student={alice}",
    ):
        assert api.get(url).status_code == 404, url


@pytest.mark.parametrize("who", ["superuser", "staff_teacher"])
@pytest.mark.parametrize(("prefix", "key"), MODELS)
def test_changelist_and_change_page_answer_200(request, rows, who, prefix, key):
    """A superuser, and a staff teacher in the group, see every tutor model's list and their class's rows."""
    client = admin_client(request.getfixturevalue(who))
    assert client.get("/admin/").status_code == 200
    assert client.get(f"/admin/{prefix}/").status_code == 200
    resp = client.get(f"/admin/{prefix}/{rows[key].pk}/change/")
    assert resp.status_code == 200
    assert b'name="_save"' not in resp.content  # a view, not a form


def test_memory_page_shows_provenance(superuser, rows):
    """The memory page shows where the memory comes from and who wrote it."""
    resp = admin_client(superuser).get(f"/admin/memory/aimemory/{rows['memory'].pk}/change/")
    for label in (
        b"Kind",
        b"Source",
        b"Source conversation",
        b"Author",
        b"Status",
        b"Archived reason",
        b"Confidence",
        b"Needs review",
        b"Visibility",
        b"teacher_a",
    ):
        assert label in resp.content, label


def test_teacher_without_the_group_or_the_flag_sees_nothing(rows, school):
    """The staff flag alone opens /admin/ on nothing; a teacher without it is sent to the login."""
    flagged = make_user("flagged", User.Role.TEACHER, is_staff=True)
    client = admin_client(flagged)
    assert client.get("/admin/").status_code == 200
    for prefix, _key in MODELS:
        assert client.get(f"/admin/{prefix}/").status_code == 403
    assert admin_client(school["teacher_a"]).get("/admin/memory/aimemory/").status_code == 302


@pytest.mark.parametrize(("prefix", "key"), MODELS)
def test_delete_is_refused(superuser, rows, prefix, key):
    """No row of these models is deleted through the admin, not even by a superuser."""
    client = admin_client(superuser)
    url = f"/admin/{prefix}/{rows[key].pk}/delete/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"post": "yes"}).status_code == 403
    assert type(rows[key]).objects.filter(pk=rows[key].pk).exists()
    assert b"delete_selected" not in client.get(f"/admin/{prefix}/").content


@pytest.mark.parametrize(("prefix", "key"), MODELS)
def test_add_and_change_posts_are_refused(superuser, rows, prefix, key):
    """Messages, usage, conversations and memories are written by services only: add and change 403."""
    client = admin_client(superuser)
    before = type(rows[key]).objects.count()
    assert client.post(f"/admin/{prefix}/add/", {"content": "forged", "model": "forged"}).status_code == 403
    assert client.post(f"/admin/{prefix}/{rows[key].pk}/change/", {"content": "forged"}).status_code == 403
    assert type(rows[key]).objects.count() == before
    if key == "message":
        assert Message.objects.get(pk=rows[key].pk).content == "What is 3/4 of 12?"


@pytest.mark.parametrize("who", ["superuser", "staff_teacher"])
def test_archive_action_archives_through_the_service(request, rows, school, who):
    """The action archives with the posted reason, through the service: out of the full-text index."""
    memory = rows["memory"]
    assert memory.pk in search_backend().indexed_ids(memory.student_id)
    resp = admin_client(request.getfixturevalue(who)).post(
        "/admin/memory/aimemory/",
        {"action": "archive_selected", "_selected_action": [memory.pk], "reason": "  Written  about  another pupil "},
    )
    assert resp.status_code == 302
    archived = AIMemory.objects.get(pk=memory.pk)
    assert archived.status == AIMemory.Status.ARCHIVED
    assert archived.archived_reason == "Written about another pupil"
    assert archived.updated_at > memory.updated_at
    assert memory.pk not in search_backend().indexed_ids(memory.student_id)


def test_archive_action_needs_a_reason(superuser, rows):
    """Without a reason nothing is archived, and the admin says why."""
    resp = admin_client(superuser).post(
        "/admin/memory/aimemory/",
        {"action": "archive_selected", "_selected_action": [rows["memory"].pk], "reason": " "},
        follow=True,
    )
    assert b"A reason is required" in resp.content
    assert AIMemory.objects.get(pk=rows["memory"].pk).status == AIMemory.Status.ACTIVE


def test_archive_action_refused_without_the_permission(rows):
    """A staff user outside the group has no archive action, and the service refuses them."""
    flagged = make_user("flagged", User.Role.TEACHER, is_staff=True)
    flagged.user_permissions.add(
        *Group.objects.get(name=TUTOR_STAFF_GROUP).permissions.filter(codename="view_aimemory")
    )
    client = admin_client(flagged)
    assert b"archive_selected" not in client.get("/admin/memory/aimemory/").content
    client.post(
        "/admin/memory/aimemory/",
        {"action": "archive_selected", "_selected_action": [rows["memory"].pk], "reason": "x"},
    )
    with pytest.raises(Forbidden):
        memory_archive_by_staff(staff=flagged, memory_id=rows["memory"].pk, reason="x")
    assert AIMemory.objects.get(pk=rows["memory"].pk).status == AIMemory.Status.ACTIVE


def test_tutor_staff_group_grants_views_and_archiving_only(db):
    """The data migration's group: view the tutor models, archive memories (their change), nothing else."""
    perms = set(
        Group.objects.get(name=TUTOR_STAFF_GROUP).permissions.values_list("content_type__app_label", "codename")
    )
    assert perms == {
        ("conversations", "view_conversation"),
        ("conversations", "view_message"),
        ("memory", "view_aimemory"),
        ("memory", "change_aimemory"),
        ("llm", "view_llmusage"),
    }


def test_demo_teacher_signs_in_to_the_admin(db, settings):
    """seed_demo's teacher logs in to /admin/ with the demo password and sees memories; twice is the same."""
    settings.ALLOW_DEMO_DATA = True
    call_command("seed_demo", stdout=StringIO())
    call_command("seed_demo", stdout=StringIO())
    teacher = User.objects.get(username="teacher")
    assert teacher.is_staff and not teacher.is_superuser and teacher.role == User.Role.TEACHER
    assert list(teacher.groups.values_list("name", flat=True)) == [TUTOR_STAFF_GROUP]
    client = Client()
    assert client.login(username="teacher", password="demo-password")
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/memory/aimemory/").status_code == 200


def test_the_archive_service_refuses_a_memory_outside_the_teachers_classes(rows, school):
    """The admin passes only rows in scope, and the service checks again: a teacher of another class,
    with the staff flag and the Tutor staff group, gets NotFound for alice's memory, which stays
    active; her own teacher archives it."""
    from core.errors import NotFound

    outsider = school["teacher_b"]
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    outsider.groups.add(Group.objects.get(name=TUTOR_STAFF_GROUP))
    outsider = User.objects.get(pk=outsider.pk)  # a fresh permission cache
    with pytest.raises(NotFound):
        memory_archive_by_staff(staff=outsider, memory_id=rows["memory"].pk, reason="not my class")
    assert AIMemory.objects.get(pk=rows["memory"].pk).status == AIMemory.Status.ACTIVE
    teacher = school["teacher_a"]
    teacher.is_staff = True
    teacher.save(update_fields=["is_staff"])
    teacher.groups.add(Group.objects.get(name=TUTOR_STAFF_GROUP))
    archived = memory_archive_by_staff(staff=User.objects.get(pk=teacher.pk), memory_id=rows["memory"].pk, reason="ok")
    assert archived.status == AIMemory.Status.ARCHIVED
