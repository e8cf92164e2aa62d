"""Reading webhooks: which a user may manage (the one scoping primitive of this app), and the
schools an event about a student concerns."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from accounts.models import Classroom, School, User
from accounts.selectors import is_school_manager, is_staff_account, schools_administered_by
from core.errors import Forbidden, NotFound
from webhooks.models import Webhook, WebhookDelivery


def webhooks_visible_to(user: Any) -> QuerySet[Webhook]:
    """The webhooks `user` manages: every one for staff; those of the schools a school
    administrator administers (`schools_administered_by`); none for anyone else."""
    if is_staff_account(user):
        return Webhook.objects.all()
    if not is_school_manager(user):
        return Webhook.objects.none()
    return Webhook.objects.filter(school__in=schools_administered_by(user).values("pk"))


def webhook_list(*, user: Any) -> QuerySet[Webhook]:
    """The webhooks `user` manages, newest first; Forbidden for a user who manages none by role."""
    if not is_school_manager(user):
        raise Forbidden(_("Only staff and school administrators manage webhooks."))
    return webhooks_visible_to(user).select_related("school")


def webhook_get(*, user: Any, webhook_id: int) -> Webhook:
    """One webhook `user` manages, or NotFound (one of another school is not revealed)."""
    hook = webhooks_visible_to(user).select_related("school").filter(pk=webhook_id).first()
    if hook is None:
        raise NotFound(_("Webhook not found."))
    return hook


def delivery_list(*, user: Any, webhook_id: int) -> QuerySet[WebhookDelivery]:
    """The deliveries of one webhook `user` manages, newest first (NotFound as `webhook_get`)."""
    hook = webhook_get(user=user, webhook_id=webhook_id)
    return hook.deliveries.order_by("-created_at", "-pk")


def student_school_ids(student_id: int) -> set[int]:
    """The schools of a student: their own (User.school) and those of their active classes they
    are actively enrolled in."""
    own = User.objects.filter(pk=student_id).values_list("school_id", flat=True).first()
    classes = Classroom.objects.filter(active=True, enrollments__student_id=student_id, enrollments__active=True)
    ids = set(classes.values_list("school_id", flat=True))
    return ids | ({own} if own else set())


def school_ancestry(school_ids: set[int]) -> dict[int, set[int]]:
    """Each of these schools with itself and the districts above it (two levels up, as an
    administrator's scope goes two levels down), in one query."""
    if not school_ids:
        return {}
    rows = School.objects.filter(pk__in=school_ids).values_list("pk", "parent_id", "parent__parent_id")
    return {row[0]: {pk for pk in row if pk is not None} for row in rows}
