"""Account writes."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User


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
