"""OneRoster bundles of both versions, bulk and delta, and bad input: what is imported, what is
rejected with its reason, and what makes a bundle unusable (then nothing is written)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from accounts.models import Classroom, Enrollment, GuardianLink, School, TeacherEnrollment, User
from accounts.roster.apply import roster_import
from accounts.roster.bundle import BundleError
from accounts.roster.report import Report
from tests.accounts.roster_bundles import FIXTURES, district, write_bundle
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def reasons(report: Report) -> dict[str, str]:
    return {error["sourced_id"]: error["reason"] for error in report.errors}


def zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
    return target


def test_v11_bulk_imports_people_classes_and_enrolments() -> None:
    """1.1 bulk: orgs become a district and its schools (a department is rejected), people get
    their role and first org (a district administrator the district), an aide teaches without
    being primary, a disabled user is created inactive, a guardian is linked to the student their
    agentSourcedIds names (an enrolment of a guardian is rejected), courses.csv is accepted and
    not read."""
    report = roster_import(FIXTURES / "v11-bulk")
    assert "not read: courses" in report.notes[0]
    assert reasons(report) == {
        "dept1": "org type 'department' is not imported (only school and district)",
        "e9": "enrolment role guardian is not imported",
    }
    district_ = School.objects.get(external_id="d1")
    assert district_.kind == School.Kind.DISTRICT
    assert School.objects.get(external_id="s2").parent == district_
    admin = User.objects.get(external_id="adm1")
    assert (admin.role, admin.school) == (User.Role.ADMINISTRATOR, district_)
    assert User.objects.get(external_id="t2").school == School.objects.get(external_id="s2")
    assert not User.objects.get(external_id="st4").is_active
    aide = TeacherEnrollment.objects.get(external_id="e2")
    assert (aide.teacher.role, aide.primary) == (User.Role.TEACHER, False)
    assert TeacherEnrollment.objects.get(external_id="e1").primary
    assert set(Classroom.objects.get(external_id="k2").teachers.values_list("external_id", flat=True)) == {"t1", "t2"}
    assert report.counts["enrollments"]["created"] == 8
    guardian = User.objects.get(external_id="g1")
    assert guardian.role == User.Role.GUARDIAN
    assert list(
        GuardianLink.objects.filter(guardian=guardian, active=True).values_list("student__external_id", flat=True)
    ) == ["st1"]


def test_v11_delta_changes_only_what_it_lists() -> None:
    """1.1 delta: a renamed student is updated, a `tobedeleted` student is deactivated (not
    deleted), a `tobedeleted` enrolment becomes inactive, and everyone not listed is untouched."""
    roster_import(FIXTURES / "v11-bulk")
    report = roster_import(FIXTURES / "v11-delta")
    assert report.counts["users"] == {"created": 1, "updated": 1, "deactivated": 1, "unchanged": 0, "rejected": 0}
    assert report.counts["enrollments"] == {"created": 2, "updated": 0, "deactivated": 1, "unchanged": 0, "rejected": 0}
    assert User.objects.get(external_id="st1").first_name == "Samuel"
    assert not User.objects.get(external_id="st2").is_active
    assert User.objects.get(external_id="t1").is_active
    assert not Enrollment.objects.get(external_id="e3").active
    assert Enrollment.objects.get(external_id="e4").active  # not listed: untouched
    assert roster_import(FIXTURES / "v11-delta").counts["users"]["unchanged"] == 3


def test_v12_bulk_reads_roles_csv_and_preferred_names() -> None:
    """1.2 bulk (UTF-8 with a BOM): roles come from roles.csv (the primary one), the org from
    primaryOrgSourcedId or the role's org, the preferred given name wins, a parent is a guardian
    of the student their agentSourcedIds names."""
    report = roster_import(FIXTURES / "v12-bulk")
    assert reasons(report) == {}
    parent = User.objects.get(external_id="p1")
    assert parent.role == User.Role.GUARDIAN
    assert list(GuardianLink.objects.filter(guardian=parent).values_list("student__external_id", flat=True)) == ["st1"]
    assert School.objects.get(external_id="s2").name == "Südschule"
    teacher = User.objects.get(external_id="t1")
    assert (teacher.first_name, teacher.role, teacher.school) == (
        "Tom",
        User.Role.TEACHER,
        School.objects.get(external_id="s1"),
    )
    admin = User.objects.get(external_id="adm1")
    assert (admin.role, admin.school) == (User.Role.ADMINISTRATOR, School.objects.get(external_id="s1"))
    assert User.objects.get(external_id="st1").last_name == "Élève"
    assert Enrollment.objects.filter(active=True).count() == 2
    again = roster_import(FIXTURES / "v12-bulk")
    assert all(counts["created"] + counts["updated"] + counts["deactivated"] == 0 for counts in again.counts.values())


def test_v12_delta_disables_renames_and_rejects_bad_rows() -> None:
    """1.2 delta: `enabledUser=false` deactivates, a class is renamed in place, a new student is
    enrolled, a person listed without a row in roles.csv keeps their role and school and gets
    their new name; a date that does not parse and a class that does not exist are rejected rows."""
    roster_import(FIXTURES / "v12-bulk")
    report = roster_import(FIXTURES / "v12-delta")
    renamed = User.objects.get(external_id="st1")
    assert (renamed.first_name, renamed.role, renamed.school) == (
        "Zo",
        User.Role.STUDENT,
        School.objects.get(external_id="s1"),
    )
    assert not User.objects.get(external_id="st2").is_active
    assert Classroom.objects.get(external_id="k1").name == "Reading 3 (spring)"
    assert Enrollment.objects.get(external_id="e6").student.external_id == "st3"
    assert reasons(report) == {
        "e7": "dateLastModified 'not-a-date' is not a date and time",
        "e8": "class k9 is unknown",
    }
    assert [(e["file"], e["line"]) for e in report.errors] == [("enrollments.csv", 3), ("enrollments.csv", 4)]


def test_a_zip_imports_as_its_folder(tmp_path: Path) -> None:
    """The same bundle zipped gives the same counts as the folder."""
    report = roster_import(zipped(FIXTURES / "v11-bulk", tmp_path / "bundle.zip"))
    assert report.counts["users"]["created"] == 9  # the guardian g1 too


def test_repeated_sourced_id_keeps_the_first_row(tmp_path: Path) -> None:
    """A sourcedId listed twice: the second row is rejected and the first imported."""
    files = district(students=4)
    files["users"].append({**files["users"][-1], "username": "someone-else"})
    report = roster_import(write_bundle(tmp_path / "b", files))
    assert reasons(report) == {"st3": "sourcedId st3 is repeated (its first row is kept)"}
    assert User.objects.get(external_id="st3").username == "student-3"


def test_a_bulk_file_does_not_deactivate_its_rejected_rows(tmp_path: Path) -> None:
    """A person whose row is rejected in a later bulk file is not taken as absent: they stay
    active."""
    roster_import(write_bundle(tmp_path / "a", district(students=4)))
    files = district(students=4)
    files["users"][-1]["dateLastModified"] = "yesterday"
    report = roster_import(write_bundle(tmp_path / "b", files))
    assert report.counts["users"]["rejected"] == 1 and report.counts["users"]["deactivated"] == 0
    assert User.objects.get(external_id="st3").is_active


def test_an_administrator_imports_only_into_their_schools(tmp_path: Path) -> None:
    """A school administrator's import: rows of other schools are rejected with a reason, and a
    bulk file deactivates no one outside their school."""
    roster_import(write_bundle(tmp_path / "a", district(students=8)))
    admin = make_user("admin-s1", User.Role.ADMINISTRATOR, school=School.objects.get(external_id="s1"))
    files = district(students=8, left=["st2"])  # st2 is in k3, school two
    report = roster_import(write_bundle(tmp_path / "b", files), actor=admin)
    assert reasons(report)["s2"] == "org s2 is not one of your schools"
    assert reasons(report)["t3"] == "org s2 is not one of your schools"
    assert reasons(report)["e-st6-k3"] == "class k3 is not in one of your schools"
    assert User.objects.get(external_id="st2").is_active
    assert report.counts["users"]["deactivated"] == 0


def bad(path: Path, message: str) -> None:
    """The command refuses `path` naming the problem, and nothing is written."""
    with pytest.raises(CommandError, match=message):
        call_command("roster_import", str(path))
    assert not User.objects.filter(external_id__isnull=False).exists()
    assert not School.objects.filter(external_id__isnull=False).exists()


def test_unusable_bundles_change_nothing(tmp_path: Path) -> None:
    """No manifest, a listed file missing, a required column missing, an unreadable zip: each is
    refused with its reason, and nothing is written."""
    no_manifest = shutil.copytree(FIXTURES / "v11-bulk", tmp_path / "no-manifest")
    (no_manifest / "manifest.csv").unlink()
    bad(no_manifest, "manifest.csv is missing")
    no_file = shutil.copytree(FIXTURES / "v11-bulk", tmp_path / "no-file")
    (no_file / "classes.csv").unlink()
    bad(no_file, "lists classes.csv as bulk, and it is missing")
    no_column = shutil.copytree(FIXTURES / "v11-bulk", tmp_path / "no-column")
    text = (no_column / "enrollments.csv").read_text().replace("classSourcedId", "klass")
    (no_column / "enrollments.csv").write_text(text)
    bad(no_column, "enrollments.csv: required column.s. missing: classSourcedId")
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    bad(tmp_path / "broken.zip", "the zip cannot be read")


def test_latin1_is_refused_even_late_in_a_file(tmp_path: Path) -> None:
    """A file that is not UTF-8 makes the bundle unusable, even when the bad byte comes after
    rows already written: everything is rolled back."""
    folder = write_bundle(tmp_path / "b", district(students=4))
    with open(folder / "enrollments.csv", "ab") as out:
        out.write("e-x,,,k1,s1,st0,student,false,,,Zoë\n".encode("latin-1"))
    bad(folder, "enrollments.csv is not UTF-8 text")


def test_zip_bombs_and_large_bundles_are_refused(tmp_path: Path, settings: Any) -> None:
    """A member that expands more than 200 times, and a zip larger than ROSTER_MAX_BYTES, are
    refused before anything is read."""
    folder = write_bundle(tmp_path / "b", district(students=4))
    (folder / "demographics.csv").write_bytes(b"sourcedId\n" + b"0" * 5_000_000)
    bad(zipped(folder, tmp_path / "bomb.zip"), "would expand more than 200 times")
    settings.ROSTER_MAX_BYTES = 100
    bad(zipped(FIXTURES / "v11-bulk", tmp_path / "large.zip"), "larger than 100 bytes")


def test_bundle_error_is_raised_by_the_service(tmp_path: Path) -> None:
    """roster_import raises BundleError for a folder without a manifest."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(BundleError):
        roster_import(tmp_path / "empty")
