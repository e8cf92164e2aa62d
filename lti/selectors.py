"""Reading the tool's platforms: who may manage which (the one scoping primitive of this app)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.selectors import is_school_manager, schools_administered_by
from core.errors import Forbidden, NotFound
from lti.models import Platform


def platforms_visible_to(user: Any) -> QuerySet[Platform]:
    """The platforms `user` manages: those of the schools they administer
    (`schools_administered_by`: every school for staff, none for a teacher or a student)."""
    return Platform.objects.filter(school__in=schools_administered_by(user).values("pk"))


def platform_list(*, user: Any) -> QuerySet[Platform]:
    """The platforms `user` manages, newest first; Forbidden for a user who manages none by role."""
    if not is_school_manager(user):
        raise Forbidden(_("Only staff and school administrators register LMS platforms."))
    return platforms_visible_to(user).select_related("registration").prefetch_related("registration__deployments")


def platform_get(*, user: Any, platform_id: int) -> Platform:
    """One platform `user` manages, or NotFound (one of another school is not revealed)."""
    platform = platforms_visible_to(user).select_related("registration").filter(pk=platform_id).first()
    if platform is None:
        raise NotFound(_("Platform not found."))
    return platform
