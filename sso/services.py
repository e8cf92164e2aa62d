"""Writing identity providers (a school's administrators, or staff), and the sign-in's own
writes: who a provider's claims sign in, and a native app's one-time code (docs/sso.md)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.conf import settings
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import schools_administered_by
from core.errors import ApplicationError, NotFound
from sso.discovery import issuer_refusal
from sso.errors import SignInRefused
from sso.models import AppSignInCode, IdentityProvider
from sso.selectors import people_matching_claims, provider_get, provider_list

# The fields an administrator sets (the API's and the admin's).
PROVIDER_FIELDS = ("name", "issuer", "client_id", "client_secret", "external_id_claim", "email_claim", "active")


def _issuer_check(issuer: str) -> None:
    # Resolving the name now refuses a provider on the server's own network at once; each
    # fetch checks again (sso.discovery).
    refusal = issuer_refusal(issuer)
    if refusal:
        raise ApplicationError(
            _("This issuer cannot be used: %(why)s.") % {"why": refusal}, details={"issuer": [refusal]}
        )


def provider_create(*, user: Any, school_id: int, **values: Any) -> IdentityProvider:
    """A provider for school `school_id`, one of those `user` administers (NotFound otherwise;
    Forbidden for a user who manages none). Invalid for an issuer refused by
    `sso.discovery.issuer_refusal`."""
    provider_list(user=user)  # Forbidden for a role that manages none
    school = schools_administered_by(user).filter(pk=school_id).first()
    if school is None:
        raise NotFound(_("School not found."))
    _issuer_check(values["issuer"])
    return IdentityProvider.objects.create(
        school=school, **{key: value for key, value in values.items() if key in PROVIDER_FIELDS}
    )


def provider_update(*, user: Any, provider_id: int, **changes: Any) -> IdentityProvider:
    """Change a provider `user` manages (NotFound as `provider_get`): the fields given only."""
    provider = provider_get(user=user, provider_id=provider_id)
    if "issuer" in changes:
        _issuer_check(changes["issuer"])
    fields = [key for key in changes if key in PROVIDER_FIELDS]
    for key in fields:
        setattr(provider, key, changes[key])
    provider.save(update_fields=[*fields, "updated_at"])
    return provider


def provider_delete(*, user: Any, provider_id: int) -> None:
    """Remove a provider `user` manages (NotFound as `provider_get`); its people sign in no more
    with it, and its apps' codes not yet exchanged are spent."""
    provider_get(user=user, provider_id=provider_id).delete()


def _claim_true(value: Any) -> bool:
    # Some providers send the boolean as a string.
    return value is True or (isinstance(value, str) and value.lower() == "true")


def person_signing_in(*, provider: IdentityProvider, claims: dict[str, Any]) -> User:
    """The person the provider's verified claims sign in: one the roster or the provisioning
    API already knows, in the provider's schools, by the external-id claim, else by the email
    claim when `email_verified` is true (sso.selectors.people_matching_claims). SignInRefused
    for no one, for two people with that address, and for a deactivated person. No account is
    ever made here."""
    external_id = claims.get(provider.external_id_claim)
    email = claims.get(provider.email_claim)
    people = people_matching_claims(
        provider=provider,
        external_id=str(external_id) if external_id not in (None, "") else None,
        email=email if isinstance(email, str) else None,
        email_verified=_claim_true(claims.get("email_verified")),
    )
    if not people:
        raise SignInRefused(
            _("This account is not known to %(school)s. Ask your school to add you first.")
            % {"school": provider.school.name}
        )
    if len(people) > 1:
        raise SignInRefused(_("More than one person has this email address here. Ask your school to fix it."))
    person = people[0]
    if not person.is_active:
        raise SignInRefused(_("This account is deactivated. Ask your school."))
    return person


def _code_hash(code: str) -> str:
    return salted_hmac("sso.AppSignInCode", code, algorithm="sha256").hexdigest()


def app_code_issue(*, user: User, provider: IdentityProvider, code_challenge: str) -> str:
    """A one-time code for a native app to exchange for `user`'s token with the verifier of
    `code_challenge` (S256) within OIDC_APP_CODE_SECONDS. Only its HMAC is stored; expired
    codes are removed here."""
    now = timezone.now()
    AppSignInCode.objects.filter(expires_at__lt=now).delete()
    code = secrets.token_urlsafe(32)
    AppSignInCode.objects.create(
        code_hash=_code_hash(code),
        user=user,
        provider=provider,
        code_challenge=code_challenge,
        expires_at=now + timedelta(seconds=settings.OIDC_APP_CODE_SECONDS),
    )
    return code


def app_code_redeem(*, code: str, code_verifier: str) -> User:
    """The person a one-time code signs in. The code is spent by this call whatever follows (a
    second call with it fails, a right verifier after a wrong one too). Invalid, with one
    message, for an unknown, used or expired code, a verifier that does not match its
    challenge, and a person deactivated since."""
    refused = ApplicationError(_("This code is unknown, expired or already used, or the verifier does not match."))
    row = AppSignInCode.objects.select_related("user").filter(code_hash=_code_hash(code)).first()
    # The delete decides between two exchanges of one code at once: one of them deletes it.
    if row is None or AppSignInCode.objects.filter(pk=row.pk).delete()[0] == 0:
        raise refused
    if row.expires_at <= timezone.now() or not row.user.is_active:
        raise refused
    if not constant_time_compare(create_s256_code_challenge(code_verifier), row.code_challenge):
        raise refused
    return row.user
