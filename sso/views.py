"""The browser's side of signing in with a school's provider (docs/sso.md):

- `GET /auth/oidc/{id}/login/?next=/app/...` sends the browser to the provider;
- `GET /auth/oidc/callback/` comes back from it, signs the person in with a session and sends
  them to `next` (a page of the app), or to their role's page.

A native app starts the same way with `redirect_uri` (one of OIDC_APP_REDIRECT_URIS),
`code_challenge` (S256) and its `state`; the callback then signs no session in, and sends the
app's redirect URI a one-time code of ours (and its state), which the app exchanges with its
verifier at POST /api/v1/auth/oidc/token/ (sso.apis).

A refusal is a page saying why, with the status of its error (sso.errors): 403 for a person
this product does not let in, 400 for a callback of no sign-in of this browser (a wrong or
used state), 502 or 503 for a provider that answers garbage or is down; for an app, once its
redirect URI is known, the refusal goes back to it as `error` and `error_description`."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from accounts.models import User
from core.errors import ApplicationError, NotFound
from sso.errors import CallbackInvalid, ProviderUnavailable, SignInRefused
from sso.relying_party import sign_in_begin, sign_in_finish, sign_in_pending
from sso.selectors import provider_for_sign_in
from sso.services import app_code_issue, person_signing_in

# RFC 7636: BASE64URL(SHA256(verifier)), 43 characters without padding.
CODE_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
# The session's backend: the password's, which loads the signed-in person on each request.
SESSION_BACKEND = "accounts.backends.LockoutBackend"


def refusal_page(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    """The page that says why the sign-in stopped, with the error's status."""
    context = {"message": error.message, "code": error.code, "retry": error.retry_safe}
    return render(request, "sso/refused.html", context, status=error.status_code)


def _safe_next(value: str) -> str:
    """`value` if it is a page of the web app on this site (a path under /app/, with no dot
    segment, encoded or not), else ''."""
    parts = urlsplit(value)
    if not url_has_allowed_host_and_scheme(value, allowed_hosts=None) or parts.scheme or parts.netloc:
        return ""
    if not parts.path.startswith(reverse("web:student")) or "\\" in value or re.search(r"\.\.|%2e", value, re.I):
        return ""
    return value


class AppRedirect(HttpResponseRedirect):
    """A redirect to a native app's redirect URI, whose scheme is the app's own
    (`org.example.tutor:/oidc`): allowed because the URI is one of OIDC_APP_REDIRECT_URIS."""

    def __init__(self, redirect_uri: str, params: dict[str, str]) -> None:
        self.allowed_schemes = [urlsplit(redirect_uri).scheme]
        separator = "&" if "?" in redirect_uri else "?"
        super().__init__(redirect_uri + separator + urlencode(params))


def _app_request(request: HttpRequest) -> dict[str, str] | None:
    """A native app's parameters, None for a browser's sign-in; CallbackInvalid when they are
    not ones an app of this deployment sends."""
    redirect_uri = request.GET.get("redirect_uri")
    if redirect_uri is None:
        return None
    if redirect_uri not in settings.OIDC_APP_REDIRECT_URIS:
        raise CallbackInvalid(_("This app's redirect URI is not allowed (OIDC_APP_REDIRECT_URIS)."))
    challenge = request.GET.get("code_challenge", "")
    if request.GET.get("code_challenge_method", "S256") != "S256" or not CODE_CHALLENGE.match(challenge):
        raise CallbackInvalid(_("An app signs in with PKCE: code_challenge, the S256 of its verifier."))
    state = request.GET.get("state", "")
    if len(state) > 500:
        raise CallbackInvalid(_("The app's state is too long."))
    return {"redirect_uri": redirect_uri, "code_challenge": challenge, "state": state}


@require_safe
def oidc_login(request: HttpRequest, provider_id: int) -> HttpResponse:
    """Send the browser to the provider, to come back to `oidc_callback`."""
    try:
        provider = provider_for_sign_in(provider_id)
        if provider is None:
            raise NotFound(_("This identity provider does not exist or is not active."))
        app = _app_request(request)
        pending: dict[str, Any] = {"app": app} if app else {"next": _safe_next(request.GET.get("next", ""))}
        callback = request.build_absolute_uri(reverse("sso:callback"))
        return HttpResponseRedirect(sign_in_begin(request, provider=provider, callback_url=callback, pending=pending))
    except ApplicationError as error:
        return refusal_page(request, error)


def _home(user: User) -> str:
    pages = {User.Role.STUDENT: "web:student", User.Role.GUARDIAN: "web:guardian"}
    return reverse(pages.get(User.Role(user.role), "web:teacher"))


@require_safe
def oidc_callback(request: HttpRequest) -> HttpResponse:
    """Finish the sign-in: a session and the page to go to, or the app's code."""
    app = (sign_in_pending(request) or {}).get("app")
    try:
        provider, claims, pending = sign_in_finish(request)
        person = person_signing_in(provider=provider, claims=claims)
    except ApplicationError as error:
        if app:
            kind = "access_denied" if isinstance(error, SignInRefused | CallbackInvalid) else "server_error"
            kind = "temporarily_unavailable" if isinstance(error, ProviderUnavailable) else kind
            params = {"error": kind, "error_description": error.message, "state": app["state"]}
            return AppRedirect(app["redirect_uri"], params)
        return refusal_page(request, error)
    if app:
        code = app_code_issue(user=person, provider=provider, code_challenge=app["code_challenge"])
        return AppRedirect(app["redirect_uri"], {"code": code, "state": app["state"]})
    login(request, person, backend=SESSION_BACKEND)
    return HttpResponseRedirect(pending.get("next") or _home(person))
