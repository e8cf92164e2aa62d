"""Provisioning: people, classes and enrolments made and changed one at a time by an ed-tech
team's own app (the provisioning API, docs/api.md#provisioning) or by the roster import.

These services write and decide nothing about who asks: they take keyword arguments, no
request, and the caller has checked its rights (accounts.provisioning_rights). Each is
idempotent by `external_id` where it has one, and deactivates rather than deletes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from accounts.models import Classroom, Enrollment, School, TeacherEnrollment, User
from accounts.services import user_language_set, users_set_active
from core.errors import Conflict

# Changes a user's language and what depends on it; memory.language.user_language_change also
# re-indexes a student's memories (the API passes it: accounts does not import memory).
LanguageChange = Callable[..., Any]

USERNAME_MAX = 150


class UserChanges(TypedDict, total=False):
    """What `user_update` may change; a key left out is left alone."""

    first_name: str
    last_name: str
    email: str
    username: str
    external_id: str | None
    school: School
    role: str
    language: str
    active: bool


class ClassroomChanges(TypedDict, total=False):
    name: str
    school: School
    external_id: str | None
    active: bool


def username_generate(*, given_name: str, family_name: str) -> str:
    """A free username made from the names: `given.family` in lower-case ASCII (accents dropped),
    then `given.family2`, `given.family3`... for the next namesakes; `user` when the names give
    no letter. Free ignoring case, as people type it."""
    parts = [slugify(name).replace("-", "") for name in (given_name, family_name)]
    base = ".".join(part for part in parts if part)[: USERNAME_MAX - 8] or "user"
    taken = {
        name.lower() for name in User.objects.filter(username__istartswith=base).values_list("username", flat=True)
    }
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}{n}"
    return candidate


def _username_check(username: str, *, exclude: int | None = None) -> None:
    others = User.objects.filter(username__iexact=username)
    if exclude is not None:
        others = others.exclude(pk=exclude)
    if others.exists():
        raise Conflict(
            _("The username %(username)s is taken by someone else.") % {"username": username},
            details={"username": [_("Taken by someone else.")]},
        )


def external_id_taken(external_id: str) -> Conflict:
    """The 409 for an `external_id` that another record has (it says nothing else of it)."""
    return Conflict(
        _("The external_id %(id)s is already used.") % {"id": external_id},
        details={"external_id": [_("Already used by another record.")]},
    )


def _external_id_check(model: type[User] | type[Classroom], external_id: str | None, *, exclude: int | None) -> None:
    if external_id and model.objects.filter(external_id=external_id).exclude(pk=exclude or 0).exists():
        raise external_id_taken(external_id)


def user_provision(
    *,
    role: str,
    given_name: str,
    family_name: str,
    school: School,
    username: str | None = None,
    email: str | None = None,
    external_id: str | None = None,
    language: str | None = None,
    language_change: LanguageChange | None = None,
) -> tuple[User, bool]:
    """The person with this `external_id`, updated to the given fields (`user_update`), or a new
    one: returns (person, created). Posting the same person again changes nothing. A new person
    gets the generated username when none is given, and no usable password: they sign in by
    other means (sign-in codes, SSO). Whether an existing person is active is left alone.

    Conflict (409) when the username, or the external_id in a race, is another person's."""
    with transaction.atomic():
        existing = User.objects.select_for_update().filter(external_id=external_id).first() if external_id else None
        if existing is not None:
            changes: UserChanges = {"first_name": given_name, "last_name": family_name, "school": school, "role": role}
            if username is not None:
                changes["username"] = username
            if email is not None:
                changes["email"] = email
            if language is not None:
                changes["language"] = language
            return user_update(person=existing, changes=changes, language_change=language_change), False
        if username is None:
            username = username_generate(given_name=given_name, family_name=family_name)
        else:
            _username_check(username)
        person = User(
            username=username,
            first_name=given_name,
            last_name=family_name,
            email=email or "",
            role=role,
            school=school,
            external_id=external_id,
            language=language or User.Language.ENGLISH,
        )
        person.set_unusable_password()
        try:
            with transaction.atomic():
                person.save()
        except IntegrityError:
            # Another request made this username or external_id since the checks above.
            raise Conflict(_("Someone else was created with this username or external_id; try again.")) from None
    return person, True


def user_update(*, person: User, changes: UserChanges, language_change: LanguageChange | None = None) -> User:
    """Change `person` (and the instance given) as `changes` says. `active` false deactivates
    them through `users_set_active` (they cannot sign in, every token and session is revoked,
    nothing is deleted); true restores them. A language change goes through `language_change`
    (default: accounts.services.user_language_set). The same changes again change nothing.

    Conflict (409) when the username or external_id is another person's."""
    fields = {key: value for key, value in changes.items() if key not in ("language", "active")}
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=person.pk)
        if "username" in fields and fields["username"] != locked.username:
            _username_check(str(fields["username"]), exclude=locked.pk)
        if "external_id" in fields:
            _external_id_check(User, changes.get("external_id"), exclude=locked.pk)
        changed = [key for key, value in fields.items() if getattr(locked, key) != value]
        for key in changed:
            setattr(locked, key, fields[key])
            setattr(person, key, fields[key])
        if changed:
            try:
                with transaction.atomic():
                    locked.save(update_fields=changed)
            except IntegrityError:
                raise Conflict(_("Someone else has this username or external_id now; try again.")) from None
        if "language" in changes:
            (language_change or user_language_set)(user=person, language=changes["language"])
        if "active" in changes:
            users_set_active(user_ids=[person.pk], active=changes["active"])
            person.is_active = changes["active"]
    return person


def classroom_provision(*, name: str, school: School, external_id: str | None = None) -> tuple[Classroom, bool]:
    """The class with this `external_id` renamed and moved to `school` as given, or a new class
    of `school` with no teacher: returns (classroom, created). The same call again changes
    nothing; whether an existing class is active is left alone."""
    with transaction.atomic():
        existing = (
            Classroom.objects.select_for_update().filter(external_id=external_id).first() if external_id else None
        )
        if existing is not None:
            return classroom_update(classroom=existing, changes={"name": name, "school": school}), False
        try:
            with transaction.atomic():
                return Classroom.objects.create(name=name, school=school, external_id=external_id), True
        except IntegrityError:
            raise Conflict(_("Another class was created with this external_id; try again.")) from None


def classroom_update(*, classroom: Classroom, changes: ClassroomChanges) -> Classroom:
    """Change `classroom` (and the instance given). An inactive class is seen by no teacher and
    keeps its enrolments; making it active again gives them back. Conflict on another class's
    external_id."""
    with transaction.atomic():
        locked = Classroom.objects.select_for_update().get(pk=classroom.pk)
        if "external_id" in changes:
            _external_id_check(Classroom, changes["external_id"], exclude=locked.pk)
        changed = [key for key, value in changes.items() if getattr(locked, key) != value]
        for key in changed:
            setattr(locked, key, changes[key])  # type: ignore[literal-required]
            setattr(classroom, key, changes[key])  # type: ignore[literal-required]
        if changed:
            try:
                with transaction.atomic():
                    locked.save(update_fields=changed)
            except IntegrityError:
                raise Conflict(_("Another class has this external_id now; try again.")) from None
    return classroom


def enrollment_add(
    *, classroom: Classroom, person: User, role: str, primary: bool | None = None
) -> tuple[Enrollment | TeacherEnrollment, bool]:
    """Enrol `person` in `classroom`, as a student or a teacher (`role`, which must be theirs):
    an enrolment that exists is made active again, a teacher's `primary` set when given.
    Returns (enrolment, created); the same call again changes nothing."""
    if role != person.role or role not in (User.Role.STUDENT, User.Role.TEACHER):
        raise ValidationError({"user": [_("This person is not a %(role)s.") % {"role": role}]})
    model: type[Enrollment] | type[TeacherEnrollment]
    if role == User.Role.STUDENT:
        model, lookup, defaults = Enrollment, {"student": person}, {}
    else:
        model, lookup, defaults = TeacherEnrollment, {"teacher": person}, {"primary": bool(primary)}
    with transaction.atomic():
        row, created = model.objects.select_for_update().get_or_create(classroom=classroom, **lookup, defaults=defaults)
        updates = {"active": True} | ({"primary": primary} if role == User.Role.TEACHER and primary is not None else {})
        changed = [key for key, value in updates.items() if getattr(row, key) != value]
        for key in changed:
            setattr(row, key, updates[key])
        if changed:
            row.save(update_fields=changed)
    return row, created


def enrollment_remove(*, classroom: Classroom, person: User) -> bool:
    """End `person`'s enrolment in `classroom` (as a student or a teacher): the row is kept,
    inactive, so the student's data stays and the class's teachers lose access to them.
    Returns whether an active one ended; the same call again changes nothing."""
    ended = Enrollment.objects.filter(classroom=classroom, student=person, active=True).update(active=False)
    ended += TeacherEnrollment.objects.filter(classroom=classroom, teacher=person, active=True).update(active=False)
    return ended > 0
