"""A user's language change, and what depends on it in the memory app: the analysis of a
student's memories in the full-text index (stemming and stop words).

The step sits here, above accounts, so that accounts does not know about memories.
"""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from accounts.services import user_language_set
from core import background


def user_language_change(*, user: User, language: str) -> User:
    """Change a user's language (`accounts.services.user_language_set`) and, for a student whose
    language changed, re-index their memories in it.

    The re-index is a Celery task enqueued after commit (`memory.tasks.student_reindex`), in
    batches: lexical recall matches the memories already re-indexed while it runs, and semantic
    recall is unaffected. Setting the same language again changes nothing and enqueues nothing;
    a teacher has no memories to re-index.
    """
    with transaction.atomic():
        changed = user_language_set(user=user, language=language)
        if changed and user.role == User.Role.STUDENT:
            # The language is committed either way; `manage.py reindex --student ID` redoes it by
            # hand if the broker is down (lexical recall then still uses the old analysis for old
            # memories).
            background.enqueue("memory.tasks.student_reindex", user.pk)
    return user
