"""Which retention periods apply to a student: their classes' policies, or their school's.

A class's own policy replaces its school's for the class's students; a class without one
follows its school's, and a school without one its district's. A student in one active class
follows that class's policy (its own, or its school's); in several, the shortest period of each
kind among them wins (a period beats null, which keeps); in none, their own school's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

from accounts.models import Enrollment, School, User
from retention.models import RetentionPolicy


@dataclass(frozen=True)
class Periods:
    """A student's periods in days; None keeps that kind of data."""

    transcript_days: int | None = None
    memory_days: int | None = None
    memory_grace_days: int | None = None
    flag_days: int | None = None
    inactive_days: int | None = None

    @classmethod
    def of(cls, policy: RetentionPolicy | None) -> Periods:
        if policy is None:
            return cls()
        return cls(**{name: getattr(policy, name) for name in RetentionPolicy.FIELDS})

    @classmethod
    def shortest(cls, periods: Iterable[Periods]) -> Periods:
        chosen = list(periods)
        values = {}
        for field in fields(cls):
            days = [getattr(p, field.name) for p in chosen if getattr(p, field.name) is not None]
            values[field.name] = min(days) if days else None
        return cls(**values)

    @property
    def keeps_all(self) -> bool:
        return all(getattr(self, field.name) is None for field in fields(self))


class PolicyBook:
    """Every policy, read once per run: a school's (with its district's above it) and a
    class's own, for `policy_for_student`."""

    def __init__(self) -> None:
        self.schools: dict[int, RetentionPolicy] = {}
        self.classrooms: dict[int, RetentionPolicy] = {}
        for policy in RetentionPolicy.objects.all():
            if policy.school_id is not None:
                self.schools[policy.school_id] = policy
            elif policy.classroom_id is not None:
                self.classrooms[policy.classroom_id] = policy
        self.parents = dict(School.objects.values_list("pk", "parent_id"))

    def school_periods(self, school_id: int | None) -> Periods:
        """The school's own policy, else its district's (two levels up), else keep all."""
        for _level in range(3):
            if school_id is None:
                return Periods()
            if school_id in self.schools:
                return Periods.of(self.schools[school_id])
            school_id = self.parents.get(school_id)
        return Periods()

    def classroom_periods(self, classroom_id: int, school_id: int) -> Periods:
        own = self.classrooms.get(classroom_id)
        return Periods.of(own) if own is not None else self.school_periods(school_id)


def student_classes(student_ids: Iterable[int]) -> dict[int, list[tuple[int, int]]]:
    """Each student's active classes they are actively enrolled in, as (class id, school id),
    whether the student is active or not (a deactivated student keeps their classes' policy)."""
    found: dict[int, list[tuple[int, int]]] = {}
    rows = Enrollment.objects.filter(student_id__in=list(student_ids), active=True, classroom__active=True)
    for student_id, classroom_id, school_id in rows.values_list("student_id", "classroom_id", "classroom__school_id"):
        found.setdefault(student_id, []).append((classroom_id, school_id))
    return found


def policy_for_student(book: PolicyBook, student: User, classes: list[tuple[int, int]]) -> Periods:
    """The periods that apply to `student`, given their active classes (`student_classes`)."""
    if not classes:
        return book.school_periods(student.school_id)
    return Periods.shortest(book.classroom_periods(classroom_id, school_id) for classroom_id, school_id in classes)
