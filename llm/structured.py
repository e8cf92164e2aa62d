"""Structured output: a completion asked to follow a JSON schema (summaries, extraction, merges,
grading, the safety classifier), through llm.gateway."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache

from llm.gateway import LLMContextExceeded, LLMRefused, LLMResult, Profile, complete

logger = logging.getLogger(__name__)


STRUCTURED_MODES = ("json_schema", "json_object", "none")


def _structured_key(profile: Profile) -> str:
    return f"llm-structured:{profile.base_url}|{profile.model}"[:240]


def structured_mode(profile: Profile) -> str:
    """How this endpoint is asked for JSON: LLM_SUMMARY_RESPONSE_FORMAT, or with "auto" the best
    mode it has not refused (json_schema, then json_object, then a request in the prompt only)."""
    configured = settings.LLM_SUMMARY_RESPONSE_FORMAT
    if configured in STRUCTURED_MODES:
        return str(configured)
    return str(cache.get(_structured_key(profile)) or STRUCTURED_MODES[0])


def complete_structured(
    *, messages: list[dict[str, Any]], schema: dict[str, Any], name: str, purpose: str, profile: Profile, **call: Any
) -> LLMResult:
    """A completion asked to follow the JSON `schema` with `response_format`. An endpoint that
    refuses a mode (a 4xx) is asked again with the next one, and the choice is remembered for it
    (in the shared cache), so only its first request pays for the refusal."""
    mode = structured_mode(profile)
    while True:
        formats: dict[str, dict[str, Any] | None] = {
            "json_schema": {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}},
            # `schema` is llama-cpp-python's: its grammar then holds the answer to the schema.
            "json_object": {"type": "json_object", "schema": schema},
            "none": None,
        }
        response_format = formats[mode]
        try:
            return complete(
                messages=messages, purpose=purpose, profile=profile, response_format=response_format, **call
            )
        except LLMRefused as exc:
            automatic = settings.LLM_SUMMARY_RESPONSE_FORMAT not in STRUCTURED_MODES
            if response_format is None or isinstance(exc, LLMContextExceeded) or not automatic:
                raise
            mode = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
            cache.set(_structured_key(profile), mode, timeout=None)
            logger.warning(
                "%s at %s refused response_format (%s); asking with %s", profile.model, profile.base_url, exc, mode
            )
