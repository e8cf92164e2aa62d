"""Roster imports through the API: a bundle stored and queued (`roster_import_start`), then
imported by a worker (`roster_import_run`, from accounts.tasks)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import RosterImport
from accounts.roster.apply import roster_import
from accounts.roster.bundle import BundleError
from accounts.selectors import is_staff_account, may_import_roster
from core.background import enqueue
from core.errors import ApplicationError, Forbidden

logger = logging.getLogger(__name__)


class BundleTooLarge(ApplicationError):
    code = "file_too_large"


def roster_import_start(*, user: Any, upload: UploadedFile, dry_run: bool) -> RosterImport:
    """Store the uploaded bundle and queue its import (after commit). Forbidden for anyone but
    a staff account or a school administrator; 400 `file_too_large` past ROSTER_MAX_BYTES."""
    if not may_import_roster(user):
        raise Forbidden(_("Only staff and school administrators may import a roster."))
    if upload.size is None or upload.size > settings.ROSTER_MAX_BYTES:
        raise BundleTooLarge(
            _("The bundle is larger than %(limit)d bytes (ROSTER_MAX_BYTES).") % {"limit": settings.ROSTER_MAX_BYTES}
        )
    with transaction.atomic():
        record = RosterImport.objects.create(
            created_by=user,
            school=None if is_staff_account(user) else user.school,
            dry_run=dry_run,
            file=upload,
        )
        enqueue("accounts.tasks.roster_import_run", record.pk)
    return record


def roster_import_run(*, import_id: int) -> str:
    """Import one queued bundle as its uploader (their schools only) and store the report.

    Runs an import once: the row is claimed by moving it from queued to running in one
    statement, so a second delivery, or a run of an import already running or finished, does
    nothing. The import itself is one transaction: a worker killed half-way leaves the row
    running and the database as it was. Returns the final status."""
    claimed = RosterImport.objects.filter(pk=import_id, status=RosterImport.Status.QUEUED).update(
        status=RosterImport.Status.RUNNING
    )
    if not claimed:
        return "skipped"
    record = RosterImport.objects.select_related("created_by").get(pk=import_id)
    try:
        with tempfile.TemporaryDirectory() as folder:
            local = Path(folder) / "bundle.zip"
            with record.file.open("rb") as source, open(local, "wb") as target:
                shutil.copyfileobj(source, target)
            report = roster_import(local, actor=record.created_by or user_gone(), dry_run=record.dry_run)
    except BundleError as exc:
        record.status, record.detail = RosterImport.Status.FAILED, str(exc)
    else:
        record.status = RosterImport.Status.DONE
        record.counts, record.errors, record.errors_omitted = report.counts, report.errors, report.errors_omitted
        record.detail = "\n".join(report.notes)
    record.finished_at = timezone.now()
    record.save(update_fields=["status", "detail", "counts", "errors", "errors_omitted", "finished_at"])
    logger.info("roster import %s: %s", import_id, record.status)
    return str(record.status)


def user_gone() -> Any:
    """The importer's account was deleted: an actor with no school, whose rows are all rejected."""
    return AnonymousUser()
