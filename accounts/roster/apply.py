"""The import: a bundle's orgs, users, classes and enrolments written in one transaction.

`roster_import` is the one entry point (the command and the task). Rows are streamed and
written in batches against dicts of what exists, keyed by sourcedId (`Context`); a row that
cannot be imported is reported and skipped; a bundle that cannot be used (`BundleError`, even
half-way) rolls everything back. A dry run does everything, counts, and rolls back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.models import Classroom, School
from accounts.roster.bundle import bundle_open
from accounts.roster.context import ClassRow, Context, SchoolRow, bulk_create_with_ids
from accounts.roster.memberships import memberships_apply
from accounts.roster.people import users_apply
from accounts.roster.report import Report
from accounts.roster.rows import REQUIRED, Class, Org, Rejected, class_read, org_read
from accounts.selectors import is_staff_account, schools_administered_by
from core import events


def roster_import(
    path: Path | str,
    *,
    actor: Any = None,
    dry_run: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> Report:
    """Import the OneRoster CSV bundle at `path` (a zip or a folder) and say what changed.

    `actor` is who imports: None (the command) or a staff account touch every school; a school
    administrator only their schools (other rows rejected). Raises BundleError, having changed
    nothing, when the bundle cannot be used. Idempotent: the same bundle again changes nothing
    and counts every row unchanged. A real run emits `roster.imported` (the bundle's schools the
    actor may touch, the counts) after commit."""
    scope = None
    if actor is not None and not is_staff_account(actor):
        scope = set(schools_administered_by(actor).values_list("pk", flat=True))
    bundle = bundle_open(path, max_bytes=settings.ROSTER_MAX_BYTES)
    report = Report()
    report.notes.append(
        f"OneRoster {bundle.version}: "
        + ", ".join(f"{name} ({mode})" for name, mode in bundle.modes.items())
        + (f"; not read: {', '.join(sorted(bundle.ignored))}" if bundle.ignored else "")
    )
    try:
        with transaction.atomic():
            ctx = Context.load(bundle, report, scope, progress)
            _orgs_apply(ctx)
            users_apply(ctx)
            _classes_apply(ctx)
            memberships_apply(ctx)
            if dry_run:
                transaction.set_rollback(True)
            else:
                events.roster_imported(school_ids=tuple(sorted(ctx.bulk_scope)), counts=report.counts)
    finally:
        bundle.close()
    return report


def _orgs_apply(ctx: Context) -> None:
    mode = ctx.bundle.mode("orgs")
    if mode == "absent":
        ctx.bulk_scope = {s.id for s in ctx.schools.values() if ctx.in_scope(s.id)}
        return
    records: list[tuple[int, Org]] = []
    for batch in ctx.batches("orgs", "orgs", REQUIRED["orgs"], org_read):
        records.extend(batch)
    # Districts first, so that their schools find them.
    records.sort(key=lambda item: item[1].kind != School.Kind.DISTRICT)
    for line, org in records:
        try:
            _org_apply(ctx, org)
        except Rejected as exc:
            ctx.reject("orgs", "orgs", line, org.sid, str(exc))
    ctx.bulk_scope = {ctx.schools[org.sid].id for _line, org in records if org.sid in ctx.schools}
    if ctx.scope is not None:
        ctx.bulk_scope &= ctx.scope


def _org_apply(ctx: Context, org: Org) -> None:
    existing = ctx.schools.get(org.sid)
    parent = ctx.schools.get(org.parent_sid) if org.parent_sid else None
    if org.parent_sid and parent is None:
        raise Rejected(f"parent org {org.parent_sid} is unknown")
    parent_id = parent.id if parent else None
    allowed = ctx.in_scope(existing.id) if existing else parent_id is not None and ctx.in_scope(parent_id)
    if ctx.scope is not None and not allowed:
        raise Rejected(f"org {org.sid} is not one of your schools")
    values = SchoolRow(existing.id if existing else 0, org.name, org.kind, parent_id, not org.deleted)
    if existing is None:
        if org.deleted:
            ctx.report.count("orgs", "unchanged")
            return
        school = School.objects.create(
            name=org.name, kind=org.kind, parent_id=parent_id, external_id=org.sid, active=True
        )
        ctx.schools[org.sid] = values._replace(id=school.pk)
        if ctx.scope is not None:
            ctx.scope.add(school.pk)
        ctx.report.count("orgs", "created")
        return
    if values == existing:
        ctx.report.count("orgs", "unchanged")
        return
    School.objects.filter(pk=existing.id).update(
        name=org.name, kind=org.kind, parent_id=parent_id, active=values.active
    )
    ctx.schools[org.sid] = values
    ctx.report.count("orgs", "deactivated" if existing.active and not values.active else "updated")


def _classes_apply(ctx: Context) -> None:
    mode = ctx.bundle.mode("classes")
    if mode == "absent":
        return

    def read(row: dict[str, str]) -> tuple[Class, int]:
        record = class_read(row)
        school = ctx.school_checked(record.school_sid, "school", ctx.classes.get(record.sid))
        return record, school.id

    for batch in ctx.batches("classes", "classes", REQUIRED["classes"], read):
        new: list[Classroom] = []
        changed: list[Classroom] = []
        for _line, (record, school_id) in batch:
            existing = ctx.classes.get(record.sid)
            row = ClassRow(existing.id if existing else 0, record.name, school_id, not record.deleted)
            if existing is None:
                if record.deleted:
                    ctx.report.count("classes", "unchanged")
                else:
                    new.append(Classroom(name=record.name, school_id=school_id, external_id=record.sid))
                continue
            if row == existing:
                ctx.report.count("classes", "unchanged")
                continue
            changed.append(Classroom(pk=existing.id, name=row.name, school_id=school_id, active=row.active))
            ctx.classes[record.sid] = row
            ctx.report.count("classes", "deactivated" if existing.active and not row.active else "updated")
        Classroom.objects.bulk_update(changed, ["name", "school_id", "active"])
        for classroom in bulk_create_with_ids(Classroom, new):
            assert classroom.external_id is not None
            ctx.classes[classroom.external_id] = ClassRow(classroom.pk, classroom.name, classroom.school_id, True)
        ctx.report.count("classes", "created", len(new))
    if mode == "bulk":
        seen = ctx.seen["classes"]
        gone = {
            sid: row
            for sid, row in ctx.classes.items()
            if row.active and sid not in seen and row.school_id in ctx.bulk_scope
        }
        Classroom.objects.filter(pk__in=[row.id for row in gone.values()]).update(active=False)
        for sid, row in gone.items():
            ctx.classes[sid] = row._replace(active=False)
        ctx.report.count("classes", "deactivated", len(gone))
