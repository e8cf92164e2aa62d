"""Guardians (docs/privacy.md#guardians): made by the provisioning API and linked to a child by
the child's school administrator; a linked guardian reads the child's memories but teacher-only
notes, learning record, usage and export (without the child's messages or safety flags), every
read in the access log; an ended link is a 404 at once. The matrix against every endpoint is
tests/accounts/test_tenancy.py (GUARDIAN_ANSWERS and the guardian intruders)."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import GuardianLink, User
from audit.models import AccessEntry
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from tests.conftest import client_for, make_user


@pytest.fixture
def guardian(schools: dict[str, Any]) -> User:
    """Alice's guardian, made and linked through the API by her school's administrator."""
    admin = client_for(schools["admin_a"])
    made = admin.post(
        "/api/v1/users/",
        {"role": "guardian", "given_name": "Grace", "family_name": "Hopper", "school": schools["school"].pk},
        format="json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["role"] == "guardian"
    linked = admin.post(
        f"/api/v1/students/{schools['alice'].pk}/guardians/", {"guardian": made.json()["id"]}, format="json"
    )
    assert linked.status_code == 201, linked.content
    assert linked.json()["active"] is True and linked.json()["guardian"] == made.json()["id"]
    return User.objects.get(pk=made.json()["id"])


def test_a_teacher_may_not_provision_or_link_a_guardian(schools):
    """Guardians are the school's administrators' (and staff's) to make and link: a teacher of
    the child gets 403, another school's administrator 404 on the child."""
    teacher = client_for(schools["teacher_a"])
    body = {"role": "guardian", "given_name": "Ann", "family_name": "Lee", "school": schools["school"].pk}
    assert teacher.post("/api/v1/users/", body, format="json").status_code == 403
    other = make_user("guardian_x", User.Role.GUARDIAN, school=schools["school"])
    url = f"/api/v1/students/{schools['alice'].pk}/guardians/"
    assert teacher.post(url, {"guardian": other.pk}, format="json").status_code == 403
    assert client_for(schools["admin_b"]).post(url, {"guardian": other.pk}, format="json").status_code == 404
    assert not GuardianLink.objects.exists()


def test_only_a_guardian_of_the_school_may_be_linked(schools):
    """Linking a person who is not a guardian, or a guardian of another school, is a 400."""
    admin = client_for(schools["admin_a"])
    url = f"/api/v1/students/{schools['alice'].pk}/guardians/"
    elsewhere = make_user("guardian_b", User.Role.GUARDIAN, school=schools["school_b"])
    for person in (schools["teacher_a"], elsewhere):
        resp = admin.post(url, {"guardian": person.pk}, format="json")
        assert resp.status_code == 400, resp.content
        assert "guardian" in resp.json()["error"]["details"]
    assert admin.post(url, {"guardian": "x"}, format="json").status_code == 400
    assert not GuardianLink.objects.exists()


def test_the_guardian_reads_memories_but_teacher_only_notes_and_is_logged(schools, guardian):
    """The guardian lists and reads alice's memories, never a teacher-only note, and each read is
    an entry of her access log, surface api."""
    alice, teacher = schools["alice"], schools["teacher_a"]
    shown = teacher_note_create(teacher=teacher, student_id=alice.pk, title="Reads well above her age", content="x")
    hidden = teacher_note_create(
        teacher=teacher,
        student_id=alice.pk,
        title="Worried about things at home",
        content="y",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    client = client_for(guardian)
    listed = client.get(f"/api/v1/memories/?student={alice.pk}")
    assert listed.status_code == 200
    assert [m["id"] for m in listed.json()["results"]] == [shown.pk]
    assert client.get(f"/api/v1/memories/{shown.pk}/").status_code == 200
    assert client.get(f"/api/v1/memories/{hidden.pk}/").status_code == 404
    assert client.get(f"/api/v1/students/{alice.pk}/skills/").status_code == 200
    assert client.get(f"/api/v1/quizzes/?student={alice.pk}").status_code == 200
    usage = client.get("/api/v1/usage/")
    assert [s["username"] for s in usage.json()["students"]] == ["alice"]
    entries = AccessEntry.objects.filter(student=alice, actor=guardian)
    assert set(entries.values_list("surface", flat=True)) == {"api"}
    assert set(entries.values_list("kind", flat=True)) == {"memories", "skills"}
    assert [shown.pk] in list(entries.filter(kind="memories").values_list("record_ids", flat=True))


def test_an_ended_link_is_404_at_once(schools, guardian):
    """Once the administrator unlinks the guardian, every read of alice is a 404; the link is
    kept, inactive, and linking again restores it (200)."""
    alice = schools["alice"]
    client = client_for(guardian)
    assert client.get(f"/api/v1/students/{alice.pk}/export/").status_code == 200
    admin = client_for(schools["admin_a"])
    assert admin.delete(f"/api/v1/students/{alice.pk}/guardians/{guardian.pk}/").status_code == 204
    for url in (
        f"/api/v1/students/{alice.pk}/export/",
        f"/api/v1/memories/?student={alice.pk}",
        f"/api/v1/students/{alice.pk}/skills/",
        f"/api/v1/usage/?student={alice.pk}",
    ):
        assert client.get(url).status_code == 404, url
    links = admin.get(f"/api/v1/students/{alice.pk}/guardians/").json()
    assert [(link["guardian"], link["active"]) for link in links] == [(guardian.pk, False)]
    again = admin.post(f"/api/v1/students/{alice.pk}/guardians/", {"guardian": guardian.pk}, format="json")
    assert again.status_code == 200 and again.json()["active"] is True
    assert client.get(f"/api/v1/students/{alice.pk}/skills/").status_code == 200
