"""The relying party: Authlib's Django client signs a person in with a school's provider
(authorization code with PKCE S256, a nonce, and the state kept in this browser's session).

Authlib does every check of the answer: the state against the session (one use), the code
exchanged with the PKCE verifier, the ID token's signature against the provider's JWKS and
its `iss` (the discovery document's issuer), `aud` (our client id: `_claims_options`), `exp`,
`iat` and `nonce`.
This module only starts and finishes the flow and turns Authlib's, joserfc's and requests'
failures into the app's errors (sso.errors)."""

from __future__ import annotations

import time
from typing import Any

import requests
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from authlib.integrations.django_client import DjangoIntegration, DjangoOAuth2App
from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import gettext as _
from joserfc.errors import JoseError

from sso.discovery import provider_metadata
from sso.errors import CallbackInvalid, ProviderAnswerInvalid, ProviderUnavailable
from sso.models import IdentityProvider
from sso.selectors import provider_for_sign_in

SCOPE = "openid email profile"
# One name for every provider: the callback finds the sign-in by its state alone
# (the session key `_state_oidc_<state>`), then the provider in it.
STATE_NAME = "oidc"
# A sign-in not finished within this long is forgotten.
PENDING_SECONDS = 600
# ID tokens signed with a provider's published keys only: never `none`, never a MAC keyed with
# our client secret. RS256 is what every provider must support (OpenID Connect Core 15.1).
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


def _integration() -> DjangoIntegration:
    integration = DjangoIntegration(STATE_NAME)
    integration.expires_in = PENDING_SECONDS
    return integration


def _client(provider: IdentityProvider) -> DjangoOAuth2App:
    """Authlib's client for `provider`, on its (cached) discovery document."""
    metadata = provider_metadata(provider.issuer)
    offered = metadata.get("id_token_signing_alg_values_supported")
    algorithms = [alg for alg in offered if alg in SIGNING_ALGORITHMS] if isinstance(offered, list) else []
    return DjangoOAuth2App(
        _integration(),
        name=STATE_NAME,
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        client_kwargs={
            "scope": SCOPE,
            "code_challenge_method": "S256",
            "default_timeout": settings.OIDC_TIMEOUT_SECONDS,
        },
        issuer=metadata["issuer"],
        authorization_endpoint=metadata["authorization_endpoint"],
        token_endpoint=metadata["token_endpoint"],
        jwks_uri=metadata["jwks_uri"],
        id_token_signing_alg_values_supported=algorithms or ["RS256"],
    )


def sign_in_begin(
    request: HttpRequest, *, provider: IdentityProvider, callback_url: str, pending: dict[str, Any]
) -> str:
    """The provider's authorization URL to send the browser to. The state, nonce and PKCE
    verifier, with `pending` (what to do once signed in), are kept in the session for
    PENDING_SECONDS. ProviderUnavailable or ProviderAnswerInvalid when discovery fails."""
    client = _client(provider)
    started = client.create_authorization_url(redirect_uri=callback_url)
    client.save_authorize_data(request, redirect_uri=callback_url, provider=provider.pk, pending=pending, **started)
    return str(started["url"])


def _pending(request: HttpRequest, state: str) -> dict[str, Any]:
    entry = request.session.get(f"_state_{STATE_NAME}_{state}")
    if not state or not isinstance(entry, dict) or entry.get("exp", 0) < time.time():
        raise CallbackInvalid(
            _("This sign-in is not the one started in this browser, or it was already used. Start again.")
        )
    return dict(entry["data"])


def _claims_options(client: DjangoOAuth2App) -> dict[str, Any]:
    """The ID token's `iss` must be the discovery document's issuer and its `aud` must name our
    client id (OpenID Connect Core 3.1.3.7): Authlib checks `aud` only when told to (without it,
    a token for another client that names us as `azp` would pass)."""
    return {
        "iss": {"essential": True, "value": client.server_metadata["issuer"]},
        "aud": {"essential": True, "value": client.client_id},
    }


def sign_in_pending(request: HttpRequest) -> dict[str, Any] | None:
    """The `pending` of the sign-in this callback answers, if its state matches one of this
    session (nothing is spent)."""
    try:
        return dict(_pending(request, request.GET.get("state", "")).get("pending") or {})
    except CallbackInvalid:
        return None


def _exchange(request: HttpRequest, provider: IdentityProvider) -> dict[str, Any]:
    """The provider's token answer for this callback's code, its ID token checked by Authlib
    (`userinfo`: the verified claims), or the error that says why not."""
    try:
        client = _client(provider)
        return dict(client.authorize_access_token(request, claims_options=_claims_options(client)))
    except MismatchingStateError as exc:
        raise CallbackInvalid(_("This sign-in was already used. Start again.")) from exc
    except OAuthError as exc:
        if exc.error == "invalid_grant":
            raise CallbackInvalid(_("The identity provider no longer accepts this sign-in. Start again.")) from exc
        raise ProviderAnswerInvalid(
            _("The identity provider refused the exchange (%(error)s).") % {"error": exc.error}
        ) from exc
    except requests.HTTPError as exc:
        if exc.response is not None and exc.response.status_code >= 500:
            raise ProviderUnavailable(_("The identity provider is failing. Try again later.")) from exc
        raise ProviderAnswerInvalid(_("The identity provider answered with an error.")) from exc
    except requests.RequestException as exc:
        raise ProviderUnavailable(_("The identity provider cannot be reached. Try again later.")) from exc
    except JoseError as exc:
        raise ProviderAnswerInvalid(
            _("The identity provider's ID token is not valid (%(why)s).") % {"why": exc.description or exc.error}
        ) from exc
    except (ValueError, KeyError, TypeError) as exc:
        # A token answer or a key set that is not the JSON object OAuth and JWK define.
        raise ProviderAnswerInvalid(_("The identity provider's answer is not valid.")) from exc


def sign_in_finish(request: HttpRequest) -> tuple[IdentityProvider, dict[str, Any], dict[str, Any]]:
    """Finish the sign-in this callback answers: the provider, the ID token's verified claims
    and the sign-in's `pending`. The sign-in's state is spent whatever happens after it is
    found. CallbackInvalid for a state that matches no sign-in of this session (or one used
    already), an error sent back by the provider, or a code it refuses; ProviderUnavailable and
    ProviderAnswerInvalid for a provider that fails or answers something unverifiable."""
    state = request.GET.get("state", "")
    data = _pending(request, state)
    try:
        provider = provider_for_sign_in(data.get("provider"))
        if provider is None:
            raise CallbackInvalid(_("This identity provider is no longer available."))
        if request.GET.get("error"):
            raise CallbackInvalid(
                _("The identity provider did not sign you in (%(error)s).") % {"error": request.GET["error"][:100]}
            )
        token = _exchange(request, provider)
    finally:
        # Spent, whatever the answer (Authlib spends it too once the exchange starts).
        _integration().clear_state_data(request.session, state)
    claims = token.get("userinfo")
    if not claims:
        raise ProviderAnswerInvalid(_("The identity provider sent no ID token."))
    return provider, dict(claims), dict(data.get("pending") or {})
