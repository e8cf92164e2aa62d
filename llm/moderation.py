"""Moderation (safety screening) through the `openai` SDK: one request to an OpenAI-compatible
`/v1/moderations` endpoint, metered like every other call to a model (llm.gateway)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from llm import windows
from llm.gateway import (
    MODEL_NAME_CHARS,
    LLMBadResponse,
    LLMError,
    LLMNotConfigured,
    Profile,
    client_for,
    errors_mapped,
    is_configured,
    usage_counted,
    usage_failed,
)
from llm.models import LLMUsage
from llm.tokens import count_tokens


@dataclass(frozen=True)
class ModerationResult:
    """An OpenAI-style moderation of one input: whether the endpoint flagged it, and each
    category's flag, score and the input types ("text", "image") the score applies to, by the
    endpoint's own names ("self-harm/intent"). A response with several results (one per part,
    as some servers answer) is merged: a category is flagged if any result flags it, its score
    is the highest, its input types the union."""

    flagged: bool
    categories: dict[str, bool]
    scores: dict[str, float]
    applied_input_types: dict[str, list[str]]
    model: str
    latency_ms: int = 0


def moderation_inputs(text: str, images: Sequence[str] = ()) -> list[dict[str, Any]]:
    """omni-moderation's multi-modal input: the text (if any) as a text part, then each image
    (a URL or a `data:` URL) as an image_url part. OpenAI takes at most one image per request."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in images]
    return parts


def moderate(
    *,
    inputs: list[dict[str, Any]],
    profile: Profile,
    purpose: str = LLMUsage.Purpose.SAFETY,
    student_id: int | None = None,
) -> ModerationResult:
    """One request to an OpenAI-compatible `/v1/moderations` endpoint (`profile`: its base URL,
    key, model and time limit; `inputs`: `moderation_inputs`). Raises LLMNotConfigured,
    LLMUnavailable (timeout, refused connection, 5xx, rate limit) or LLMBadResponse (LLMRefused
    for a 4xx), like `complete`; never retries.

    Metered like a completion: one `LLMUsage` row, saved at once, successful or not, with the
    input's text tokens counted locally (the endpoint reports none) and their cost (0 unless
    LLM_PRICES lists the model).
    """
    if not is_configured(profile):
        raise LLMNotConfigured("no moderation endpoint configured")
    client = client_for(profile)
    started = time.monotonic()
    usage = LLMUsage(purpose=purpose, model=profile.model_id[:MODEL_NAME_CHARS], student_id=student_id)
    try:
        with errors_mapped(profile):
            response = client.moderations.create(model=profile.model, input=inputs)  # type: ignore[arg-type]
        result = _parse_moderation(response, profile.model)
    except LLMError as exc:
        usage_failed(usage, exc, started)
        usage.save()
        raise
    text = " ".join(str(part.get("text") or "") for part in inputs if part.get("type") == "text")
    usage_counted(usage, count_tokens(text) if text else 0, 0)
    usage.latency_ms = int((time.monotonic() - started) * 1000)
    usage.save()
    return replace(result, latency_ms=usage.latency_ms)


def _parse_moderation(response: Any, model: str) -> ModerationResult:
    categories: dict[str, bool] = {}
    scores: dict[str, float] = {}
    applied: dict[str, list[str]] = {}
    flagged = False
    try:
        answer = response.to_dict()
        results = answer["results"]
        if not isinstance(results, list) or not results:
            raise ValueError("no results")
        for item in results:
            flagged = flagged or bool(item.get("flagged"))
            for name, value in (item.get("category_scores") or {}).items():
                scores[str(name)] = max(scores.get(str(name), 0.0), float(value or 0.0))
            for name, value in (item.get("categories") or {}).items():
                categories[str(name)] = categories.get(str(name), False) or bool(value)
            for name, types in (item.get("category_applied_input_types") or {}).items():
                applied[str(name)] = sorted({*applied.get(str(name), []), *(str(t) for t in types or [])})
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise LLMBadResponse("moderation endpoint returned a malformed answer") from exc
    return ModerationResult(
        flagged=flagged,
        categories=categories,
        scores=scores,
        applied_input_types=applied,
        model=windows.model_id(str(answer.get("model") or model))[:MODEL_NAME_CHARS],
    )
