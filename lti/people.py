"""Who a launch (or a roster entry of the platform, NRPS) is, in the platform's school, and the
class its course is: the matching rules of docs/lti.md, as plain functions of the claims.

`claims` is shaped like an id_token or an NRPS member: `sub` (or NRPS's `user_id`), `email`,
`given_name`, `family_name`, `name`, `roles`, and the person's sourcedId in the LIS claim
(`person_sourcedid`) or as NRPS's `lis_person_sourcedid`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from lti_tool.lti_core.constants import ContextRole
from lti_tool.lti_core.utils import normalize_role
from lti_tool.models import LtiContext, LtiUser

from accounts.models import Classroom, User
from accounts.provisioning import enrollment_add, user_provision
from accounts.services import classroom_create
from lti.models import ContextClassroom, Platform

LIS_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/lis"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"


class Refused(Exception):
    """The launch (or roster entry) cannot sign anyone in; `str()` says why, for the person."""


def role_for(roles: list[str]) -> str:
    """The product's role for a course's LTI roles: Instructor a teacher, else Learner a
    student; any other role (Mentor, ContentDeveloper, none) is refused."""
    normalized = {normalize_role(role) for role in roles}
    if ContextRole.INSTRUCTOR.value in normalized:
        return User.Role.TEACHER
    if ContextRole.LEARNER.value in normalized:
        return User.Role.STUDENT
    raise Refused(_("This tool is for a course's learners and instructors only."))


def _roles(claims: Mapping[str, Any]) -> list[str]:
    roles = claims.get(ROLES_CLAIM, claims.get("roles", []))
    return [str(role) for role in roles] if isinstance(roles, list) else []


def _person_sourcedid(claims: Mapping[str, Any]) -> str:
    lis = claims.get(LIS_CLAIM)
    value = lis.get("person_sourcedid") if isinstance(lis, Mapping) else claims.get("lis_person_sourcedid")
    return str(value or "").strip()


def _compatible(person: User, role: str) -> bool:
    if role == User.Role.STUDENT:
        return person.role == User.Role.STUDENT
    return person.role in (User.Role.TEACHER, User.Role.ADMINISTRATOR)


def person_for_claims(*, platform: Platform, claims: Mapping[str, Any]) -> User:
    """The person of the platform's school these claims name, else one created for it.

    Matched, in order: the person this platform's `sub` was linked to before (django-lti's
    `LtiUser.auth_user`), the person whose `external_id` is the LIS person sourcedId, the one
    person whose email is the claim's (case ignored). Never anyone of another school. A new
    person gets the course role's product role (`role_for`), the claims' names and email, the
    sourcedId as `external_id` when no one has it, and no usable password.

    Refused: a role `role_for` refuses; a deactivated person; a known person whose role does not
    fit the course role (a student launched as Instructor, a teacher as Learner)."""
    role = role_for(_roles(claims))
    school = platform.school
    sub = str(claims.get("sub") or claims.get("user_id") or "")
    in_school = User.objects.filter(school=school)
    person = (
        in_school.filter(lti_users__registration_id=platform.registration_id, lti_users__sub=sub).first()
        if sub
        else None
    )
    sourcedid = _person_sourcedid(claims)
    if person is None and sourcedid:
        person = in_school.filter(external_id=sourcedid).first()
    email = str(claims.get("email") or "").strip()
    if person is None and email:
        namesakes = list(in_school.filter(email__iexact=email)[:2])
        person = namesakes[0] if len(namesakes) == 1 else None
    if person is None:
        given, family = str(claims.get("given_name") or ""), str(claims.get("family_name") or "")
        if not (given or family):
            given = str(claims.get("name") or "")
        free_sourcedid = sourcedid if sourcedid and not User.objects.filter(external_id=sourcedid).exists() else None
        person, _created = user_provision(
            role=role,
            given_name=given,
            family_name=family,
            school=school,
            email=email or None,
            external_id=free_sourcedid,
        )
    if not person.is_active:
        raise Refused(_("Your account is deactivated. Ask your school."))
    if not _compatible(person, role):
        raise Refused(_("Your account's role does not match your role in this course."))
    return person


def person_link(*, platform: Platform, sub: str, person: User) -> None:
    """Record that this platform's `sub` is `person` (django-lti's LtiUser.auth_user), so that
    their next launches find them first."""
    LtiUser.objects.filter(registration_id=platform.registration_id, sub=sub).update(auth_user=person)


def classroom_for_context(*, platform: Platform, context: LtiContext, claims: Mapping[str, Any]) -> Classroom:
    """The class of the platform's school this course maps to: the one it was mapped to before,
    else the class whose `external_id` is the LIS course section sourcedId, else a new class
    named after the course. Refused if that class is inactive."""
    with transaction.atomic():
        link = ContextClassroom.objects.select_related("classroom").filter(context=context).first()
        if link is None:
            lis = claims.get(LIS_CLAIM)
            section = str(lis.get("course_section_sourcedid") or "").strip() if isinstance(lis, Mapping) else ""
            classroom = (
                Classroom.objects.filter(school=platform.school, external_id=section).first() if section else None
            )
            if classroom is None:
                name = (context.title or context.label or _("Course"))[:120]
                classroom = classroom_create(name=name, school=platform.school)
            link, _created = ContextClassroom.objects.get_or_create(context=context, defaults={"classroom": classroom})
    if not link.classroom.active:
        raise Refused(_("This class is closed."))
    return link.classroom


def enrol(*, person: User, classroom: Classroom) -> None:
    """An active enrolment (a student) or teaching assignment (a teacher) in `classroom`, made
    active again if it had ended; a school administrator already sees every class of the
    school and gets neither."""
    if person.role in (User.Role.STUDENT, User.Role.TEACHER):
        enrollment_add(classroom=classroom, person=person, role=person.role)
