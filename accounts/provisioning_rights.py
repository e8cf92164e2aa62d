"""Who may provision what (docs/api.md#provisioning): the checks the provisioning API makes
before it calls accounts.provisioning's services.

- Staff: everyone and every class.
- A school administrator: the people and classes of their schools (a district's: of its
  schools too).
- A teacher: creates and edits students of their own school, and enrols or removes students
  in their own classes; never a teacher or an administrator, a role, a school, whether someone
  is active, or a class itself.
- Anyone else (a student): may not provision (403).

A person or class outside the requester's scope is a 404, as it does not exist for them; one
they may see but not change is a 403. Nobody changes their own role, school or activity.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from accounts.models import Classroom, School, User
from accounts.provisioning import external_id_taken
from accounts.selectors import (
    classrooms_managed_by,
    is_educator,
    is_staff_account,
    people_managed_by,
    schools_provisioned_by,
)
from core.errors import Forbidden, NotFound


def _is_teacher(actor: Any) -> bool:
    return bool(is_educator(actor) and actor.role == User.Role.TEACHER)


def provisioner_required(actor: Any) -> None:
    """Forbidden unless `actor` is staff, a school administrator or a teacher."""
    if not (is_staff_account(actor) or is_educator(actor)):
        raise Forbidden(_("You may not provision people or classes."))


def class_manager_required(actor: Any) -> None:
    """Forbidden unless `actor` may create and change classes (staff, administrators)."""
    provisioner_required(actor)
    if _is_teacher(actor):
        raise Forbidden(_("A teacher may not create or change classes."))


def school_resolve(*, actor: Any, school_id: int, field: str = "school") -> School:
    """The school `actor` may put people or classes in, or a 400 on `field` (as for a school
    that does not exist)."""
    school = schools_provisioned_by(actor).filter(pk=school_id).first()
    if school is None:
        raise ValidationError({field: [_("Unknown school.")]})
    return school


def person_get_managed(*, actor: Any, person_id: Any) -> User:
    """One person of `people_managed_by(actor)`, or NotFound."""
    person = people_managed_by(actor).filter(pk=person_id).first()
    if person is None:
        raise NotFound(_("Person not found."))
    return person


def person_resolve(*, actor: Any, person_id: int, field: str = "user") -> User:
    """A person of `people_managed_by(actor)` named in a body, or a 400 on `field`."""
    person = people_managed_by(actor).filter(pk=person_id).first()
    if person is None:
        raise ValidationError({field: [_("Unknown person.")]})
    return person


def person_by_external_id(*, actor: Any, external_id: str | None) -> User | None:
    """The person a POST with `external_id` would update: None when there is none; Conflict
    when it is someone outside `actor`'s scope (the id is taken; nothing else is said)."""
    if not external_id:
        return None
    person = User.objects.filter(external_id=external_id).first()
    if person is None:
        return None
    if not people_managed_by(actor).filter(pk=person.pk).exists():
        raise external_id_taken(external_id)
    return person


def person_write_check(*, actor: Any, person: User | None, changes: Mapping[str, Any]) -> None:
    """Forbidden when `actor` may not make `changes` (model field names, `active`) to `person`
    (None: a new person). A change to the value it already has is no change."""
    provisioner_required(actor)

    def changing(key: str) -> bool:
        if key not in changes:
            return False
        if person is None:
            return True
        current = person.is_active if key == "active" else getattr(person, key)
        return bool(current != changes[key])

    if _is_teacher(actor):
        if changes.get("role", User.Role.STUDENT) != User.Role.STUDENT:
            raise Forbidden(_("A teacher may only provision students."))
        if person is not None and any(changing(key) for key in ("role", "school", "active")):
            raise Forbidden(_("A teacher may not change a person's role, school or whether they are active."))
    if person is not None and person.pk == actor.pk and any(changing(key) for key in ("role", "school", "active")):
        raise Forbidden(_("You may not change your own role, school or whether you are active."))


def classroom_get_managed(*, actor: Any, classroom_id: Any) -> Classroom:
    """One class of `classrooms_managed_by(actor)`, or NotFound."""
    classroom = classrooms_managed_by(actor).filter(pk=classroom_id).first()
    if classroom is None:
        raise NotFound(_("Classroom not found."))
    return classroom


def classroom_by_external_id(*, actor: Any, external_id: str | None) -> Classroom | None:
    """The class a POST with `external_id` would update, None, or Conflict when it is a class
    outside `actor`'s scope."""
    if not external_id:
        return None
    classroom = Classroom.objects.filter(external_id=external_id).first()
    if classroom is not None and not classrooms_managed_by(actor).filter(pk=classroom.pk).exists():
        raise external_id_taken(external_id)
    return classroom


def enrollment_write_check(*, actor: Any, role: str) -> None:
    """Forbidden when `actor` may not enrol or remove someone of `role` in a class they manage:
    a teacher enrols and removes students only."""
    provisioner_required(actor)
    if _is_teacher(actor) and role != User.Role.STUDENT:
        raise Forbidden(_("A teacher may only enrol or remove students."))
