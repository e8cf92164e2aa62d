"""Guardians' erasure requests (docs/privacy.md#guardians): a linked guardian files one, the
child's school administrator approves it (the child is erased, nothing of them left) or refuses
it with a reason; the request keeps who, when, the decision and why, and the guardian sees its
status. The matrix of who gets 404 is tests/accounts/test_tenancy.py."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.models import GuardianLink, User
from privacy.models import Erasure, ErasureRequest
from tests.conftest import client_for, make_user
from tests.privacy.conftest import Rich
from tests.privacy.test_erasure import needles, rows_containing, rows_of


@pytest.fixture
def guardian(rich: Rich, school: dict[str, Any]) -> User:
    """The rich student's guardian; the student is of school A (the administrator's)."""
    rich.student.school = school["school"]
    rich.student.save(update_fields=["school"])
    person = make_user("guardian_of_rich", User.Role.GUARDIAN, school=school["school"])
    GuardianLink.objects.create(guardian=person, student=rich.student)
    return person


@pytest.fixture
def admin(school: dict[str, Any]) -> User:
    return make_user("admin_of_a", User.Role.ADMINISTRATOR, school=school["school"])


def file(guardian: User, student_id: int, reason: str = "We are moving abroad") -> Any:
    return client_for(guardian).post(
        f"/api/v1/students/{student_id}/erasure-requests/", {"reason": reason}, format="json"
    )


def test_an_approved_request_leaves_nothing_of_the_child(rich, guardian, admin, django_capture_on_commit_callbacks):
    """The guardian files; the administrator lists and approves: the child is erased as by a
    legal erasure, the erasure record names the request, and the guardian sees it approved."""
    student_id = rich.student.pk
    filed = file(guardian, student_id)
    assert filed.status_code == 201, filed.content
    request_id = filed.json()["id"]
    assert filed.json()["status"] == "pending" and filed.json()["requested_by"] == guardian.pk
    listed = client_for(admin).get("/api/v1/erasure-requests/").json()["results"]
    assert [r["id"] for r in listed] == [request_id]

    with django_capture_on_commit_callbacks(execute=True):
        resp = client_for(admin).post(f"/api/v1/erasure-requests/{request_id}/approve/")
    assert resp.status_code == 200, resp.content
    assert rows_containing(needles(rich)) == {}
    assert rows_of(student_id) == {}
    erasure = Erasure.objects.get()
    assert erasure.via == "guardian_request" and erasure.erased_by == admin
    assert str(request_id) in erasure.reason
    row = ErasureRequest.objects.get()
    assert (row.status, row.student_id, row.decided_by, row.erasure) == ("approved", None, admin, erasure)
    assert row.decided_at is not None and row.requested_by == guardian
    mine = client_for(guardian).get("/api/v1/erasure-requests/").json()["results"]
    assert [(r["status"], r["erasure_reference"]) for r in mine] == [("approved", erasure.reference)]
    again = client_for(admin).post(f"/api/v1/erasure-requests/{request_id}/approve/")
    assert again.status_code == 409


def test_a_refusal_needs_a_reason_and_erases_nothing(rich, guardian, admin):
    """A refusal without a reason is a 400; with one, the request is refused, the child stays,
    and the guardian reads the decision and its reason."""
    request_id = file(guardian, rich.student.pk).json()["id"]
    url = f"/api/v1/erasure-requests/{request_id}/refuse/"
    for body in ({}, {"reason": "  "}):
        assert client_for(admin).post(url, body, format="json").status_code == 400
    resp = client_for(admin).post(url, {"reason": "An open safeguarding case"}, format="json")
    assert resp.status_code == 200, resp.content
    assert User.objects.filter(pk=rich.student.pk).exists() and not Erasure.objects.exists()
    mine = client_for(guardian).get("/api/v1/erasure-requests/").json()["results"]
    assert [(r["status"], r["decision_reason"], r["decided_by"]) for r in mine] == [
        ("refused", "An open safeguarding case", admin.pk)
    ]
    # A new request may be filed once the last one is decided; two pending ones may not.
    assert file(guardian, rich.student.pk).status_code == 201
    assert file(guardian, rich.student.pk).status_code == 409


def test_who_may_file_and_decide(rich, guardian, admin, school):
    """Only a linked guardian files (no reason: 400; a teacher: 403; another guardian: 404); the
    guardian may not decide their own request (403); a teacher or another school's
    administrator does not see it (404); a teacher and a student may not list requests (403)."""
    assert file(guardian, rich.student.pk, reason=" ").status_code == 400
    assert file(school["teacher_a"], rich.student.pk).status_code == 403
    stranger = make_user("guardian_stranger", User.Role.GUARDIAN, school=school["school"])
    assert file(stranger, rich.student.pk).status_code == 404
    request_id = file(guardian, rich.student.pk).json()["id"]
    approve = f"/api/v1/erasure-requests/{request_id}/approve/"
    assert client_for(guardian).post(approve).status_code == 403
    other_admin = make_user(
        "admin_elsewhere", User.Role.ADMINISTRATOR, school=school["school"].__class__.objects.create(name="Elsewhere")
    )
    for who in (school["teacher_a"], other_admin, stranger):
        assert client_for(who).post(approve).status_code == 404
    for who in (school["teacher_a"], rich.student):
        assert client_for(who).get("/api/v1/erasure-requests/").status_code == 403
    assert client_for(stranger).get("/api/v1/erasure-requests/").json()["count"] == 0
    assert ErasureRequest.objects.get().status == "pending"
