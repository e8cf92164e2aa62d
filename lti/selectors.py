"""Reading the tool's platforms: who may manage which (the one scoping primitive of this app)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import is_educator, is_staff_account, schools_administered_by
from core.errors import Forbidden, NotFound
from lti.models import Platform


def may_manage_platforms(user: Any) -> bool:
    """A staff account, or an active school administrator."""
    return is_staff_account(user) or (is_educator(user) and user.role == User.Role.ADMINISTRATOR)


def platforms_visible_to(user: Any) -> QuerySet[Platform]:
    """The platforms `user` manages: every one for staff; those of the schools a school
    administrator administers (`schools_administered_by`); none for anyone else."""
    if is_staff_account(user):
        return Platform.objects.all()
    if not may_manage_platforms(user):
        return Platform.objects.none()
    return Platform.objects.filter(school__in=schools_administered_by(user).values("pk"))


def platform_list(*, user: Any) -> QuerySet[Platform]:
    """The platforms `user` manages, newest first; Forbidden for a user who manages none by role."""
    if not may_manage_platforms(user):
        raise Forbidden(_("Only staff and school administrators register LMS platforms."))
    return platforms_visible_to(user).select_related("registration").prefetch_related("registration__deployments")


def platform_get(*, user: Any, platform_id: int) -> Platform:
    """One platform `user` manages, or NotFound (one of another school is not revealed)."""
    platform = platform_list(user=user).filter(pk=platform_id).first() if may_manage_platforms(user) else None
    if platform is None:
        raise NotFound(_("Platform not found."))
    return platform
