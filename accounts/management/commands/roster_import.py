"""Import a OneRoster 1.1 or 1.2 CSV bundle (docs/roster.md).

    python manage.py roster_import PATH [--dry-run]

PATH is a zip or a folder. Prints per entity how many rows were created, updated, deactivated,
unchanged and rejected, then each rejected row (file, line, sourcedId, reason). Exits 0 when
the bundle was read, rows rejected or not; a bundle that cannot be used is a CommandError and
nothing is written. --dry-run does everything and writes nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.roster.apply import roster_import
from accounts.roster.bundle import BundleError


class Command(BaseCommand):
    help = "Import a OneRoster 1.1 or 1.2 CSV bundle (a zip or a folder)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the bundle: a .zip file or a folder with manifest.csv")
        parser.add_argument("--dry-run", action="store_true", help="count and check, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        # A progress line on a terminal only: a log or a pipe gets the report alone.
        progress = self._progress if sys.stderr.isatty() else None
        try:
            report = roster_import(options["path"], dry_run=options["dry_run"], progress=progress)
        except BundleError as exc:
            raise CommandError(f"the bundle cannot be imported, nothing was written: {exc}") from exc
        if progress is not None:
            sys.stderr.write("\n")
        if options["dry_run"]:
            self.stdout.write("dry run: nothing was written")
        for line in report.lines():
            self.stdout.write(line)

    def _progress(self, entity: str, rows: int) -> None:
        sys.stderr.write(f"\r{entity}: {rows} rows read\033[K")
        sys.stderr.flush()
