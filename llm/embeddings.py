"""Embeddings through the `openai` SDK: one request to an OpenAI-compatible `/v1/embeddings`
endpoint, metered like every other call to a model (llm.gateway)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

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


@dataclass(frozen=True)
class EmbeddingResult:
    vectors: list[list[float]]  # one per text, in the order of the texts
    model: str  # the model the endpoint says answered ("" if it does not say)
    prompt_tokens: int = 0
    latency_ms: int = 0


def embed(
    *,
    texts: list[str],
    profile: Profile,
    purpose: str = LLMUsage.Purpose.EMBEDDING,
    student_id: int | None = None,
) -> EmbeddingResult:
    """One request to an OpenAI-compatible `/v1/embeddings` endpoint. Raises LLMNotConfigured,
    LLMUnavailable or LLMBadResponse (LLMRefused for a 4xx), like `complete`; never retries.

    Metered like a completion: one `LLMUsage` row, saved at once, successful or not, with the
    prompt tokens the endpoint reports (0 if it reports none) and their cost. `student_id`: whose
    texts these are, when they are one student's (a query), else None (a batch of memories).
    """
    if not is_configured(profile):
        raise LLMNotConfigured("no embeddings endpoint configured")
    client = client_for(profile)
    started = time.monotonic()
    usage = LLMUsage(purpose=purpose, model=profile.model_id[:MODEL_NAME_CHARS], student_id=student_id)
    try:
        with errors_mapped(profile):
            response = client.embeddings.create(model=profile.model, input=texts)
        result = _parse_embeddings(response)
    except LLMError as exc:
        usage_failed(usage, exc, started)
        usage.save()
        raise
    usage_counted(usage, result.prompt_tokens, 0)
    usage.latency_ms = int((time.monotonic() - started) * 1000)
    usage.save()
    return replace(result, latency_ms=usage.latency_ms)


def _parse_embeddings(response: Any) -> EmbeddingResult:
    try:
        rows = sorted(response.data, key=lambda d: d.index)
        vectors = [row.embedding for row in rows]
        model = str(response.model or "")
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    except (AttributeError, TypeError, ValueError) as exc:
        raise LLMBadResponse("embeddings endpoint returned a malformed answer") from exc
    return EmbeddingResult(vectors=vectors, model=model, prompt_tokens=prompt_tokens)
