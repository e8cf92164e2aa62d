"""Reading retention policies: whose a user may manage (the one scoping primitive of this app),
and what a school or a class follows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from accounts.models import Classroom, School
from accounts.selectors import classroom_get_overseen, is_school_manager, schools_administered_by
from core.errors import Forbidden, NotFound
from retention.models import RetentionPolicy, RetentionRun
from retention.policies import Periods, PolicyBook


@dataclass(frozen=True)
class PolicyView:
    """A school's or a class's periods, whether they are its own, and its school's last run."""

    school: School
    classroom: Classroom | None
    own: RetentionPolicy | None
    periods: Periods
    last_run: RetentionRun | None


def _manager_only(user: Any) -> None:
    if not is_school_manager(user):
        raise Forbidden(_("Only staff and school administrators manage retention policies."))


def school_get_managed(*, user: Any, school_id: Any) -> School:
    """A school whose policy `user` manages: one of `schools_administered_by(user)` (every one
    for staff). Forbidden for anyone who is neither staff nor a school administrator, whatever
    the id; NotFound for a school outside the user's."""
    _manager_only(user)
    school = schools_administered_by(user).filter(pk=school_id).first()
    if school is None:
        raise NotFound(_("School not found."))
    return school


def classroom_get_managed(*, user: Any, classroom_id: Any) -> Classroom:
    """A class whose own policy `user` manages. The class is looked up as its teachers see it
    (`classroom_get_overseen`: NotFound for a class outside the user's, and for a student);
    then its teachers are Forbidden: a class's policy is its school's administrators' and
    staff's."""
    classroom = classroom_get_overseen(user=user, classroom_id=classroom_id)
    _manager_only(user)
    return classroom


def policies_visible_to(user: Any) -> QuerySet[RetentionPolicy]:
    """The policies `user` manages (the admin's scope): every one for staff; for a school
    administrator, those of their schools and of their schools' classes; none for anyone else."""
    if not is_school_manager(user):
        return RetentionPolicy.objects.none()
    schools = schools_administered_by(user).values("pk")
    return RetentionPolicy.objects.filter(Q(school__in=schools) | Q(classroom__school__in=schools))


def runs_visible_to(user: Any) -> QuerySet[RetentionRun]:
    """The runs of the schools `user` administers (every one for staff; none for anyone else)."""
    if not is_school_manager(user):
        return RetentionRun.objects.none()
    return RetentionRun.objects.filter(school__in=schools_administered_by(user).values("pk"))


def last_run(school: School) -> RetentionRun | None:
    return RetentionRun.objects.filter(school=school).order_by("-started_at", "-pk").first()


def school_policy_view(school: School) -> PolicyView:
    own = RetentionPolicy.objects.filter(school=school).first()
    periods = PolicyBook().school_periods(school.pk)
    return PolicyView(school=school, classroom=None, own=own, periods=periods, last_run=last_run(school))


def classroom_policy_view(classroom: Classroom) -> PolicyView:
    own = RetentionPolicy.objects.filter(classroom=classroom).first()
    periods = PolicyBook().classroom_periods(classroom.pk, classroom.school_id)
    return PolicyView(
        school=classroom.school, classroom=classroom, own=own, periods=periods, last_run=last_run(classroom.school)
    )
