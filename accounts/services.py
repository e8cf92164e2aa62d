"""Account writes."""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User

logger = logging.getLogger(__name__)


def user_language_set(*, user: User, language: str) -> User:
    """Change a user's language (en or fr): the tutor's replies, and for a student the analysis of
    their memories' full-text index (stemming and stop words).

    A student's memories are re-indexed in the new language by a Celery task after commit
    (`memory.tasks.student_reindex`), in batches: lexical recall matches the memories already
    re-indexed while it runs, and semantic recall is unaffected. Setting the same language again
    changes nothing.
    """
    if language not in User.Language.values:
        choices = ", ".join(User.Language.values)
        raise ValidationError({"language": [_("Must be one of: %(choices)s.") % {"choices": choices}]})
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        if locked.language == language:
            user.language = language
            return user
        locked.language = language
        locked.save(update_fields=["language"])
        if locked.role == User.Role.STUDENT:
            student_id = locked.pk
            transaction.on_commit(lambda: _enqueue_reindex(student_id))
    user.language = language
    return user


def _enqueue_reindex(student_id: int) -> None:
    from memory.tasks import student_reindex

    # The language is committed either way; `manage.py reindex --student ID` redoes it by hand
    # if the broker is down (lexical recall then still uses the old analysis for old memories).
    try:
        student_reindex.delay(student_id)
    except Exception:
        logger.exception("could not enqueue the re-index of student %s; run manage.py reindex", student_id)
