"""The model's failures as every client gets them: the API errors of a chat turn and of a question
(conversations.turn, insights.asking), and one mapping from the gateway's errors to them.

Each caller words its own messages (what was kept, whether a retry is safe): a `Wording` of
msgids marked with gettext_noop, translated here when the error is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext

from core.errors import ApplicationError
from llm import gateway


class ModelUnavailable(ApplicationError):
    status_code = 503
    code = "model_unavailable"
    retry_safe = True


class ModelNotConfigured(ApplicationError):
    status_code = 503
    code = "model_not_configured"
    retry_safe = True


class ModelBadResponse(ApplicationError):
    status_code = 502
    code = "model_bad_response"
    retry_safe = True


@dataclass(frozen=True)
class Wording:
    """What a client is told, as msgids: `bad_response` and `unavailable` name the `%(reason)s`;
    `not_configured` None gives the gateway's reason (for teachers and staff, who may fix it)."""

    not_configured: str | None
    bad_response: str
    unavailable: str


def model_error(exc: gateway.LLMError, wording: Wording, *, details: dict[str, Any] | None = None) -> ApplicationError:
    """The API error of a model call that failed with `exc`, in the active language."""
    if isinstance(exc, gateway.LLMNotConfigured):
        if wording.not_configured is None:
            return ModelNotConfigured(gateway.not_configured_reason(exc), details=details)
        return ModelNotConfigured(gettext(wording.not_configured), details=details)
    if isinstance(exc, gateway.LLMBadResponse):
        return ModelBadResponse(gettext(wording.bad_response) % {"reason": exc}, details=details)
    return ModelUnavailable(gettext(wording.unavailable) % {"reason": exc}, details=details)
