"""Crisis alerts that reach none of the student's own recipients (docs/safety.md).

A crisis is alerted to the student's teachers (by email) and to the safety contacts that cover
the student's classes (safety.alerts.recipients_for). When none of them can be reached (no
teacher has an email address and no contact covers the classes, or every alert to them failed),
the alert goes to the fallback instead: SAFETY_LEAD_EMAILS (the school's safety lead), else every
active staff account with an email address. Such a flag is marked `alert_unrouted`; it is logged
as an error, counted in `tutor_safety_alerts_unrouted_total`, named in a warning on
/health/ready while it is open, and marked in the safety queue. Each process says at start-up
which classes have no recipient of their own.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db.models import QuerySet

from accounts.models import Classroom, TeacherEnrollment, User
from core.health import CheckWarning
from safety.models import Flag, SafetyContact
from safety.types import Severity

logger = logging.getLogger(__name__)

# The readiness check reads the database at most this often per process: a balancer polls each
# second, and the answer changes when a crisis is alerted or a flag closed, not from one second
# to the next.
READY_CHECK_EVERY_SECONDS = 30.0

_last_check: tuple[float, str] | None = None


def fallback_emails() -> list[str]:
    """Who is alerted about a crisis that reaches no recipient of its own: SAFETY_LEAD_EMAILS,
    else the email of every active staff account (role staff), each once, in order."""
    emails = list(settings.SAFETY_LEAD_EMAILS)
    if not emails:
        staff = User.objects.filter(role=User.Role.STAFF, is_staff=True, is_active=True).exclude(email="")
        emails = list(staff.order_by("pk").values_list("email", flat=True))
    unique: dict[str, None] = {}
    for email in emails:
        if email.strip():
            unique.setdefault(email.strip().lower(), None)
    return list(unique)


def classrooms_without_recipient() -> QuerySet[Classroom]:
    """The active classes whose crises have no recipient of their own: no active teacher with an
    email address, and no active safety contact for the class or for every class."""
    contacts = SafetyContact.objects.filter(active=True)
    if contacts.filter(classroom__isnull=True).exists():
        return Classroom.objects.none()
    covered = contacts.filter(classroom__isnull=False).values("classroom_id")
    reached = TeacherEnrollment.objects.filter(active=True, teacher__is_active=True).exclude(teacher__email="")
    return (
        Classroom.objects.filter(active=True)
        .exclude(pk__in=reached.values("classroom_id"))
        .exclude(pk__in=covered)
        .order_by("name", "pk")
    )


def unrouted_logged(flag: Flag, fallback: list[str], *, why: str) -> None:
    """Log (an error) and count a crisis alert that reached none of its own recipients."""
    from core import metrics

    metrics.safety_alert_unrouted(outcome="fallback" if fallback else "nobody")
    logger.error(
        "safety flag %s: crisis alert reached none of the student's recipients (%s); %s",
        flag.pk,
        why,
        "alerted the fallback: " + ", ".join(fallback)
        if fallback
        else "NO ONE was alerted: set SAFETY_LEAD_EMAILS (or give a staff account an email address)",
    )


def recipients_report() -> None:
    """At start-up: an error naming each class whose crises have no recipient of their own, and
    who is alerted instead. Never raises (a process starts while the database is away)."""
    try:
        missing = [f"{c.name} (id {c.pk})" for c in classrooms_without_recipient()[:50]]
        fallback = fallback_emails() if missing else []
    except Exception as exc:
        logger.warning("crisis alert recipients could not be checked: %s", type(exc).__name__)
        return
    if missing:
        instead = ", ".join(fallback) if fallback else "NO ONE: set SAFETY_LEAD_EMAILS"
        logger.error(
            "crisis alerts: no recipient for the classes %s (their teacher has no email address and no "
            "safety contact covers them); their crises go to the fallback: %s",
            ", ".join(missing),
            instead,
        )


def _problems() -> str:
    unrouted = Flag.objects.filter(alert_unrouted=True, severity=Severity.CRISIS, status=Flag.Status.OPEN).count()
    classes = classrooms_without_recipient().count()
    problems = []
    if unrouted:
        problems.append(f"{unrouted} open crisis flags alerted none of their own recipients")
    if classes:
        problems.append(f"{classes} classes have no crisis alert recipient")
    return "; ".join(problems)


def ready_check() -> None:
    """/health/ready's `safety_alerts` (HEALTH_READY_CHECKS): a warning while an open crisis
    reached none of its own recipients, or a class has none; counts only, no names. Read from
    the database at most every READY_CHECK_EVERY_SECONDS per process."""
    global _last_check
    now = time.monotonic()
    if _last_check is None or now - _last_check[0] >= READY_CHECK_EVERY_SECONDS:
        from core.db import connection_release

        try:
            _last_check = (now, _problems())
        finally:
            connection_release()
    if _last_check[1]:
        raise CheckWarning(_last_check[1])
