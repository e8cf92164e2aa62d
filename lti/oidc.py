"""pylti1p3's OIDC login and message launch, wired to django-lti's models, with three changes
of the tool's own:

- **Registrations are the tool's platforms only.** A registration without its `lti.Platform`
  (its school), or inactive, is unknown; so is a deployment id the platform's administrator did
  not register: django-lti would create it on the fly (inactive), the launch refuses it.
- **The login state cookie survives the LMS's frame.** The tool runs in an iframe of another
  site, where browsers block third-party cookies: the state cookie is `SameSite=None; Secure;
  Partitioned` (CHIPS), kept for that LMS only, and sent back with the platform's form post
  inside the same frame. Chromium keeps Secure cookies on `http://localhost` and `127.0.0.1`,
  so the development server and the tests need no TLS.
- **A launch is used once.** pylti1p3 checks that the id_token's nonce was issued by this tool
  but does not consume it; `launch_validate` does, so a replayed form post is refused.
"""

from __future__ import annotations

from http.cookies import Morsel
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from lti_tool.models import LtiDeployment, LtiLaunch, LtiRegistration
from lti_tool.utils import DjangoToolConfig
from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoMessageLaunch, DjangoOIDCLogin
from pylti1p3.contrib.django.cookie import DjangoCookieService
from pylti1p3.contrib.django.request import DjangoRequest
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException

# An id_token lives minutes; its nonce is remembered as used for longer than any platform's.
USED_NONCE_SECONDS = 24 * 3600


class _PartitionedMorsel(Morsel[str]):
    """A cookie with the `Partitioned` attribute, which Python's http.cookies knows from 3.14."""

    def OutputString(self, attrs: Any = None) -> str:  # noqa: N802 (Morsel's name)
        return super().OutputString(attrs) + "; Partitioned"


class FrameCookieService(DjangoCookieService):
    """pylti1p3's cookies (the login state), set `SameSite=None; Secure; Partitioned` whatever
    the scheme, so that they live in the LMS's cross-site frame (module docstring)."""

    def update_response(self, response: HttpResponse) -> None:
        to_set: dict[str, dict[str, Any]] = self._cookie_data_to_set or {}
        for key, data in to_set.items():
            response.set_cookie(
                key, data["value"], max_age=data["exp"], secure=True, httponly=True, samesite="None", path="/"
            )
            morsel = _PartitionedMorsel()
            morsel.update(response.cookies[key])
            morsel.set(key, response.cookies[key].value, response.cookies[key].coded_value)
            response.cookies[key] = morsel


class ToolConfig(DjangoToolConfig):
    """django-lti's tool configuration, limited to the tool's platforms and their registered
    deployments (module docstring)."""

    def find_registration_by_params(self, iss: str, client_id: str | None, *args: Any, **kwargs: Any) -> Any:
        lookups: dict[str, Any] = {"issuer": iss, "platform__isnull": False}
        if client_id is not None:
            lookups["client_id"] = client_id
        if self.registration_uuid is not None:
            lookups["uuid"] = self.registration_uuid
        matches = list(LtiRegistration.objects.active().filter(**lookups)[:2])
        if len(matches) != 1:  # unknown, or an issuer of several clients that named none
            return None
        self.registration = matches[0]
        return self.registration.to_registration()

    def find_deployment(self, iss: str, deployment_id: str) -> Any:
        return self.find_deployment_by_params(iss, deployment_id, None)

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str | None, *args: Any, **kwargs: Any
    ) -> Any:
        if self.registration is None:
            return None
        self.deployment = LtiDeployment.objects.filter(
            registration=self.registration, deployment_id=deployment_id, is_active=True
        ).first()
        if self.deployment is None:
            return None
        return Deployment().set_deployment_id(self.deployment.deployment_id)


def login_redirect(request: HttpRequest) -> HttpResponse:
    """Answer the platform's OIDC login initiation (GET or POST): a redirect to the platform's
    authorisation URL with a fresh state (in the frame's cookie) and nonce (in the cache).
    Raises pylti1p3's LtiException/OIDCException for an unknown issuer or client, or a request
    without its parameters."""
    params = request.POST if request.method == "POST" else request.GET
    target = params.get("target_link_uri")
    if not target:
        raise LtiException("Missing target_link_uri parameter.")
    django_request = DjangoRequest(request)
    login = DjangoOIDCLogin(
        django_request,
        ToolConfig(),
        cookie_service=FrameCookieService(django_request),
        launch_data_storage=DjangoCacheDataStorage(),
    )
    response: HttpResponse = login.redirect(target)
    return response


def launch_validate(request: HttpRequest) -> LtiLaunch:
    """The platform's launch (its form post of `id_token` and `state`), checked by pylti1p3: the
    state against the frame's cookie, the signature against the platform's JWKS, expiry,
    issuer, audience, nonce, deployment and message; then the nonce is consumed, once across
    every process (an atomic `cache.add`). Raises LtiException for any failure."""
    django_request = DjangoRequest(request, post_only=True)
    message_launch = DjangoMessageLaunch(
        django_request,
        ToolConfig(),
        cookie_service=FrameCookieService(django_request),
        launch_data_storage=DjangoCacheDataStorage(),
    )
    message_launch.validate()
    launch = LtiLaunch(message_launch)
    nonce = launch.get_claim("nonce")
    if not cache.add(f"lti:used-nonce:{nonce}", 1, timeout=USED_NONCE_SECONDS):
        raise LtiException("This launch was already used.")
    return launch


def launch_restore(request: HttpRequest, launch_id: str) -> LtiLaunch | None:
    """The validated launch `launch_id` names (pylti1p3 keeps it in the cache for a day, under
    the frame's session cookie on HTTPS), or None. The id is 128 random bits: whoever holds it
    holds that launch, as the deep-linking page's form does."""
    django_request = DjangoRequest(request)
    storage = DjangoCacheDataStorage()
    try:
        message_launch = DjangoMessageLaunch.from_cache(
            launch_id,
            django_request,
            ToolConfig(),
            cookie_service=FrameCookieService(django_request),
            launch_data_storage=storage,
        )
        message_launch.validate_registration()
    except LtiException:
        return None
    return LtiLaunch(message_launch)
