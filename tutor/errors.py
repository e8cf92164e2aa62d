"""One error envelope for every client.

Services raise `ApplicationError` (or a subclass); DRF's own exceptions, Django's
`ValidationError`, `Http404` and `PermissionDenied` are turned into the same JSON shape:

    {"error": {"code": "not_found", "message": "...", "details": {...}, "retry_safe": false}}
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, JsonResponse
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


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        return Response(
            error_body(exc.code, exc.message, exc.details, exc.retry_safe), status=exc.status_code, headers=headers
        )
    if isinstance(exc, (OperationalError, InterfaceError)):
        logger.error("database unavailable: %s", exc)
        return Response(
            error_body("database_unavailable", "The database is unavailable; try again in a moment.", retry_safe=True),
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
    # A throttled request changed nothing: the same request is safe to send again later.
    response.data = error_body(code, message, details, retry_safe=isinstance(exc, exceptions.Throttled))
    return response


# Plain Django views (404 for unknown URLs, 500) answer in the same shape.
def handler404(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("not_found", "Not found."), status=404)


def handler500(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "Internal server error."), status=500)


def handler400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("bad_request", "Bad request."), status=400)


def handler403(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body("forbidden", "Forbidden."), status=403)
