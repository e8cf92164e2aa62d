"""What one import knows while it runs: the bundle, the report, the schools the importer may
touch, and the rostered rows already in the database, loaded once into dicts keyed by
sourcedId (external_id) so that no row costs a query."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from accounts.models import Classroom, School, User
from accounts.roster.bundle import Bundle
from accounts.roster.report import Report
from accounts.roster.rows import Rejected

T = TypeVar("T")
BATCH = 1000


class SchoolRow(NamedTuple):
    id: int
    name: str
    kind: str
    parent_id: int | None
    active: bool


class UserRow(NamedTuple):
    id: int
    username: str
    first_name: str
    last_name: str
    email: str
    role: str
    school_id: int | None
    active: bool


class ClassRow(NamedTuple):
    id: int
    name: str
    school_id: int
    active: bool


@dataclass
class Context:
    bundle: Bundle
    report: Report
    # The schools the importer may touch (None: every one, for staff and the command).
    scope: set[int] | None
    progress: Callable[[str, int], None] | None = None
    schools: dict[str, SchoolRow] = field(default_factory=dict)
    users: dict[str, UserRow] = field(default_factory=dict)
    classes: dict[str, ClassRow] = field(default_factory=dict)
    # The sourcedIds each file listed (rejected rows too: a bulk file's rejected row is not an
    # absent one, and is not deactivated).
    seen: dict[str, set[str]] = field(default_factory=dict)
    # The schools a bulk file is the whole truth for (set once the orgs are read).
    bulk_scope: set[int] = field(default_factory=set)

    @classmethod
    def load(cls, bundle: Bundle, report: Report, scope: set[int] | None, progress: Any) -> Context:
        ctx = cls(bundle=bundle, report=report, scope=scope, progress=progress)
        schools: Any = School.objects.filter(external_id__isnull=False).values_list(
            "external_id", "id", "name", "kind", "parent_id", "active"
        )
        for sid, *school in schools:
            ctx.schools[sid] = SchoolRow(*school)
        people: Any = User.objects.filter(external_id__isnull=False).values_list(
            "external_id", "id", "username", "first_name", "last_name", "email", "role", "school_id", "is_active"
        )
        for sid, *person in people.iterator(chunk_size=2000):
            ctx.users[sid] = UserRow(*person)
        classes: Any = Classroom.objects.filter(external_id__isnull=False).values_list(
            "external_id", "id", "name", "school_id", "active"
        )
        for sid, *classroom in classes:
            ctx.classes[sid] = ClassRow(*classroom)
        return ctx

    def in_scope(self, school_id: int | None) -> bool:
        return self.scope is None or school_id in self.scope

    def school_checked(self, sid: str, label: str, existing: UserRow | ClassRow | None) -> SchoolRow:
        """The school (or district) `sid` of a row, if it exists and the row may be written there
        (and, for a row that `existing` already, where it is now); else Rejected."""
        school = self.schools.get(sid)
        if school is None:
            raise Rejected(f"{label} {sid} is unknown")
        if not self.in_scope(school.id) or (existing is not None and not self.in_scope(existing.school_id)):
            raise Rejected(f"{label} {sid} is not one of your schools")
        return school

    def batches(
        self, entity: str, name: str, required: tuple[str, ...], read: Callable[[dict[str, str]], T]
    ) -> Iterator[list[tuple[int, T]]]:
        """The records of `<name>.csv` that `read` accepts, with their line, in batches of
        BATCH; a row `read` rejects, or whose sourcedId came before in the file, is reported and
        skipped."""
        seen = self.seen.setdefault(entity, set())
        batch: list[tuple[int, T]] = []
        done = 0
        for line, row in self.bundle.rows(name, required):
            sid = row.get("sourcedId", "")
            try:
                if sid in seen:
                    raise Rejected(f"sourcedId {sid} is repeated (its first row is kept)")
                if sid:
                    seen.add(sid)
                batch.append((line, read(row)))
            except Rejected as exc:
                self.reject(entity, name, line, sid, str(exc))
            if len(batch) >= BATCH:
                yield batch
                done += len(batch)
                batch = []
                if self.progress is not None:
                    self.progress(entity, done)
        if batch:
            yield batch
        if self.progress is not None:
            self.progress(entity, done + len(batch))

    def reject(self, entity: str, name: str, line: int, sid: str, reason: str) -> None:
        self.report.reject(entity, f"{name}.csv", line, sid, reason)


def bulk_create_with_ids(model: Any, objects: list[Any]) -> list[Any]:
    """`bulk_create` by external_id, with the primary keys read back where the database does
    not return them."""
    created = model.objects.bulk_create(objects)
    if any(obj.pk is None for obj in created):
        ids = dict(
            model.objects.filter(external_id__in=[o.external_id for o in created]).values_list("external_id", "pk")
        )
        for obj in created:
            obj.pk = ids[obj.external_id]
    return list(created)
