"""Legal erasure of a student from the command line (docs/privacy.md).

    python manage.py erase_student 42 --confirm [--reason "..."] [--by STAFF_USERNAME]

Without --confirm it says what it would erase and deletes nothing. The audit record names the
staff account given with --by (one who may erase this student through the API:
privacy.services.erasure_student_get), else none: whoever may
run manage.py may erase.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from core.errors import ApplicationError
from privacy.models import ERASE_PERMISSION, Erasure
from privacy.services import erasure_student_get, student_erase


class Command(BaseCommand):
    help = "Erase a student and everything about them (legal erasure). Needs --confirm."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("student_id", type=int)
        parser.add_argument("--confirm", action="store_true", help="really erase (nothing is deleted without it)")
        parser.add_argument("--reason", default="Erased with manage.py erase_student.", help="kept in the audit record")
        parser.add_argument("--by", help="the staff username recorded as having erased")

    def handle(self, *args: Any, **options: Any) -> None:
        student_id: int = options["student_id"]
        if not User.objects.filter(pk=student_id, role=User.Role.STUDENT).exists():
            raise CommandError(f"no student with id {student_id}")
        erased_by = None
        if options["by"]:
            erased_by = User.objects.filter(username=options["by"]).first()
            try:
                erasure_student_get(user=erased_by, student_id=student_id)
            except ApplicationError:
                who = options["by"]
                raise CommandError(f"{who!r} may not erase student {student_id} ({ERASE_PERMISSION})") from None
        if not options["confirm"]:
            raise CommandError(
                f"student {student_id} and all their data would be erased, for good. "
                "Run again with --confirm to do it. Nothing was deleted."
            )
        try:
            erasure = student_erase(
                student_id=student_id,
                confirm=str(student_id),
                reason=options["reason"],
                erased_by=erased_by,
                via=Erasure.Via.COMMAND,
            )
        except (ValidationError, ApplicationError) as exc:
            raise CommandError(str(exc)) from exc
        deleted = sum(erasure.counts["deleted"].values())
        self.stdout.write(
            f"erased: reference {erasure.reference}, {deleted} rows deleted, "
            f"{erasure.counts['anonymised']['llm.LLMUsage']} usage rows anonymised, "
            f"{erasure.files_pending} stored files to delete"
        )
