"""The one place that talks to a model, through the `openai` SDK.

Any OpenAI-compatible endpoint works (OpenAI, Ollama, vLLM, llama.cpp server). Two profiles:
`chat` for replies and `background` for summaries and compression, which may use a cheaper model
on another endpoint.

Who retries: never the SDK (`max_retries=0`). A chat turn is retried by the client with the same
`client_message_id` (the API says the retry is safe); background work is retried by Celery with
backoff. Retrying in both places would multiply waits and calls.

Every call, successful or not, is metered in `LLMUsage`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any

import openai
from django.conf import settings

from llm.models import LLMUsage

logger = logging.getLogger(__name__)


class LLMError(Exception):
    """Base class; `transient` says whether the same call may succeed later."""

    transient = True


class LLMNotConfigured(LLMError):
    """No endpoint configured: retrying soon won't help; background work waits for the sweep."""

    transient = False


class LLMUnavailable(LLMError):
    """Timeout, refused connection, rate limit, 5xx: try again later."""


class LLMBadResponse(LLMError):
    """The endpoint answered something that is not a usable completion."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class LLMResult:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    latency_ms: int = 0


@dataclass(frozen=True)
class Profile:
    base_url: str
    api_key: str
    model: str
    timeout: float


def chat_profile() -> Profile:
    return Profile(settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_MODEL, settings.LLM_TIMEOUT_SECONDS)


def background_profile() -> Profile:
    return Profile(
        settings.LLM_SUMMARY_BASE_URL,
        settings.LLM_SUMMARY_API_KEY,
        settings.LLM_SUMMARY_MODEL,
        settings.LLM_SUMMARY_TIMEOUT_SECONDS,
    )


NOT_CONFIGURED_MESSAGE = (
    "No language model is configured. Set LLM_API_KEY for OpenAI, or LLM_BASE_URL for a local "
    "OpenAI-compatible server (Ollama: http://127.0.0.1:11434/v1, llama.cpp: http://127.0.0.1:8080/v1, "
    "vLLM: http://127.0.0.1:8000/v1) with LLM_MODEL, then restart the server."
)


def is_configured(profile: Profile) -> bool:
    return bool(profile.base_url or profile.api_key)


_clients: dict[Profile, openai.OpenAI] = {}


def _client(profile: Profile) -> openai.OpenAI:
    if not is_configured(profile):
        raise LLMNotConfigured(NOT_CONFIGURED_MESSAGE)
    client = _clients.get(profile)
    if client is None:
        client = openai.OpenAI(
            base_url=profile.base_url or None,
            # Local servers ignore the key, but the SDK requires one.
            api_key=profile.api_key or "not-needed",
            timeout=profile.timeout,
            max_retries=0,
        )
        _clients[profile] = client
    return client


def complete(
    *,
    messages: list[dict[str, Any]],
    purpose: str,
    profile: Profile,
    student_id: int | None = None,
    conversation_id: int | None = None,
    tools: list[dict[str, Any]] | None = None,
    json_mode: bool = False,
    usage_sink: list[LLMUsage] | None = None,
) -> LLMResult:
    """One chat completion. Raises LLMNotConfigured, LLMUnavailable or LLMBadResponse.

    The call's `LLMUsage` row is saved at once, unless it succeeded and `usage_sink` is given:
    then it is appended there, unsaved, and the caller saves it in the transaction that stores
    what the call produced (the chat turn saves it with the reply: one commit fewer per turn).
    A failed call's row is always saved at once.
    """
    client = _client(profile)
    # The messages and tools are plain JSON already. Passed as `messages=`, the SDK walks every
    # message through its type transform, about 0.1 ms each: 0.1 s for a 1,000-message history
    # and about half a second near the compression threshold (bench/README.md). Sent through
    # `extra_body` they reach the same JSON body without that walk.
    body: dict[str, Any] = {"messages": messages}
    if tools:
        body["tools"] = tools
    kwargs: dict[str, Any] = {"model": profile.model, "messages": [], "extra_body": body}
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    started = time.monotonic()
    usage = LLMUsage(purpose=purpose, model=profile.model, student_id=student_id, conversation_id=conversation_id)
    try:
        try:
            response = client.chat.completions.create(**kwargs)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise LLMUnavailable(f"model endpoint unreachable: {type(exc).__name__}") from exc
        except openai.RateLimitError as exc:
            raise LLMUnavailable("model endpoint rate-limited the request (429)") from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409):
                raise LLMUnavailable(f"model endpoint failed ({exc.status_code})") from exc
            # 4xx other than rate limits: our request or our credentials are wrong.
            raise LLMBadResponse(f"model endpoint refused the request ({exc.status_code})") from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
            raise LLMBadResponse("model endpoint returned a malformed answer") from exc
        result = _parse(response, profile.model)
    except LLMError as exc:
        usage.ok = False
        usage.error = str(exc)[:300]
        usage.latency_ms = int((time.monotonic() - started) * 1000)
        usage.save()
        logger.warning("llm call failed purpose=%s model=%s: %s", purpose, profile.model, exc)
        raise
    latency = int((time.monotonic() - started) * 1000)
    usage.prompt_tokens = result.prompt_tokens
    usage.completion_tokens = result.completion_tokens
    usage.latency_ms = latency
    if usage_sink is not None:
        usage_sink.append(usage)
    else:
        usage.save()
    return replace(result, latency_ms=latency)


def _parse(response: Any, model: str) -> LLMResult:
    try:
        choice = response.choices[0]
        message = choice.message
        content = message.content or ""
        if not isinstance(content, str):
            raise TypeError("content is not text")
        calls = [
            ToolCall(id=str(c.id), name=str(c.function.name), arguments=str(c.function.arguments or ""))
            for c in (message.tool_calls or [])
        ]
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        raise LLMBadResponse("model endpoint returned a malformed answer") from exc
    if not content.strip() and not calls:
        raise LLMBadResponse("model endpoint returned an empty answer")
    return LLMResult(
        content=content,
        tool_calls=calls,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=str(getattr(response, "model", "") or model),
    )
