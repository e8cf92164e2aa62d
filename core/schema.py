"""The OpenAPI schema's shared parts: the error envelope on every operation.

Views declare their own request and success bodies with `extend_schema`; this AutoSchema adds
the errors every operation can answer, all in the one envelope (core.errors), so that a
generated client types them and the tests' schema check (tests/schema.py) accepts them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.authentication import SessionScheme as BaseSessionScheme
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorDetail(serializers.Serializer[None]):
    code = serializers.CharField(help_text="Stable, one per meaning: not_found, invalid, csrf_failed, ...")
    message = serializers.CharField(help_text="For people, in the user's language.")
    details = serializers.DictField(help_text="Per-field messages for `invalid`; other facts otherwise.")
    retry_safe = serializers.BooleanField(help_text="Sending the same request again cannot do anything twice.")


class ErrorEnvelope(serializers.Serializer[None]):
    error = ErrorDetail()


_ALWAYS = {
    "400": "The input is invalid: `details` holds a message per field.",
    "401": "Not authenticated: no token or session, or an unknown token.",
    "403": "Forbidden: the role may not do this, or a session write without its CSRF token.",
    "404": "Not found, or not visible to the requester (never 403 for another's data).",
    "429": "Throttled; see Retry-After.",
    "500": "Server error (logged).",
    "503": "The database (or the model) is unavailable for a moment; see retry_safe.",
}
_WRITES = {
    "409": "The state does not allow it (an ended conversation, an archived memory).",
    "413": "The request body is larger than the server accepts.",
    "415": "The body is not JSON (Content-Type: application/json).",
}


class SessionScheme(BaseSessionScheme):
    """The session (cookie `sessionid`, with `X-CSRFToken` on writes) of core.auth."""

    target_class = "core.auth.SessionAuthentication"


class AutoSchema(openapi.AutoSchema):
    def _get_serializer_name(self, serializer: Any, direction: Any, bypass_extensions: bool = False) -> str:
        # A view's nested Input/Output serializers are named after the view:
        # MemoryListCreateApi.Input -> MemoryListCreateInput (PatchedMemoryDetailInput for PATCH).
        name = super()._get_serializer_name(serializer, direction, bypass_extensions)
        qualname = type(serializer).__qualname__
        for nested in ("Input", "Output"):
            if "." in qualname and qualname.endswith(f".{nested}") and nested in name:
                return name.replace(nested, qualname.replace("Api.", "").replace(".", ""), 1)
        return name

    def _get_response_bodies(self, direction: Any = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        errors = dict(_ALWAYS)
        if self.method in ("POST", "PUT", "PATCH", "DELETE"):
            errors.update(_WRITES)
        for code, description in errors.items():
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ErrorEnvelope, description=description), code, direction=direction
                )
        return responses
