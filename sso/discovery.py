"""A provider's endpoints, from its discovery document (`{issuer}/.well-known/openid-configuration`,
OpenID Connect Discovery 1.0), kept in the cache for OIDC_DISCOVERY_CACHE_SECONDS."""

from __future__ import annotations

import hashlib
from typing import Any

import requests
from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext as _

from core.signed_post import url_refusal
from sso.errors import ProviderAnswerInvalid, ProviderUnavailable

# What the sign-in uses of the document; each is a URL checked like the issuer.
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + "/.well-known/openid-configuration"


def issuer_refusal(url: str, *, resolve: bool = True) -> str | None:
    """Why the server may not fetch `url` from a provider, or None: not https (http only when
    OIDC_ALLOW_PRIVATE_ISSUERS, for a provider on the school's network or a test's), or a
    host on a loopback, private or reserved network (core.signed_post.url_refusal)."""
    allow_private = settings.OIDC_ALLOW_PRIVATE_ISSUERS
    if not allow_private and not url.lower().startswith("https://"):
        return "the URL must be https"
    return url_refusal(url, allow_private=allow_private, resolve=resolve)


def provider_fetch_json(url: str) -> Any:
    """GET `url` from a provider and return its JSON. ProviderUnavailable when it cannot be
    reached, times out or fails (5xx); ProviderAnswerInvalid for any other status or a body
    that is not JSON."""
    try:
        response = requests.get(url, timeout=settings.OIDC_TIMEOUT_SECONDS, allow_redirects=False)
    except requests.RequestException as exc:
        raise ProviderUnavailable(_("The identity provider cannot be reached. Try again later.")) from exc
    if response.status_code >= 500:
        raise ProviderUnavailable(_("The identity provider is failing. Try again later."))
    if response.status_code != 200:
        raise ProviderAnswerInvalid(
            _("The identity provider answered with an error (HTTP %(status)s).") % {"status": response.status_code}
        )
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderAnswerInvalid(_("The identity provider's answer is not JSON.")) from exc


def provider_metadata(issuer: str) -> dict[str, Any]:
    """The discovery document of `issuer`: from the cache, else fetched and checked (a JSON
    object whose `issuer` is `issuer`, with each of ENDPOINTS a URL the server may fetch).
    ProviderUnavailable or ProviderAnswerInvalid as `provider_fetch_json`, and
    ProviderAnswerInvalid for a document that fails the checks."""
    key = "sso:discovery:" + hashlib.sha256(issuer.encode()).hexdigest()
    cached = cache.get(key)
    if isinstance(cached, dict):
        return cached
    refusal = issuer_refusal(issuer)
    if refusal:
        raise ProviderAnswerInvalid(_("This identity provider may not be used: %(why)s.") % {"why": refusal})
    metadata = provider_fetch_json(discovery_url(issuer))
    if not isinstance(metadata, dict):
        raise ProviderAnswerInvalid(_("The identity provider's discovery document is not a JSON object."))
    # OpenID Connect Discovery 1.0, section 4.3: the document's issuer is exactly the one asked.
    if str(metadata.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
        raise ProviderAnswerInvalid(_("The identity provider's discovery document names another issuer."))
    for name in ENDPOINTS:
        value = metadata.get(name)
        if not isinstance(value, str) or issuer_refusal(value):
            raise ProviderAnswerInvalid(
                _("The identity provider's discovery document has no usable %(name)s.") % {"name": name}
            )
    cache.set(key, metadata, settings.OIDC_DISCOVERY_CACHE_SECONDS)
    return metadata
