"""The cost per request of the access log (audit): a teacher's memory list read with and without it.

    DATABASE_URL=postgres://... .venv/bin/python bench/access_log.py [--students 25]
        [--memories 40] [--rounds 200] [--smoke] [--json out.json]

Migrates the configured database and makes one class: a teacher and `--students` students with
`--memories` memories each (bulk-created). Then, in rounds, the teacher lists their students'
memories (`GET /api/v1/memories/?page_size=100`: a page of 100 memories names about 100 / `--memories`
students, one entry each in one INSERT) and one student's (`?student=`: one entry), with token
authentication, through Django's whole request stack in this process: each with the access log
and with `access_record_rows` of memory.apis replaced by a function that records nothing,
alternating which goes first, so that the machine's drift falls on both. Prints the median and
90th percentile of each, their ratio, the queries of each request, and the bytes an entry takes
in the table with its indexes. Removes what it made at the end. `--smoke`: 5 students, 10 memories, 10 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from accounts.models import Classroom, Enrollment, School, TeacherEnrollment, User  # noqa: E402
from audit.models import AccessEntry  # noqa: E402
from bench.machine import cores, cpu_model, load, ram_gb  # noqa: E402
from memory import apis as memory_apis  # noqa: E402
from memory.models import AIMemory  # noqa: E402

PREFIX = "bench-access-"
# A page of the class's memories (several students), and a page of one student's.
PAGES = {"class": "/api/v1/memories/?page_size=100", "one_student": "/api/v1/memories/?student={student}&page_size=100"}


def seed(*, students: int, memories: int) -> tuple[User, list[int]]:
    """A school, a class, its teacher and students with their memories; the teacher and the students' ids."""
    school = School.objects.create(name=f"{PREFIX}school", external_id=f"{PREFIX}school")
    teacher = User.objects.create_user(f"{PREFIX}teacher", role=User.Role.TEACHER, school=school)
    classroom = Classroom.objects.create(name=f"{PREFIX}class", school=school, external_id=f"{PREFIX}class")
    TeacherEnrollment.objects.create(classroom=classroom, teacher=teacher, primary=True)
    people = User.objects.bulk_create(
        User(username=f"{PREFIX}s{i}", role=User.Role.STUDENT, school=school) for i in range(students)
    )
    Enrollment.objects.bulk_create(Enrollment(classroom=classroom, student=student) for student in people)
    now = timezone.now()
    AIMemory.objects.bulk_create(
        AIMemory(
            student=student,
            kind=AIMemory.Kind.TEACHER_NOTE,
            source=AIMemory.Source.TEACHER,
            author=teacher,
            title=f"Note {j} on {student.username}",
            content="Works well with drawings; needs a short break after twenty minutes of reading.",
            created_at=now,
        )
        for student in people
        for j in range(memories)
    )
    return teacher, [student.pk for student in people]


def cleanup() -> None:
    students = User.objects.filter(username__startswith=PREFIX)
    AccessEntry._base_manager.filter(student__in=students).delete()
    AIMemory.objects.filter(student__in=students).delete()
    Enrollment.objects.filter(student__in=students).delete()
    TeacherEnrollment.objects.filter(classroom__external_id__startswith=PREFIX).delete()
    Classroom.objects.filter(external_id__startswith=PREFIX).delete()
    Token.objects.filter(user__in=students).delete()
    students.delete()
    School.objects.filter(external_id__startswith=PREFIX).delete()


def timed(client: Client, url: str, headers: dict[str, str]) -> tuple[float, int]:
    """One request: its milliseconds and queries."""
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        resp = client.get(url, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
    if resp.status_code != 200:
        raise SystemExit(f"{url}: {resp.status_code} {resp.content[:300]!r}")
    return elapsed, len(queries.captured_queries)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=25)
    parser.add_argument("--memories", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        args.students, args.memories, args.rounds = 5, 10, 10
    call_command("migrate", verbosity=0)
    cleanup()
    recording = memory_apis.access_record_rows

    def not_recording(**kwargs: Any) -> list[AccessEntry]:
        return []

    result: dict[str, Any] = {
        "database": connection.vendor,
        "machine": {"cpu": cpu_model(), "cores": cores(), "ram_gb": ram_gb(), "load_1m": load()},
        "size": {"students": args.students, "memories": args.memories, "rounds": args.rounds},
    }
    try:
        teacher, students = seed(students=args.students, memories=args.memories)
        token, _ = Token.objects.get_or_create(user=teacher)
        client, headers = Client(), {"Authorization": f"Token {token.key}", "Host": "localhost"}
        urls = {page: url.format(student=students[0]) for page, url in PAGES.items()}
        times: dict[tuple[str, str], list[float]] = {(page, case): [] for page in urls for case in ("with", "without")}
        queries: dict[tuple[str, str], int] = {}
        for url in urls.values():
            for _warm in range(3):
                timed(client, url, headers)
        for round_ in range(args.rounds):
            order = ("with", "without") if round_ % 2 == 0 else ("without", "with")
            for page, url in urls.items():
                for case in order:
                    memory_apis.access_record_rows = recording if case == "with" else not_recording
                    elapsed, count = timed(client, url, headers)
                    times[page, case].append(elapsed)
                    queries[page, case] = count
        memory_apis.access_record_rows = recording
        entries = AccessEntry.objects.filter(student_id__in=students).count()
        size = None
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_total_relation_size('audit_accessentry')")
                size = cursor.fetchone()[0]
        for (page, case), values in times.items():
            result.setdefault(page, {})[case] = {
                "p50_ms": round(statistics.median(values), 2),
                "p90_ms": round(_percentile(values, 0.9), 2),
                "queries": queries[page, case],
            }
        for page in urls:
            result[page]["ratio_p50"] = round(result[page]["with"]["p50_ms"] / result[page]["without"]["p50_ms"], 3)
        result["entries"] = entries
        # The whole table's size over its rows: only this bench's rows if the table was empty.
        total = AccessEntry.objects.count()
        result["bytes_per_entry"] = round(size / total) if size and total else None
    finally:
        memory_apis.access_record_rows = recording
        cleanup()
    print(json.dumps(result, indent=2))
    for page in PAGES:
        with_, without = result[page]["with"], result[page]["without"]
        print(
            f"{page}: with the access log p50 {with_['p50_ms']} ms ({with_['queries']} queries), "
            f"without {without['p50_ms']} ms ({without['queries']} queries): x{result[page]['ratio_p50']}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
