"""Merge near-duplicate memories now, for one student or all (memory.consolidation).

`python manage.py consolidate --student 42 --dry-run` lists the clusters and what would be
asked, without calling the model or writing; without `--dry-run` it merges, as the periodic
task does. Idempotent: a cluster is decided once.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from llm.gateway import LLMUnavailable
from memory.consolidation import CONSOLIDATED_KINDS, consolidate_student
from memory.models import AIMemory


class Command(BaseCommand):
    help = "Merge near-duplicate memories (all students, or --student ID); --dry-run shows the clusters."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--student", type=int, action="append", help="a student id (repeatable)")
        parser.add_argument("--dry-run", action="store_true", help="show the clusters; ask no model, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["student"]:
            ids = list(options["student"])
            known = set(User.objects.filter(pk__in=ids, role=User.Role.STUDENT).values_list("pk", flat=True))
            if missing := [pk for pk in ids if pk not in known]:
                raise CommandError(f"no student with id {', '.join(map(str, missing))}")
        else:
            ids = list(
                AIMemory.objects.active()
                .filter(kind__in=CONSOLIDATED_KINDS)
                .order_by("student_id")
                .values_list("student_id", flat=True)
                .distinct()
            )
        for student_id in ids:
            try:
                report = consolidate_student(student_id=student_id, dry_run=options["dry_run"])
            except LLMUnavailable as exc:
                raise CommandError(f"student {student_id}: the model is unavailable ({exc}); run again later") from exc
            self.stdout.write(f"student {student_id}: {len(report.clusters)} clusters")
            for cluster, outcome in report.clusters:
                self.stdout.write(
                    f"  {cluster.kind} {', '.join(f'#{pk}' for pk in cluster.members)}"
                    f" (similarity >= {cluster.similarity:.3f}): {outcome}"
                )
