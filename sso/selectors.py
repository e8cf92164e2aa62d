"""Reading identity providers: which a user manages (the one scoping primitive of this app),
which anyone may sign in with, and whom a provider's claims name."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from accounts.models import School, User
from accounts.selectors import is_school_manager, schools_administered_by, schools_under
from core.errors import Forbidden, NotFound
from sso.models import IdentityProvider


def providers_visible_to(user: Any) -> QuerySet[IdentityProvider]:
    """The providers `user` manages: every one for staff; those of the schools a school
    administrator administers (`schools_administered_by`); none for anyone else."""
    if not is_school_manager(user):
        return IdentityProvider.objects.none()
    return IdentityProvider.objects.filter(school__in=schools_administered_by(user).values("pk"))


def provider_list(*, user: Any) -> QuerySet[IdentityProvider]:
    """The providers `user` manages; Forbidden for a user who manages none by role."""
    if not is_school_manager(user):
        raise Forbidden(_("Only staff and school administrators manage identity providers."))
    return providers_visible_to(user).select_related("school")


def provider_get(*, user: Any, provider_id: int) -> IdentityProvider:
    """One provider `user` manages, or NotFound (one of another school is not revealed)."""
    provider = providers_visible_to(user).select_related("school").filter(pk=provider_id).first()
    if provider is None:
        raise NotFound(_("Identity provider not found."))
    return provider


def providers_for_sign_in(*, school_id: int | None = None) -> QuerySet[IdentityProvider]:
    """The providers a sign-in page offers: active, of an active school; with `school_id`, those
    of that school and of the districts above it (two levels up)."""
    providers = IdentityProvider.objects.filter(active=True, school__active=True).select_related("school")
    if school_id is not None:
        providers = providers.filter(
            Q(school_id=school_id) | Q(school__children=school_id) | Q(school__children__children=school_id)
        ).distinct()
    return providers.order_by("school__name", "name", "pk")


def provider_for_sign_in(provider_id: Any) -> IdentityProvider | None:
    """The provider to sign in with, if it is one of `providers_for_sign_in`."""
    if not str(provider_id).isdigit():
        return None
    return providers_for_sign_in().filter(pk=int(provider_id)).first()


def provider_schools(provider: IdentityProvider) -> QuerySet[School]:
    """The schools whose people sign in with `provider`: its school, and under a district the
    schools under it (two levels down, as a district administrator's scope)."""
    return schools_under(provider.school_id)


def people_matching_claims(
    *, provider: IdentityProvider, external_id: str | None, email: str | None, email_verified: bool
) -> list[User]:
    """Whom a provider's verified claims name among the people of its schools (staff accounts
    never): the person whose `external_id` is the external-id claim; else, only when the
    provider says the address is verified, those whose email is the email claim (ignoring
    case). Deactivated people are included: the caller refuses them by name."""
    people = User.objects.filter(school__in=provider_schools(provider).values("pk")).exclude(role=User.Role.STAFF)
    if external_id:
        found = list(people.filter(external_id=external_id)[:2])
        if found:
            return found
    if email and email_verified:
        return list(people.filter(email__iexact=email).order_by("pk")[:2])
    return []
