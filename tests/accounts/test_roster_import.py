"""The OneRoster import end to end: a district's bundle gives each teacher exactly their
students over the API, a second import changes nothing, and a re-import moves a student and
deactivates one who left (docs/roster.md)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from accounts.models import User
from memory.models import AIMemory
from memory.services.writing import memory_create
from tests.accounts.roster_bundles import district, write_bundle
from tests.conftest import client_for, make_user

pytestmark = pytest.mark.django_db(transaction=False)

OUTCOMES = ("created", "updated", "deactivated", "unchanged", "rejected")


def run(path: Path, *args: str) -> dict[str, dict[str, int]]:
    """`manage.py roster_import PATH`; the counts it prints, per entity."""
    out = io.StringIO()
    call_command("roster_import", str(path), *args, stdout=out)
    counts = {}
    for line in out.getvalue().splitlines():
        parts = line.split()
        if parts and parts[0] in ("orgs", "users", "classes", "enrollments") and len(parts) == 6:
            counts[parts[0]] = dict(zip(OUTCOMES, map(int, parts[1:]), strict=True))
    return counts


def visible(user: User) -> set[str]:
    response = client_for(user).get("/api/v1/students/", {"page_size": 100})
    assert response.status_code == 200
    return {row["username"] for row in response.json()["results"]}


def expected(teacher: str, students: int = 60) -> set[str]:
    classes = {"t1": (1, 2), "t2": (2,), "t3": (3,), "t4": (4,)}[teacher]
    return {f"student-{i}" for i in range(students) if i % 4 + 1 in classes}


def test_district_bundle_gives_each_teacher_their_students_and_reimport_changes_nothing(tmp_path: Path) -> None:
    """Two schools, four teachers, four classes (k2 taught by t2 and t1), sixty students: each
    teacher sees exactly the students of their classes; importing the same bundle again counts
    every row unchanged."""
    bundle = write_bundle(tmp_path / "b", district())
    first = run(bundle)
    assert first["orgs"]["created"] == 3
    assert first["users"]["created"] == 64
    assert first["classes"]["created"] == 4
    assert first["enrollments"]["created"] == 65
    assert sum(counts["rejected"] for counts in first.values()) == 0
    for sid in ("t1", "t2", "t3", "t4"):
        teacher = User.objects.get(external_id=sid)
        assert teacher.role == User.Role.TEACHER and teacher.school is not None
        assert visible(teacher) == expected(sid), sid
    second = run(bundle)
    for entity, counts in second.items():
        rows = {"orgs": 3, "users": 64, "classes": 4, "enrollments": 65}[entity]
        assert counts == {**dict.fromkeys(OUTCOMES, 0), "unchanged": rows}, entity


def test_reimport_moves_a_student_and_deactivates_one_who_left(tmp_path: Path) -> None:
    """A student who changed class is seen by the new class's teacher only (the old one gets
    404); one absent from the bulk files is deactivated: their token is refused, they cannot
    sign in, and their memories stay, in the staff's export too."""
    run(write_bundle(tmp_path / "first", district()))
    mover = User.objects.get(external_id="st0")  # in k1 (t1)
    leaver = User.objects.get(external_id="st1")  # in k2 (t2, t1)
    leaver.set_password("pw-leaver")
    leaver.save()
    token = Token.objects.create(user=leaver).key
    memory_create(title="Likes fractions", content="Draws fraction bars first.", student=leaver)
    t1, t3 = User.objects.get(external_id="t1"), User.objects.get(external_id="t3")
    assert client_for(t1).get(f"/api/v1/students/{mover.pk}/").status_code == 200

    counts = run(write_bundle(tmp_path / "second", district(moved={"st0": "k3"}, left=["st1"])))

    assert counts["users"] == {"created": 0, "updated": 1, "deactivated": 1, "unchanged": 62, "rejected": 0}
    assert counts["enrollments"] == {"created": 1, "updated": 0, "deactivated": 2, "unchanged": 63, "rejected": 0}
    assert client_for(t1).get(f"/api/v1/students/{mover.pk}/").status_code == 404
    assert client_for(t3).get(f"/api/v1/students/{mover.pk}/").status_code == 200
    assert "student-0" in visible(t3) and "student-0" not in visible(t1)
    assert client_for(t1).get(f"/api/v1/students/{leaver.pk}/").status_code == 404
    assert "student-1" not in visible(User.objects.get(external_id="t2"))

    gone = client_for(None)
    gone.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert gone.get("/api/v1/me/").status_code == 401
    signin = client_for(None).post(
        "/api/v1/auth/token/", {"username": leaver.username, "password": "pw-leaver"}, format="json"
    )
    assert signin.status_code == 400
    leaver.refresh_from_db()
    assert not leaver.is_active
    assert AIMemory.objects.filter(student=leaver, title="Likes fractions").exists()
    root = make_user("root", User.Role.STAFF, is_staff=True, is_superuser=True)
    export = client_for(root).get(f"/api/v1/students/{leaver.pk}/export/")
    assert export.status_code == 200
    content = b"".join(export.streaming_content)  # type: ignore[attr-defined]
    assert "Likes fractions" in content.decode()


def test_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    """--dry-run prints the same counts as the import and leaves the database as it was."""
    counts = run(write_bundle(tmp_path / "b", district(students=8)), "--dry-run")
    assert counts["users"]["created"] == 12
    assert not User.objects.filter(external_id__isnull=False).exists()


def test_progress_is_printed_on_a_terminal_only(tmp_path: Path, capsys: Any) -> None:
    """Run with its output to a file (not a terminal), the command prints no progress line."""
    run(write_bundle(tmp_path / "b", district(students=4)))
    assert "rows read" not in capsys.readouterr().err
