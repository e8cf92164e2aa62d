"""Who may ask about whom, and the log of what was asked. Fail closed: anything outside a
user's scope is a 404, as everywhere (accounts.selectors).

- About a student: the student's teachers (accounts.selectors.student_get_visible), staff (an
  active staff account: any active student), and the student about themself.
- About a class: its teachers and its school's administrators (accounts.selectors.
  classroom_get_overseen) and staff; a student, or another teacher, gets 404.
- What the answer may show: the memories the asker may read (memory.selectors.memories_visible_to:
  a student never sees a teacher-only note); staff read every memory of the student.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from accounts.models import Classroom
from accounts.selectors import classroom_get_overseen, is_staff_account, student_get_overseen
from insights.models import AskLog
from memory.models import AIMemory, AIMemoryQuerySet
from memory.selectors import memories_visible_to


def ask_classroom_get(*, user: Any, classroom_id: Any) -> Classroom:
    """The class `user` may ask about (its teachers, its school's administrators, staff), or
    NotFound (accounts.selectors.classroom_get_overseen)."""
    return classroom_get_overseen(user=user, classroom_id=classroom_id)


def memories_for(user: Any) -> AIMemoryQuerySet:
    """The memories an answer to `user` may show (see the module docstring)."""
    if is_staff_account(user):
        return AIMemory.objects.all()
    return memories_visible_to(user)


def ask_list(*, user: Any, student_id: Any) -> QuerySet[AskLog]:
    """The questions asked about one student, newest first: all of them for their teachers and
    staff, their own for the student. (A class's answers name several students and are not
    listed here.)"""
    student = student_get_overseen(user=user, student_id=student_id)
    asks = AskLog.objects.filter(student=student)
    if getattr(user, "pk", None) == student.pk:
        asks = asks.filter(asker=user)
    return asks.order_by("-created_at", "-id")
