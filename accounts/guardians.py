"""Guardians' links to their children (docs/privacy.md#guardians): who may read them and make
them, and making and ending them. A link is made and ended by a school administrator of the
child's school or staff (`is_school_manager`), within `people_managed_by`; what a linked
guardian reads is `accounts.selectors.students_guarded_by`'s."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import GuardianLink, User
from accounts.selectors import is_school_manager, people_managed_by, student_get_visible
from core.errors import Forbidden, NotFound


def guardian_student_get(*, actor: Any, student_id: Any) -> User:
    """The student whose guardians `actor` manages: for a school manager, a student of
    `people_managed_by(actor)` (deactivated ones included); Forbidden for a student `actor`
    otherwise sees (their teacher); NotFound for anyone else's."""
    if not is_school_manager(actor):
        student_get_visible(user=actor, student_id=student_id)
        raise Forbidden(_("Only a school administrator links guardians to a student."))
    student = people_managed_by(actor).filter(role=User.Role.STUDENT, pk=student_id).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student


def guardian_links(*, student: User) -> QuerySet[GuardianLink]:
    """The student's guardian links, ended ones too, oldest first."""
    return GuardianLink.objects.filter(student=student).select_related("guardian").order_by("created_at", "id")


def guardian_link_add(*, actor: Any, student: User, guardian_id: int) -> tuple[GuardianLink, bool]:
    """Link a guardian of `people_managed_by(actor)` to `student`: (the link, created). An ended
    link is made active again; an active one is returned unchanged. A person who is not a
    guardian, or not one `actor` manages, is a 400 on `guardian`."""
    guardian = people_managed_by(actor).filter(pk=guardian_id, role=User.Role.GUARDIAN).first()
    if guardian is None:
        raise ValidationError({"guardian": [_("Unknown guardian.")]})
    link, created = GuardianLink.objects.get_or_create(guardian=guardian, student=student)
    if not created and not link.active:
        link.active = True
        link.save(update_fields=["active"])
    return link, created


def guardian_link_end(*, student: User, guardian_id: Any) -> None:
    """End the guardian's link to `student` (kept, inactive): from now on they read nothing of
    the child. NotFound when they were never linked; ending an ended link changes nothing."""
    ended = GuardianLink.objects.filter(student=student, guardian_id=guardian_id)
    if not ended.exists():
        raise NotFound(_("Guardian link not found."))
    ended.update(active=False)
