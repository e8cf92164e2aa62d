"""Roster imports over the API: staff and school administrators upload a bundle, a real Celery
worker imports it, and the report is read back; who may do what (docs/roster.md)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.models import RosterImport, School, User
from accounts.roster.imports import roster_import_run
from tests.accounts.roster_bundles import district, write_bundle
from tests.conftest import client_for, make_user, wait_for

URL = "/api/v1/roster/imports/"


def bundle_zip(tmp_path: Path, **kwargs: Any) -> SimpleUploadedFile:
    folder = write_bundle(tmp_path / "bundle", district(**kwargs))
    target = tmp_path / "bundle.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
    return SimpleUploadedFile("bundle.zip", target.read_bytes(), content_type="application/zip")


def upload(user: User, upload: SimpleUploadedFile, query: str = "") -> Any:
    return client_for(user).post(URL + query, {"file": upload}, format="multipart")


@pytest.mark.worker
def test_staff_and_an_administrator_import_through_a_worker(worker: Any, tmp_path: Path) -> None:
    """Staff upload a district's bundle: 202 queued, then a real worker imports it and the
    report has the command's figures. A dry run writes nothing. A school administrator's import
    of the same district rejects the other school's rows, with a reason."""
    staff = make_user("staff", User.Role.STAFF, is_staff=True)
    dry = upload(staff, bundle_zip(tmp_path / "dry", students=8), "?dry_run=true")
    assert dry.status_code == 202 and dry.json()["status"] == "queued"
    report = wait_for(lambda: _finished(staff, dry.json()["id"]))
    assert report["dry_run"] and report["counts"]["users"]["created"] == 12
    assert not User.objects.filter(external_id__isnull=False).exists()

    response = upload(staff, bundle_zip(tmp_path / "real", students=8))
    report = wait_for(lambda: _finished(staff, response.json()["id"]))
    assert report["status"] == "done" and report["errors"] == []
    assert report["counts"]["users"]["created"] == 12
    assert User.objects.filter(external_id__isnull=False).count() == 12

    admin = make_user("admin-s1", User.Role.ADMINISTRATOR, school=School.objects.get(external_id="s1"))
    mine = upload(admin, bundle_zip(tmp_path / "admin", students=8))
    report = wait_for(lambda: _finished(admin, mine.json()["id"]))
    assert report["counts"]["users"]["unchanged"] == 6  # two teachers and four students of school one
    assert {"file": "orgs.csv", "line": 4, "sourced_id": "s2", "reason": "org s2 is not one of your schools"} in (
        report["errors"]
    )


def _finished(user: User, import_id: int) -> dict[str, Any] | None:
    body: dict[str, Any] = client_for(user).get(f"{URL}{import_id}/").json()
    return body if body["status"] in ("done", "failed") else None


@pytest.mark.django_db
def test_an_unusable_bundle_fails_with_its_reason_and_a_second_run_does_nothing(tmp_path: Path) -> None:
    """A file that is not a zip: the import fails naming why; running the task again (a second
    delivery) changes nothing."""
    staff = make_user("staff", User.Role.STAFF, is_staff=True)
    response = upload(staff, SimpleUploadedFile("bundle.zip", b"not a zip"))
    assert response.status_code == 202
    import_id = response.json()["id"]
    assert roster_import_run(import_id=import_id) == "failed"
    assert roster_import_run(import_id=import_id) == "skipped"
    body = client_for(staff).get(f"{URL}{import_id}/").json()
    assert body["status"] == "failed" and "the zip cannot be read" in body["detail"]


@pytest.mark.django_db
def test_who_may_import_and_read(tmp_path: Path, settings: Any) -> None:
    """A teacher or a student may not upload (403); a larger bundle than ROSTER_MAX_BYTES is a
    400; another administrator, and a teacher, get 404 on someone's import."""
    school = School.objects.create(name="One", external_id="one")
    teacher = make_user("teacher", User.Role.TEACHER, school=school)
    student = make_user("student", school=school)
    admin = make_user("admin", User.Role.ADMINISTRATOR, school=school)
    other = make_user("other-admin", User.Role.ADMINISTRATOR, school=School.objects.create(name="Two"))
    assert upload(teacher, bundle_zip(tmp_path / "a", students=4)).status_code == 403
    assert upload(student, bundle_zip(tmp_path / "b", students=4)).status_code == 403
    response = upload(admin, bundle_zip(tmp_path / "c", students=4))
    assert response.status_code == 202
    record = RosterImport.objects.get(pk=response.json()["id"])
    assert (record.created_by, record.school, record.status) == (admin, school, RosterImport.Status.QUEUED)
    for outsider in (other, teacher):
        assert client_for(outsider).get(f"{URL}{record.pk}/").status_code == 404
    assert client_for(admin).get(f"{URL}{record.pk}/").status_code == 200
    settings.ROSTER_MAX_BYTES = 10
    too_large = upload(admin, bundle_zip(tmp_path / "d", students=4))
    assert too_large.status_code == 400 and too_large.json()["error"]["code"] == "file_too_large"
