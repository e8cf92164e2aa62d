"""The export and the erasure are scoped like the rest of the API, through the production server:
a teacher given admin access and privacy's permissions acts on their own class's students only."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from django.contrib.auth.models import Permission

from accounts.models import User
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from privacy.models import Erasure
from tests.conftest import headers, make_user

pytestmark = pytest.mark.worker


def with_privacy_permissions(user: User) -> User:
    """`user` with admin access and both of privacy's permissions (a fresh instance)."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    for codename in ("export_student", "erase_student"):
        user.user_permissions.add(Permission.objects.get(content_type__app_label="privacy", codename=codename))
    return User.objects.get(pk=user.pk)


def export(server: str, user: User, student: User) -> httpx2.Response:
    return httpx2.get(f"{server}/api/v1/students/{student.pk}/export/", headers=headers(user), timeout=30)


def erase(server: str, user: User, student: User) -> httpx2.Response:
    body = {"confirm": str(student.pk), "reason": "Request 12 of 4 December"}
    return httpx2.post(f"{server}/api/v1/students/{student.pk}/erase/", json=body, headers=headers(user), timeout=30)


def test_a_teacher_with_admin_access_and_the_permissions_stays_in_their_classes(server, school: dict[str, Any]):
    """teacher_a, given is_staff, privacy.export_student and privacy.erase_student, gets 404 on
    carol (teacher_b's class) for the export and the erasure, exactly as for `GET /students/{id}/`
    and a student that does not exist, and carol, her teacher-only note included, stays; on their
    own student the export is the full one and the erasure goes through. A staff account with the
    permission still exports carol."""
    teacher = with_privacy_permissions(school["teacher_a"])
    carol = school["carol"]
    note = teacher_note_create(
        teacher=school["teacher_b"],
        student_id=carol.pk,
        title="Carol's reading plan for the next two weeks",
        content="Carol reads slowly when tired.",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    assert httpx2.get(f"{server}/api/v1/students/{carol.pk}/", headers=headers(teacher)).status_code == 404

    for resp in (export(server, teacher, carol), erase(server, teacher, carol)):
        assert resp.status_code == 404, resp.text
        assert resp.json()["error"]["code"] == "not_found"
        assert "Carol" not in resp.text
    assert User.objects.filter(pk=carol.pk).exists() and AIMemory.objects.filter(pk=note.pk).exists()
    assert not Erasure.objects.exists()

    own = export(server, teacher, school["alice"])
    assert own.status_code == 200 and own.json()["student"]["id"] == school["alice"].pk
    assert "safety_flags" in own.json()
    erased = erase(server, teacher, school["bob"])
    assert erased.status_code == 200, erased.text
    assert not User.objects.filter(pk=school["bob"].pk).exists()

    staff = with_privacy_permissions(make_user("safety_office", User.Role.STAFF))
    whole = export(server, staff, carol)
    assert whole.status_code == 200 and note.pk in {m["id"] for m in whole.json()["memories"]}
