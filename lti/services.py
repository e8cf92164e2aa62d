"""Registering an LMS with the tool: a school's administrator (or staff) enters what the LMS
gave them (issuer, client id, deployment ids, its URLs), the tool keeps it as django-lti's
registration and deployments, tied to the school (lti.Platform)."""

from __future__ import annotations

from typing import Any, TypedDict

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from lti_tool.models import LtiDeployment, LtiRegistration

from accounts.selectors import schools_administered_by
from core.errors import Conflict, NotFound
from lti.keys import tool_key_ensure
from lti.models import Platform
from lti.selectors import platform_get, platform_list


class PlatformFields(TypedDict, total=False):
    """What the platform's administrator copies from the LMS; a key left out is left alone."""

    name: str
    issuer: str
    client_id: str
    auth_url: str
    token_url: str
    keyset_url: str
    deployment_ids: list[str]
    active: bool


_REGISTRATION_FIELDS = ("name", "issuer", "client_id", "auth_url", "token_url", "keyset_url")


def _taken() -> Conflict:
    return Conflict(
        _("This LMS (issuer and client id) is already registered."),
        details={"client_id": [_("Already registered for this issuer.")]},
    )


def _deployments_set(registration: LtiRegistration, deployment_ids: list[str]) -> None:
    """The listed deployments active (made if new), the others inactive: never deleted, the
    courses launched through them stay."""
    wanted = {d.strip() for d in deployment_ids if d.strip()}
    for deployment_id in wanted:
        LtiDeployment.objects.update_or_create(
            registration=registration, deployment_id=deployment_id, defaults={"is_active": True}
        )
    registration.deployments.exclude(deployment_id__in=wanted).update(is_active=False)


def platform_create(*, user: Any, school_id: int, fields: PlatformFields) -> Platform:
    """Register an LMS for school `school_id`. Forbidden for a user who manages no platform;
    NotFound for a school outside the user's; Conflict for an issuer and client id registered
    already. The tool's signing key is made now if none exists."""
    platform_list(user=user)  # Forbidden for a role that manages none
    school = schools_administered_by(user).filter(pk=school_id).first()
    if school is None:
        raise NotFound(_("School not found."))
    try:
        with transaction.atomic():
            registration = LtiRegistration.objects.create(
                **{key: fields[key] for key in _REGISTRATION_FIELDS},  # type: ignore[literal-required]
                is_active=fields.get("active", True),
            )
            _deployments_set(registration, fields.get("deployment_ids", []))
            platform = Platform.objects.create(registration=registration, school=school, created_by=user)
    except IntegrityError:
        raise _taken() from None
    tool_key_ensure()
    return platform


def platform_update(*, user: Any, platform_id: int, fields: PlatformFields) -> Platform:
    """Change a platform `user` manages (NotFound as `platform_get`); Conflict as on create."""
    platform = platform_get(user=user, platform_id=platform_id)
    registration = platform.registration
    try:
        with transaction.atomic():
            changed = [key for key in _REGISTRATION_FIELDS if key in fields]
            for key in changed:
                setattr(registration, key, fields[key])  # type: ignore[literal-required]
            if "active" in fields:
                registration.is_active = fields["active"]
                changed.append("is_active")
            if changed:
                registration.save(update_fields=[*changed, "datetime_modified"])
            if "deployment_ids" in fields:
                _deployments_set(registration, fields["deployment_ids"])
    except IntegrityError:
        raise _taken() from None
    return platform_get(user=user, platform_id=platform_id)


def platform_delete(*, user: Any, platform_id: int) -> None:
    """Remove a platform `user` manages and its registration (NotFound as `platform_get`): its
    launches stop; the people and classes they made stay, with their data."""
    platform = platform_get(user=user, platform_id=platform_id)
    platform.registration.delete()
