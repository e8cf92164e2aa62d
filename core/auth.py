"""Authentication for the API: a token (mobile, scripts) or a Django session (the web).

DRF authenticates inside the view, after Django's middleware has run, so these classes also
switch the request to the user's own language once the user is known (before that,
Accept-Language chose it): every message of the answer is then in the user's language.
A session-authenticated write without a valid CSRF token is a 403 with the code `csrf_failed`.
"""

from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.request import Request


class CsrfFailed(exceptions.PermissionDenied):
    default_code = "csrf_failed"
    default_detail = _("CSRF check failed: send the csrftoken cookie's value in the X-CSRFToken header.")


def _use_language(result: Any) -> Any:
    if result is not None:
        language = getattr(result[0], "language", "")
        if language:
            translation.activate(language)
    return result


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request: Request) -> Any:
        return _use_language(super().authenticate(request))


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate(self, request: Request) -> Any:
        return _use_language(super().authenticate(request))

    def enforce_csrf(self, request: Request) -> None:
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as exc:
            raise CsrfFailed(detail=CsrfFailed.default_detail) from exc
