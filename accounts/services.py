"""Account writes."""

from __future__ import annotations

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from accounts.models import Classroom, School, TeacherEnrollment, User


def school_default() -> School:
    """The deployment's one school when it has a single one (the demo, a benchmark, a class made
    in a single-school deployment): the first active school, made (named "School") if there is
    none."""
    school = School.objects.filter(active=True, kind=School.Kind.SCHOOL).order_by("pk").first()
    return school or School.objects.create(name="School", kind=School.Kind.SCHOOL)


def classroom_create(
    *, name: str, school: School, teachers: tuple[User, ...] | list[User] = (), external_id: str | None = None
) -> Classroom:
    """A class of `school` taught by `teachers`, the first of them primary."""
    with transaction.atomic():
        classroom = Classroom.objects.create(name=name, school=school, external_id=external_id)
        TeacherEnrollment.objects.bulk_create(
            [
                TeacherEnrollment(classroom=classroom, teacher=teacher, primary=i == 0)
                for i, teacher in enumerate(teachers)
            ]
        )
    return classroom


def user_language_set(*, user: User, language: str) -> bool:
    """Change a user's language (en or fr), which the tutor replies in; `user` is updated too.
    Returns whether it changed: setting the same language again changes nothing.

    What depends on a student's language elsewhere (the analysis of their memories' full-text
    index) is redone by the layer above, which calls this in its transaction and enqueues the
    re-index after commit if it changed.
    """
    if language not in User.Language.values:
        choices = ", ".join(User.Language.values)
        raise ValidationError({"language": [_("Must be one of: %(choices)s.") % {"choices": choices}]})
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        user.language = language
        if locked.language == language:
            return False
        locked.language = language
        locked.save(update_fields=["language"])
    return True


def users_set_active(*, user_ids: list[int], active: bool) -> int:
    """Deactivate (or restore) people: a deactivated person cannot sign in, their API tokens are
    revoked and every session of theirs ends, on every device; nothing of their data is deleted
    (memories, conversations, flags and enrolments stay). Restoring gives them no token back:
    they sign in again. Returns how many changed; the same call again changes nothing.

    The one path for the provisioning API and the roster import: sessions are read once for
    the whole batch."""
    changed = User.objects.filter(pk__in=user_ids, is_active=not active).exclude(role=User.Role.STAFF)
    with transaction.atomic():
        ids = list(changed.select_for_update().values_list("pk", flat=True))
        if not ids:
            return 0
        User.objects.filter(pk__in=ids).update(is_active=active, deactivated_at=None if active else timezone.now())
        if not active:
            _sign_out(ids)
    return len(ids)


def _sign_out(user_ids: list[int]) -> int:
    """Revoke the users' API tokens and end their sessions; one pass over the unexpired
    sessions. Returns how many sessions ended."""
    Token.objects.filter(user_id__in=user_ids).delete()
    keys = {User._meta.pk.value_to_string(User(pk=pk)) for pk in user_ids}  # as django.contrib.auth.login stores it
    ended = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if session.get_decoded().get(SESSION_KEY) in keys
    ]
    Session.objects.filter(pk__in=ended).delete()
    return len(ended)


def user_sign_out_everywhere(*, user: User) -> int:
    """Revoke the user's API token and end every session signed in as them, on every device
    (`POST /auth/logout/` with `everywhere`). Other users' tokens and sessions are untouched.

    Sessions live in the database (Django's default engine): the unexpired ones are read and the
    user's deleted, one pass over the table. Returns how many sessions ended."""
    return _sign_out([user.pk])
