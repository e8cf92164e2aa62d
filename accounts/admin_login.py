"""The admin's sign-in, under the same lockout as the API's (accounts.backends).

`AdminLoginForm` shows a refusal of the lockout (or of a busy or cache-less server) as the form's
error, where Django's form would let the backend's exception through as a 500; `admin_login`
serves the admin's own login view with it and answers such a refusal 429 or 503 with
Retry-After. tutor/urls.py wires both (the admin site's `login_form`, and the login URL).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from core.errors import ApplicationError


class AdminLoginForm(AdminAuthenticationForm):
    refused: ApplicationError | None = None

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()
        except ApplicationError as exc:
            self.refused = exc
            raise ValidationError(exc.message, code=exc.code) from None


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin site's login view; a sign-in refused by the lockout is a 429 (503 when the server
    cannot count or check it now), with Retry-After, showing the form and the reason."""
    response = admin.site.login(request)
    form = (getattr(response, "context_data", None) or {}).get("form")
    refused = getattr(form, "refused", None)
    if isinstance(refused, ApplicationError):
        response.status_code = refused.status_code
        if refused.retry_after:
            response["Retry-After"] = str(refused.retry_after)
    return response
