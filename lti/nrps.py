"""Roster sync: a course's members, read from the platform with LTI Names and Role Provisioning
Services (NRPS 2.0), made the class's students and teachers (docs/lti.md, "Roster sync (NRPS)").

`roster_sync` reads every member of a context with pylti1p3's NRPS client (lti.connector: an
OAuth2 token by a client assertion signed with the tool's key, then every page of the
memberships URL the launch gave), keeps django-lti's own membership rows in step, and applies them to the
class the context maps to (lti.ContextClassroom), with the provisioning services
(accounts.provisioning.enrollment_add / enrollment_remove):

- an Active Learner is an active student enrolment, an Active Instructor an active teaching
  assignment; the person is the one the launch would sign in (lti.people), created just in time
  in the platform's school when unknown;
- an Inactive or Deleted member, and a member of an earlier sync no longer listed, has their
  enrolment ended (never deleted: `active` false);
- anyone else (another role, a deactivated person, a role that is not theirs) is skipped.

The counts say what changed: `created`, `updated` (an enrolment made active again), `ended`,
`unchanged`, `skipped`. No one outside the platform's school is touched.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import requests
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from lti_tool.models import LtiContext, LtiMembership, LtiUser
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.names_roles import NamesRolesProvisioningService

from accounts.models import Classroom, User
from accounts.provisioning import enrollment_add, enrollment_remove
from core import background
from core.errors import Conflict
from lti.connector import service_connector
from lti.models import RosterSync
from lti.people import Refused, person_for_claims, person_link

logger = logging.getLogger(__name__)

SYNC_TASK = "lti.tasks.roster_sync"
COUNTS = ("created", "updated", "ended", "unchanged", "skipped")
# A sync running this long lost its worker (a sync reads a course in seconds).
STALLED_AFTER = timedelta(minutes=10)
# An instructor's launch syncs the course at most this often.
RELAUNCH_QUIET = timedelta(minutes=10)


class SyncFailed(Exception):
    """The platform could not be read (network, a 5xx, a refused token): nothing was applied."""


def roster_sync_request(*, context: LtiContext, classroom: Classroom, requested_by: Any = None) -> RosterSync:
    """Queue a sync of `context`'s members into `classroom`, run after commit (SYNC_TASK)."""
    record = RosterSync.objects.create(
        context=context,
        classroom=classroom,
        requested_by=requested_by if getattr(requested_by, "pk", None) else None,
    )
    background.enqueue(SYNC_TASK, record.pk)
    return record


def roster_sync_after_launch(*, context: LtiContext, classroom: Classroom) -> RosterSync | None:
    """After an instructor's launch: queue a sync of the course, unless it offers no NRPS or one
    was queued or done in the last RELAUNCH_QUIET (a teacher launching again and again)."""
    if not context.memberships_url:
        return None
    recent = RosterSync.objects.filter(context=context, created_at__gte=timezone.now() - RELAUNCH_QUIET)
    if recent.exclude(status=RosterSync.Status.FAILED).exists():
        return None
    return roster_sync_request(context=context, classroom=classroom)


def roster_sync(*, sync_id: int) -> dict[str, int]:
    """Run one queued sync and record its counts (status done), or why the platform could not be
    read (status failed, nothing applied: a teacher asks again). A sync that is not queued any
    more (a second delivery of its task) is left alone and its counts returned, unless it has
    been running for STALLED_AFTER (its worker died: the redelivered task runs it again)."""
    now = timezone.now()
    stalled = Q(status=RosterSync.Status.RUNNING, started_at__lt=now - STALLED_AFTER)
    claimed = RosterSync.objects.filter(Q(status=RosterSync.Status.QUEUED) | stalled, pk=sync_id).update(
        status=RosterSync.Status.RUNNING, started_at=now
    )
    record = RosterSync.objects.select_related("context__deployment__registration__platform", "classroom").get(
        pk=sync_id
    )
    if not claimed:
        return dict(record.counts)
    try:
        members = _members(record.context)
    except SyncFailed as exc:
        RosterSync.objects.filter(pk=sync_id).update(
            status=RosterSync.Status.FAILED, detail=str(exc)[:2000], finished_at=timezone.now()
        )
        logger.warning("LTI roster sync %s of context %s failed: %s", sync_id, record.context_id, exc)
        return {}
    counts = members_apply(context=record.context, classroom=record.classroom, members=members)
    RosterSync.objects.filter(pk=sync_id).update(
        status=RosterSync.Status.DONE, counts=counts, finished_at=timezone.now()
    )
    logger.info("LTI roster sync %s of context %s: %s", sync_id, record.context_id, counts)
    return counts


def _members(context: LtiContext) -> list[dict[str, Any]]:
    if not context.memberships_url:
        raise SyncFailed("the platform gave this course no memberships URL (NRPS is not enabled for the tool)")
    if not context.deployment.registration.is_active:
        raise SyncFailed("the platform is turned off")
    try:
        service = NamesRolesProvisioningService(
            service_connector(context.deployment.registration), {"context_memberships_url": context.memberships_url}
        )
        members = service.get_members()
    except (LtiServiceException, LtiException, requests.RequestException) as exc:
        raise SyncFailed(f"the platform's memberships could not be read: {exc}") from exc
    # NRPS says a member without a status is active (django-lti reads the key).
    return [{**member, "status": member.get("status") or "Active"} for member in members if member.get("user_id")]


def members_apply(*, context: LtiContext, classroom: Classroom, members: list[dict[str, Any]]) -> dict[str, int]:
    """Apply NRPS `members` to `classroom` (the module's rules); returns the counts."""
    counts = dict.fromkeys(COUNTS, 0)
    registration = context.deployment.registration
    platform = registration.platform
    listed: set[str] = set()
    with transaction.atomic():
        context.update_memberships(members)  # django-lti's LtiUser and LtiMembership rows
        for member in members:
            sub = member["user_id"]
            listed.add(sub)
            if member["status"] != "Active":
                # Never created for this: only someone the tool knows has an enrolment to end.
                known = LtiUser.objects.filter(registration=registration, sub=sub).first()
                person = known.auth_user if known else None
                ended = person is not None and enrollment_remove(classroom=classroom, person=person)
                counts["ended" if ended else "unchanged"] += 1
                continue
            try:
                person = person_for_claims(platform=platform, claims=member)
            except Refused:
                counts["skipped"] += 1
                continue
            person_link(platform=platform, sub=sub, person=person)
            if person.role not in (User.Role.STUDENT, User.Role.TEACHER):
                counts["skipped"] += 1  # a school administrator, who sees every class of the school
                continue
            counts[_enrol(classroom, person)] += 1
        gone = LtiMembership.objects.filter(context=context).exclude(user__sub__in=listed)
        for membership in gone.select_related("user__auth_user"):
            person = membership.user.auth_user
            if person is not None and enrollment_remove(classroom=classroom, person=person):
                counts["ended"] += 1
        gone.filter(is_active=True).update(is_active=False)
    return counts


def _enrol(classroom: Classroom, person: User) -> str:
    """created, updated (made active again) or unchanged."""
    if person.role == User.Role.STUDENT:
        was_active = classroom.enrollments.filter(student=person).values_list("active", flat=True).first()
    else:
        was_active = classroom.teacher_enrollments.filter(teacher=person).values_list("active", flat=True).first()
    _row, created = enrollment_add(classroom=classroom, person=person, role=person.role)
    return "created" if created else "unchanged" if was_active else "updated"


# --- A class's syncs ---------------------------------------------------------------------------


def classroom_syncs_request(*, classroom: Classroom, requested_by: Any) -> list[RosterSync]:
    """Queue a sync of every LMS course linked to `classroom`; Conflict when there is none."""
    contexts = LtiContext.objects.filter(classroom_link__classroom=classroom).order_by("pk")
    if not contexts:
        raise Conflict(_("This class is linked to no LMS course."))
    with transaction.atomic():
        return [
            roster_sync_request(context=context, classroom=classroom, requested_by=requested_by) for context in contexts
        ]


def classroom_syncs(*, classroom: Classroom) -> list[RosterSync]:
    """The class's 20 latest syncs, the newest first."""
    return list(RosterSync.objects.filter(classroom=classroom).select_related("context")[:20])
