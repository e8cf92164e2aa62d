"""Apply the schools' retention policies now (docs/privacy.md#retention).

    python manage.py retention_apply [--dry-run] [--school ID]

Prints, per school, how many of each kind go (or, with --dry-run, would go: nothing changes).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import School
from retention.models import RetentionRun
from retention.services import retention_apply


class Command(BaseCommand):
    help = "Apply the retention policies: erase what they no longer keep (--dry-run: only count it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count what would go; change nothing")
        parser.add_argument("--school", type=int, help="only the students of this school (its id)")

    def handle(self, *args: Any, **options: Any) -> None:
        school_id = options["school"]
        if school_id is not None and not School.objects.filter(pk=school_id).exists():
            raise CommandError(f"no school with id {school_id}")
        dry_run = options["dry_run"]
        runs = retention_apply(school_id=school_id, dry_run=dry_run)
        verb = "would go" if dry_run else "gone"
        for run in runs:
            counts = ", ".join(f"{kind} {run.counts.get(kind, 0)}" for kind in RetentionRun.KINDS)
            self.stdout.write(f"school {run.school_id} ({run.school.name}), {verb}: {counts}")
        if dry_run:
            self.stdout.write("Dry run: nothing was changed.")
