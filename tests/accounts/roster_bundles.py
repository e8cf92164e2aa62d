"""Small OneRoster 1.1 CSV bundles written by the tests (the columns of the 1.1 spec)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path

FIXTURES = Path(__file__).parent / "roster_fixtures"

COLUMNS = {
    "orgs": ["sourcedId", "status", "dateLastModified", "name", "type", "identifier", "parentSourcedId"],
    "users": [
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
        "middleName",
        "identifier",
        "email",
        "sms",
        "phone",
        "agentSourcedIds",
        "grades",
        "password",
    ],
    "classes": [
        "sourcedId",
        "status",
        "dateLastModified",
        "title",
        "grades",
        "courseSourcedId",
        "classCode",
        "classType",
        "location",
        "schoolSourcedId",
        "termSourcedIds",
        "subjects",
        "subjectCodes",
        "periods",
    ],
    "enrollments": [
        "sourcedId",
        "status",
        "dateLastModified",
        "classSourcedId",
        "schoolSourcedId",
        "userSourcedId",
        "role",
        "primary",
        "beginDate",
        "endDate",
    ],
}


def write_bundle(folder: Path, files: Mapping[str, Iterable[dict[str, str]]], *, mode: str = "bulk") -> Path:
    """A 1.1 bundle in `folder`: a manifest listing `files` in `mode` (the others absent), and
    each file with the spec's columns (the values not given empty)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "manifest.csv", "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["propertyName", "value"])
        writer.writerow(["manifest.version", "1.0"])
        writer.writerow(["oneroster.version", "1.1"])
        for name in COLUMNS:
            writer.writerow([f"file.{name}", mode if name in files else "absent"])
    for name, rows in files.items():
        with open(folder / f"{name}.csv", "w", newline="", encoding="utf-8") as out:
            dict_writer = csv.DictWriter(out, COLUMNS[name], restval="")
            dict_writer.writeheader()
            dict_writer.writerows(rows)
    return folder


def district(
    *, students: int = 60, moved: dict[str, str] | None = None, left: Iterable[str] = ()
) -> dict[str, list[dict[str, str]]]:
    """Two schools of a district, four teachers, four classes (k2 with two teachers: t2 primary
    and t1) and `students` students spread over the classes in turn. `moved` puts a student in
    another class; `left` students are not in the files at all."""
    moved, left = moved or {}, set(left)
    orgs = [
        {"sourcedId": "d1", "name": "District", "type": "district"},
        {"sourcedId": "s1", "name": "School one", "type": "school", "parentSourcedId": "d1"},
        {"sourcedId": "s2", "name": "School two", "type": "school", "parentSourcedId": "d1"},
    ]
    school_of = {"k1": "s1", "k2": "s1", "k3": "s2", "k4": "s2"}
    teachers = {"t1": "s1", "t2": "s1", "t3": "s2", "t4": "s2"}
    users = [
        {
            "sourcedId": t,
            "enabledUser": "true",
            "orgSourcedIds": s,
            "role": "teacher",
            "username": f"teacher-{t}",
            "givenName": "Teacher",
            "familyName": t.upper(),
        }
        for t, s in teachers.items()
    ]
    classes = [{"sourcedId": k, "title": f"Class {k}", "schoolSourcedId": s} for k, s in school_of.items()]
    enrollments = [
        {
            "sourcedId": f"e-{t}-{k}",
            "classSourcedId": k,
            "schoolSourcedId": school_of[k],
            "userSourcedId": t,
            "role": "teacher",
            "primary": "true" if primary else "false",
        }
        for t, k, primary in (
            ("t1", "k1", True),
            ("t2", "k2", True),
            ("t1", "k2", False),
            ("t3", "k3", True),
            ("t4", "k4", True),
        )
    ]
    for i in range(students):
        sid = f"st{i}"
        if sid in left:
            continue
        k = moved.get(sid, f"k{i % 4 + 1}")
        users.append(
            {
                "sourcedId": sid,
                "enabledUser": "true",
                "orgSourcedIds": school_of[k],
                "role": "student",
                "username": f"student-{i}",
                "givenName": "Student",
                "familyName": str(i),
            }
        )
        enrollments.append(
            {
                "sourcedId": f"e-{sid}-{k}",
                "classSourcedId": k,
                "schoolSourcedId": school_of[k],
                "userSourcedId": sid,
                "role": "student",
                "primary": "false",
            }
        )
    return {"orgs": orgs, "users": users, "classes": classes, "enrollments": enrollments}
