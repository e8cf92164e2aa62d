"""enrollments.csv: a student's enrolment (Enrollment) or a teacher's or an aide's
(TeacherEnrollment, an aide's never primary), keyed by sourcedId, never deleted: an enrolment
that is `tobedeleted`, or absent from a bulk file, is made inactive (the class's teachers no
longer see the student)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accounts.models import Enrollment, TeacherEnrollment, User
from accounts.roster.context import Context
from accounts.roster.rows import REQUIRED, Membership, Rejected, membership_read


@dataclass
class Link:
    id: int | None
    sid: str | None
    classroom_id: int
    person_id: int
    primary: bool
    active: bool


@dataclass
class Links:
    """The enrolments of one kind in the rostered classes, by sourcedId and by (class, person)."""

    model: Any
    person: str  # "student" or "teacher"
    by_sid: dict[str, Link] = field(default_factory=dict)
    by_pair: dict[tuple[int, int], Link] = field(default_factory=dict)

    def load(self, classroom_ids: list[int]) -> Links:
        columns = ["id", "external_id", "classroom_id", f"{self.person}_id", "active"]
        if self.model is TeacherEnrollment:
            columns.append("primary")
        for values in self.model.objects.filter(classroom_id__in=classroom_ids).values_list(*columns).iterator(2000):
            link = Link(values[0], values[1], values[2], values[3], bool(values[5:6] and values[5]), values[4])
            self.add(link)
        return self

    def add(self, link: Link) -> None:
        if link.sid:
            self.by_sid[link.sid] = link
        self.by_pair[(link.classroom_id, link.person_id)] = link


def memberships_apply(ctx: Context) -> None:
    mode = ctx.bundle.mode("enrollments")
    if mode == "absent":
        return
    class_ids = [row.id for row in ctx.classes.values()]
    kinds = {
        False: Links(Enrollment, "student").load(class_ids),
        True: Links(TeacherEnrollment, "teacher").load(class_ids),
    }
    pairs: set[tuple[bool, int, int]] = set()

    def read(row: dict[str, str]) -> Membership:
        m = membership_read(row)
        classroom = ctx.classes.get(m.class_sid)
        if classroom is None:
            raise Rejected(f"class {m.class_sid} is unknown")
        if not ctx.in_scope(classroom.school_id):
            raise Rejected(f"class {m.class_sid} is not in one of your schools")
        person = ctx.users.get(m.user_sid)
        if person is None:
            raise Rejected(f"user {m.user_sid} is unknown")
        wanted = User.Role.TEACHER if m.teacher else User.Role.STUDENT
        if person.role != wanted:
            raise Rejected(f"user {m.user_sid} is a {person.role}, not a {wanted}")
        pair = (m.teacher, classroom.id, person.id)
        if pair in pairs:
            raise Rejected(f"user {m.user_sid} is listed twice in class {m.class_sid}")
        pairs.add(pair)
        return m

    for batch in ctx.batches("enrollments", "enrollments", REQUIRED["enrollments"], read):
        for teacher in (False, True):
            _batch_apply(ctx, kinds[teacher], [(line, m) for line, m in batch if m.teacher == teacher])
    if mode == "bulk":
        seen = ctx.seen["enrollments"]
        in_scope = {row.id for row in ctx.classes.values() if row.school_id in ctx.bulk_scope}
        for links in kinds.values():
            gone = [
                link.id
                for sid, link in links.by_sid.items()
                if link.active and sid not in seen and link.classroom_id in in_scope and link.id is not None
            ]
            for start in range(0, len(gone), 1000):
                links.model.objects.filter(pk__in=gone[start : start + 1000]).update(active=False)
            ctx.report.count("enrollments", "deactivated", len(gone))


def _batch_apply(ctx: Context, links: Links, batch: list[tuple[int, Membership]]) -> None:
    new: list[Any] = []
    changed: list[Any] = []
    for line, m in batch:
        classroom_id, person_id = ctx.classes[m.class_sid].id, ctx.users[m.user_sid].id
        link = links.by_sid.get(m.sid) or links.by_pair.get((classroom_id, person_id))
        active = not m.deleted
        if link is None:
            if m.deleted:
                ctx.report.count("enrollments", "unchanged")
                continue
            link = Link(None, m.sid, classroom_id, person_id, m.primary, True)
            links.add(link)
            new.append(_row(links, link))
            continue
        other = links.by_pair.get((classroom_id, person_id))
        if other is not None and other is not link:
            ctx.reject(
                "enrollments", "enrollments", line, m.sid, "the user is enrolled in this class under another sourcedId"
            )
            continue
        before = (link.sid, link.classroom_id, link.person_id, link.primary, link.active)
        links.by_pair.pop((link.classroom_id, link.person_id), None)
        link.sid, link.classroom_id, link.person_id, link.primary, link.active = (
            m.sid,
            classroom_id,
            person_id,
            m.primary,
            active,
        )
        links.add(link)
        if before == (link.sid, link.classroom_id, link.person_id, link.primary, link.active):
            ctx.report.count("enrollments", "unchanged")
            continue
        changed.append(_row(links, link))
        deactivated = before[4] and not active
        ctx.report.count("enrollments", "deactivated" if deactivated else "updated")
    fields = ["external_id", "classroom_id", f"{links.person}_id", "active"]
    if links.model is TeacherEnrollment:
        fields.append("primary")
    links.model.objects.bulk_update(changed, fields)
    links.model.objects.bulk_create(new)
    ctx.report.count("enrollments", "created", len(new))


def _row(links: Links, link: Link) -> Any:
    values: dict[str, Any] = {
        "external_id": link.sid,
        "classroom_id": link.classroom_id,
        f"{links.person}_id": link.person_id,
        "active": link.active,
    }
    if links.model is TeacherEnrollment:
        values["primary"] = link.primary
    return links.model(pk=link.id, **values)
