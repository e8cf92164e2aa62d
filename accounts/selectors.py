"""The scoping primitive: which students' data a user may read.

Every read of a student's data (conversations, messages, memories) goes through
`students_visible_to`. It fails closed: a user who is neither a student nor a teacher sees no
one. A row outside this scope is answered with 404, never 403, so its existence is not revealed.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import User
from core.errors import NotFound


def students_visible_to(user: Any) -> QuerySet[User]:
    """Students whose data `user` may read: themselves, or the students of a teacher's classes."""
    students = User.objects.filter(role=User.Role.STUDENT, is_active=True)
    if user is None or not getattr(user, "is_authenticated", False):
        return students.none()
    if user.role == User.Role.STUDENT:
        return students.filter(pk=user.pk)
    if user.role == User.Role.TEACHER:
        return students.filter(enrollments__classroom__teacher=user).distinct()
    return students.none()


def student_get_visible(*, user: Any, student_id: Any) -> User:
    """One student `user` may read, or NotFound."""
    try:
        pk = int(student_id)
    except (TypeError, ValueError):
        raise NotFound(_("Student not found.")) from None
    student = students_visible_to(user).filter(pk=pk).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student
