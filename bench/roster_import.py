"""A district's OneRoster bundle imported, then imported again (docs/roster.md).

    DATABASE_URL=postgres://... .venv/bin/python bench/roster_import.py [--students 5000]
        [--teachers 300] [--classes 250] [--schools 10] [--smoke] [--json out.json]

Migrates the configured database, writes a OneRoster 1.1 bulk bundle (a zip) of one district:
`--schools` schools, `--teachers` teachers, `--classes` classes (each with a primary teacher,
every fifth with a second one), `--students` students in four classes each; imports it with
`accounts.roster.apply.roster_import` (what `manage.py roster_import` runs), then imports it
again (every row unchanged). Prints the time of each, the rows, and the process's resident
memory (VmRSS before, VmHWM peak after). Removes what it imported at the end. `--smoke`: 200
students, 20 teachers, 10 classes, 2 schools, to check that it runs.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from accounts.models import Classroom, Enrollment, School, TeacherEnrollment, User  # noqa: E402
from accounts.roster.apply import roster_import  # noqa: E402
from bench.machine import cores, cpu_model, load, process_mb, ram_gb  # noqa: E402

PREFIX = "bench-roster-"


def _csv(columns: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue().encode()


def bundle_write(path: Path, *, students: int, teachers: int, classes: int, schools: int) -> int:
    """The bundle as a zip at `path`; returns its rows."""
    p = PREFIX
    orgs = [[f"{p}d", "", "", "Bench district", "district", "", ""]]
    orgs += [[f"{p}s{i}", "", "", f"Bench school {i}", "school", "", f"{p}d"] for i in range(schools)]
    users = [
        [f"{p}t{i}", "", "", "true", f"{p}s{i % schools}", "teacher", f"{p}t{i}", "", "Teacher", str(i)]
        for i in range(teachers)
    ]
    users += [
        [f"{p}st{i}", "", "", "true", f"{p}s{i % schools}", "student", f"{p}st{i}", "", "Student", str(i)]
        for i in range(students)
    ]
    klasses = [[f"{p}k{i}", "", "", f"Class {i}", f"{p}s{i % schools}"] for i in range(classes)]
    enrollments = [
        [
            f"{p}e-t{i % teachers}-k{i}",
            "",
            "",
            f"{p}k{i}",
            f"{p}s{i % schools}",
            f"{p}t{i % teachers}",
            "teacher",
            "true",
        ]
        for i in range(classes)
    ]
    enrollments += [
        [
            f"{p}e-t{(classes + i) % teachers}-k{i}",
            "",
            "",
            f"{p}k{i}",
            f"{p}s{i % schools}",
            f"{p}t{(classes + i) % teachers}",
            "teacher",
            "false",
        ]
        for i in range(0, classes, 5)
        if (classes + i) % teachers != i % teachers
    ]
    for i in range(students):
        for j in range(4):
            k = (i + j * 7) % classes
            enrollments.append(
                [f"{p}e-st{i}-k{k}", "", "", f"{p}k{k}", f"{p}s{k % schools}", f"{p}st{i}", "student", "false"]
            )
    files = {
        "manifest.csv": _csv(
            ["propertyName", "value"],
            [["manifest.version", "1.0"], ["oneroster.version", "1.1"]]
            + [[f"file.{name}", "bulk"] for name in ("orgs", "users", "classes", "enrollments")],
        ),
        "orgs.csv": _csv(
            ["sourcedId", "status", "dateLastModified", "name", "type", "identifier", "parentSourcedId"], orgs
        ),
        "users.csv": _csv(
            [
                "sourcedId",
                "status",
                "dateLastModified",
                "enabledUser",
                "orgSourcedIds",
                "role",
                "username",
                "userIds",
                "givenName",
                "familyName",
            ],
            users,
        ),
        "classes.csv": _csv(["sourcedId", "status", "dateLastModified", "title", "schoolSourcedId"], klasses),
        "enrollments.csv": _csv(
            [
                "sourcedId",
                "status",
                "dateLastModified",
                "classSourcedId",
                "schoolSourcedId",
                "userSourcedId",
                "role",
                "primary",
            ],
            list({row[0]: row for row in enrollments}.values()),
        ),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return len(orgs) + len(users) + len(klasses) + len({row[0] for row in enrollments})


def cleanup() -> None:
    like = {"external_id__startswith": PREFIX}
    Enrollment.objects.filter(**like).delete()
    TeacherEnrollment.objects.filter(**like).delete()
    Classroom.objects.filter(**like).delete()
    User.objects.filter(**like).delete()
    School.objects.filter(**like, kind=School.Kind.SCHOOL).delete()
    School.objects.filter(**like).delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=5000)
    parser.add_argument("--teachers", type=int, default=300)
    parser.add_argument("--classes", type=int, default=250)
    parser.add_argument("--schools", type=int, default=10)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        args.students, args.teachers, args.classes, args.schools = 200, 20, 10, 2
    call_command("migrate", verbosity=0)
    cleanup()
    result: dict[str, object] = {
        "database": connection.vendor,
        "machine": {"cpu": cpu_model(), "cores": cores(), "ram_gb": ram_gb(), "load_1m": load()},
        "size": {k: getattr(args, k) for k in ("students", "teachers", "classes", "schools")},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bundle.zip"
        result["rows"] = bundle_write(
            path, students=args.students, teachers=args.teachers, classes=args.classes, schools=args.schools
        )
        result["zip_bytes"] = path.stat().st_size
        result["rss_before_mb"] = process_mb(os.getpid())["rss"]
        try:
            for run in ("import", "reimport"):
                started = time.perf_counter()
                report = roster_import(path)
                result[f"{run}_seconds"] = round(time.perf_counter() - started, 2)
                result[f"{run}_counts"] = report.counts
                if report.errors:
                    raise SystemExit(f"rows rejected: {report.errors[:5]}")
            changed = sum(c["created"] + c["updated"] + c["deactivated"] for c in report.counts.values())
            if changed:
                raise SystemExit(f"the re-import changed {changed} rows: {report.counts}")
        finally:
            cleanup()
    result["peak_rss_mb"] = process_mb(os.getpid())["peak"]
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
