"""Rebuild the full-text index of students' memories in each student's current language.

After a language change whose re-index task was lost (broker down), or after a change of the
text analysis (stemmer, stop words): `python manage.py reindex --student 42`, or every student
without `--student`. Idempotent; memories stay searchable meanwhile.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from memory.models import AIMemory
from memory.services.lifecycle import student_memories_reindex


class Command(BaseCommand):
    help = "Re-index students' memories in their current language (all students, or --student ID)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--student", type=int, action="append", help="a student id (repeatable)")
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["student"]:
            ids = list(options["student"])
            known = set(User.objects.filter(pk__in=ids, role=User.Role.STUDENT).values_list("pk", flat=True))
            if missing := [pk for pk in ids if pk not in known]:
                raise CommandError(f"no student with id {', '.join(map(str, missing))}")
        else:
            ids = list(AIMemory.objects.active().order_by("student_id").values_list("student_id", flat=True).distinct())
        total = 0
        for student_id in ids:
            count = student_memories_reindex(student_id=student_id, batch_size=options["batch_size"])
            total += count
            self.stdout.write(f"student {student_id}: {count} memories re-indexed")
        self.stdout.write(f"{total} memories re-indexed for {len(ids)} students")
