"""Why a sign-in with a provider stopped, as the project's application errors: the browser's
page (sso.views) and the API's envelope show the same status, code and message."""

from __future__ import annotations

from rest_framework import status

from core.errors import ApplicationError, Forbidden, ServiceUnavailable


class CallbackInvalid(ApplicationError):
    """400: a callback that belongs to no sign-in started in this browser (a state that does not
    match, one already used), or a code the provider no longer accepts."""

    code = "sign_in_callback_invalid"


class SignInRefused(Forbidden):
    """403: the provider vouched for someone this product does not let in (unknown here, of
    another school, deactivated)."""

    code = "sign_in_refused"


class ProviderUnavailable(ServiceUnavailable):
    """503: the provider could not be reached, or failed (5xx); trying again later is safe."""

    code = "identity_provider_unavailable"
    retry_safe = True


class ProviderAnswerInvalid(ApplicationError):
    """502: the provider answered something that is not what OpenID Connect promises (not JSON,
    no ID token, an ID token whose signature, issuer, audience, expiry or nonce is wrong)."""

    status_code = status.HTTP_502_BAD_GATEWAY
    code = "identity_provider_answer_invalid"
