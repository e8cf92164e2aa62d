"""The scoping primitive: which students' data a user may read.

Every read of a student's data (conversations, messages, memories) goes through
`students_visible_to`. It fails closed: a user who is neither a student nor a teacher sees no
one. A row outside this scope is answered with 404, never 403, so its existence is not revealed.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import Classroom, User
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


def is_staff_account(user: Any) -> bool:
    """An active staff account (role staff with is_staff): oversees every student and class
    (safety flags, cards, reviews, questions). A teacher given is_staff is not one."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.is_active
        and user.is_staff
        and getattr(user, "role", None) == User.Role.STAFF
    )


def student_get_overseen(*, user: Any, student_id: Any) -> User:
    """One student `user` may read as `student_get_visible` says, or any active student for a
    staff account (`is_staff_account`); otherwise NotFound."""
    if not is_staff_account(user):
        return student_get_visible(user=user, student_id=student_id)
    try:
        pk = int(student_id)
    except (TypeError, ValueError):
        raise NotFound(_("Student not found.")) from None
    student = User.objects.filter(pk=pk, role=User.Role.STUDENT, is_active=True).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student


def students_administered_by(user: Any) -> QuerySet[User]:
    """The students on whom `user` may use the admin's powers over a student's whole record (a
    privacy export or erasure, each with its own permission, which the caller checks): every
    student, deactivated ones included, for a staff account (`is_staff_account`); for anyone
    else with admin access (a teacher given `is_staff`), the students `students_visible_to`
    returns, as the admin scopes them (accounts.admin_tenancy); no one for a user without admin
    access. Holding a permission never widens this scope."""
    students = User.objects.filter(role=User.Role.STUDENT)
    if is_staff_account(user):
        return students
    if not (getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
        return students.none()
    return students_visible_to(user)


def student_get_administered(*, user: Any, student_id: Any) -> User:
    """One student of `students_administered_by(user)`, or NotFound (as for a student that does
    not exist)."""
    try:
        pk = int(student_id)
    except (TypeError, ValueError):
        raise NotFound(_("Student not found.")) from None
    student = students_administered_by(user).filter(pk=pk).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student


def classrooms_visible_to(user: Any) -> QuerySet[Classroom]:
    """The classrooms whose class-wide figures `user` may read: a teacher's own, by name; anyone
    else's none (as learning.selectors.classroom_get_visible decides for one classroom)."""
    if user is None or not getattr(user, "is_authenticated", False) or user.role != User.Role.TEACHER:
        return Classroom.objects.none()
    return Classroom.objects.filter(teacher=user).order_by("name", "id")
