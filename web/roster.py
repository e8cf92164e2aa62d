"""The class overview's read: one class's roster with each student's figures, for the teacher
workspace (GET /api/v1/classrooms/{id}/roster/).

It joins what several apps own (conversations: last activity; safety: open flags; learning:
reviews due and mastery), so it lives in `web`, the layer that may import them all. The class
is found as learning.selectors.classroom_skills finds it (accounts.selectors.classrooms_visible_to:
the class's active teachers, its school's administrators); any other class is a 404. A fixed
number of queries whatever the class's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Max
from django.utils import timezone

from accounts.models import Classroom, TeacherEnrollment, User
from accounts.selectors import enrollments_current
from conversations.models import Conversation
from learning.models import ReviewCard
from learning.selectors import classroom_skills
from safety.models import Flag


@dataclass(frozen=True)
class RosterSkill:
    skill: str
    estimate: float  # decayed to now, as learning.selectors reports it


@dataclass(frozen=True)
class RosterStudent:
    id: int
    username: str
    first_name: str
    last_name: str
    last_activity_at: datetime | None  # the latest activity of any of their conversations
    open_flags: int
    reviews_due: int
    mastery_average: float | None  # None: no skill assessed yet
    skills: list[RosterSkill]  # weakest first


@dataclass(frozen=True)
class Roster:
    classroom: Classroom
    as_of: datetime
    teachers: list[User]  # active teachers, primary first
    students: list[RosterStudent]  # by username


def classroom_roster(*, user: Any, classroom_id: int) -> Roster:
    """The current students (accounts.selectors.enrollments_current) of a class `user` may see
    (its teachers, its school's administrators; anyone else NotFound), by username, each with
    their last activity, their open safety flags, the skills due for review now and their
    mastery per skill."""
    classroom, skills = classroom_skills(user=user, classroom_id=classroom_id)
    now = timezone.now()
    current = enrollments_current().filter(classroom=classroom).values("student_id")
    students = list(User.objects.filter(pk__in=current).order_by("username"))
    ids = [s.pk for s in students]
    last = dict(
        Conversation.objects.filter(student_id__in=ids)
        .values("student_id")
        .annotate(last=Max("last_activity_at"))
        .values_list("student_id", "last")
    )
    flags = dict(
        Flag.objects.filter(student_id__in=ids, status=Flag.Status.OPEN)
        .values("student_id")
        .annotate(n=Count("id"))
        .values_list("student_id", "n")
    )
    due = dict(
        ReviewCard.objects.filter(student_id__in=ids, due__lte=now)
        .values("student_id")
        .annotate(n=Count("id"))
        .values_list("student_id", "n")
    )
    mastery: dict[int, list[RosterSkill]] = {}
    for skill in skills:
        for row in skill.students:
            mastery.setdefault(row.student_id, []).append(RosterSkill(skill=skill.skill, estimate=row.estimate))
    teachers = [
        enrolment.teacher
        for enrolment in TeacherEnrollment.objects.filter(classroom=classroom, active=True, teacher__is_active=True)
        .select_related("teacher")
        .order_by("-primary", "teacher__username")
    ]
    rows = []
    for student in students:
        own = sorted(mastery.get(student.pk, []), key=lambda s: (s.estimate, s.skill))
        rows.append(
            RosterStudent(
                id=student.pk,
                username=student.username,
                first_name=student.first_name,
                last_name=student.last_name,
                last_activity_at=last.get(student.pk),
                open_flags=flags.get(student.pk, 0),
                reviews_due=due.get(student.pk, 0),
                mastery_average=round(sum(s.estimate for s in own) / len(own), 4) if own else None,
                skills=own,
            )
        )
    return Roster(classroom=classroom, as_of=now, teachers=teachers, students=rows)
