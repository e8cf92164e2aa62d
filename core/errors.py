"""One error envelope for every client.

Services raise `ApplicationError` (or a subclass); DRF's own exceptions, Django's
`ValidationError`, `Http404` and `PermissionDenied` are turned into the same JSON shape:

    {"error": {"code": "not_found", "message": "...", "details": {...}, "retry_safe": false}}
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    status_code: int = status.HTTP_400_BAD_REQUEST
    code = "invalid"
    retry_safe = False
    # Seconds, sent as the Retry-After header when set.
    retry_after: int | None = None

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class NotFound(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"


class Forbidden(ApplicationError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "forbidden"


class Conflict(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"


class ServiceUnavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "service_unavailable"


class DatabaseUnavailable(ServiceUnavailable):
    """503: the database cannot be reached (its message says what was kept); a retry is safe."""

    code = "database_unavailable"
    retry_safe = True
    retry_after = 5


DATABASE_ERRORS = (OperationalError, InterfaceError)


def error_body(code: str, message: str, details: Any = None, retry_safe: bool = False) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}, "retry_safe": retry_safe}}


def _first_message(detail: Any) -> str:
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    if isinstance(detail, dict) and detail:
        key, value = next(iter(detail.items()))
        inner = _first_message(value)
        return inner if key in ("non_field_errors", "__all__") else f"{key}: {inner}"
    return str(detail)


class RequestTooLarge(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "request_too_large"


def request_too_large() -> RequestTooLarge:
    from django.conf import settings

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return RequestTooLarge(
        _("The request body is larger than %(limit)s bytes.") % {"limit": limit}, details={"limit_bytes": limit}
    )


# DRF's codes renamed where the product already has a code for the same meaning.
_CODES = {"permission_denied": "forbidden"}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        exc = request_too_large()
    if isinstance(exc, ApplicationError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return Response(
            error_body(exc.code, exc.message, exc.details, exc.retry_safe), status=exc.status_code, headers=headers
        )
    if isinstance(exc, (OperationalError, InterfaceError)):
        logger.error("database unavailable: %s", exc)
        return Response(
            error_body(
                "database_unavailable", _("The database is unavailable; try again in a moment."), retry_safe=True
            ),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, DjangoValidationError):
        details = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return Response(error_body("invalid", _first_message(details), details), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    assert isinstance(exc, exceptions.APIException)
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = _first_message(detail)
        details = detail
    else:
        message = str(exc.detail) if not isinstance(exc.detail, (list, dict)) else _first_message(exc.detail)
        details = {}
    code = exc.default_code if not isinstance(exc, exceptions.ValidationError) else "invalid"
    code = _CODES.get(str(code), str(code))
    # A throttled request changed nothing: the same request is safe to send again later.
    response.data = error_body(code, message, details, retry_safe=isinstance(exc, exceptions.Throttled))
    return response


# Plain Django views (unknown URLs, CSRF failures, 500s) answer in the same shape.
def handler404(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("not_found", _("Not found.")), status=404)


def handler500(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", _("Internal server error.")), status=500)


def handler400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    if isinstance(exception, RequestDataTooBig):
        exc = request_too_large()
        return JsonResponse(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    return JsonResponse(error_body("bad_request", _("Bad request.")), status=400)


def handler403(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("forbidden", _("Forbidden.")), status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> JsonResponse:
    """CSRF_FAILURE_VIEW: the same code as a session-authenticated API write without its token."""
    message = _("CSRF check failed: send the csrftoken cookie's value in the X-CSRFToken header.")
    return JsonResponse(error_body("csrf_failed", message, {"reason": reason}), status=403)


def unknown_api_url(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """A URL under /api/ that matches no endpoint: 404, naming the URL with its trailing slash
    when that one exists (a POST without the slash cannot be redirected)."""
    details: dict[str, Any] = {}
    message = _("Not found.")
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not unknown_api_url:
            details["did_you_mean"] = request.path + "/"
            message = _("Not found. Did you mean %(path)s (with the trailing slash)?") % {"path": request.path + "/"}
    return JsonResponse(error_body("not_found", message, details), status=404)


unknown_api_url.csrf_exempt = True  # type: ignore[attr-defined]


def unknown_url(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any other unknown URL (outside the admin): a 404 in the envelope, DEBUG or not."""
    return handler404(request)


unknown_url.csrf_exempt = True  # type: ignore[attr-defined]


class ErrorsAsJson(MiddlewareMixin):
    """Middleware: an exception no view handled answers in the envelope, with DEBUG on too,
    and is logged; an oversized body is a 413. (With DEBUG off Django's handler500 does the
    same; this keeps development answers in the shape clients parse.)"""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            exc = request_too_large()
            return JsonResponse(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
        # Django answers these itself: 404, 403, and 400 for a refused input (the admin's
        # disallowed lookups and `_to_field`, a bad host...), through the handlers below.
        if isinstance(exception, (Http404, PermissionDenied, SuspiciousOperation)):
            return None
        logger.error("unhandled error on %s %s", request.method, request.path, exc_info=exception)
        return handler500(request)
