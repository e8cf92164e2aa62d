"""Writing retention policies: a school's, and a class's own (docs/privacy.md#retention)."""

from __future__ import annotations

from typing import Any

from retention.models import PERIOD_FIELDS, RetentionPolicy
from retention.selectors import (
    PolicyView,
    classroom_get_managed,
    classroom_policy_view,
    school_get_managed,
    school_policy_view,
)


def _policy_save(*, user: Any, periods: dict[str, int | None], **owner: Any) -> None:
    """Write the policy of `owner` (school= or classroom=): every period, a missing one null."""
    values = {name: periods.get(name) for name in PERIOD_FIELDS}
    RetentionPolicy.objects.update_or_create(**owner, defaults={**values, "updated_by": user})


def school_policy_set(*, user: Any, school_id: Any, periods: dict[str, int | None]) -> PolicyView:
    """Set the school's periods (each missing one is null: kept). Forbidden or NotFound as
    `school_get_managed`. The same call again changes nothing."""
    school = school_get_managed(user=user, school_id=school_id)
    _policy_save(user=user, periods=periods, school=school)
    return school_policy_view(school)


def classroom_policy_set(*, user: Any, classroom_id: Any, periods: dict[str, int | None]) -> PolicyView:
    """Give the class its own periods, which replace its school's for its students (each
    missing one is null: kept). Forbidden or NotFound as `classroom_get_managed`."""
    classroom = classroom_get_managed(user=user, classroom_id=classroom_id)
    _policy_save(user=user, periods=periods, classroom=classroom)
    return classroom_policy_view(classroom)


def classroom_policy_clear(*, user: Any, classroom_id: Any) -> PolicyView:
    """Remove the class's own policy: it follows its school's again. Idempotent."""
    classroom = classroom_get_managed(user=user, classroom_id=classroom_id)
    RetentionPolicy.objects.filter(classroom=classroom).delete()
    return classroom_policy_view(classroom)
