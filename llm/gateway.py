"""The one place that talks to a model, through the `openai` SDK: the profiles, the client, the
errors, the metering, and chat completions (`complete`, `stream`). Beside it, by concern and on
the same client and metering: `llm.structured` (a completion held to a JSON schema),
`llm.embeddings` and `llm.moderation`.

Any OpenAI-compatible endpoint works (OpenAI, Ollama, vLLM, llama.cpp server). Two profiles:
`chat` for replies and `background` for summaries and compression, which may use a cheaper model
on another endpoint. Embeddings go to the endpoint the embedder names (memory.search.embeddings,
EMBEDDINGS_*).

Who retries: never the SDK (`max_retries=0`). A chat turn is retried by the client with the same
`client_message_id` (the API says the retry is safe); background work is retried by Celery with
backoff. Retrying in both places would multiply waits and calls.

Every call, successful or not, is metered in `LLMUsage`, with its cost (llm.costs).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import aclosing, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx2
import openai
from django.conf import settings
from django.utils.translation import gettext, gettext_noop

from core import metrics
from llm import costs, network, windows
from llm.models import LLMUsage
from llm.tokens import count_tokens, message_tokens

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


class LLMDropped(LLMUnavailable):
    """The endpoint closed the connection in the middle of its answer."""


class LLMRefused(LLMBadResponse):
    """The endpoint refused the request itself (a 4xx): the same request will be refused again."""

    transient = False


class LLMContextExceeded(LLMRefused):
    """The prompt was longer than the model's window. Resending it unchanged cannot help: the
    caller shortens it. `window` is the window the server named, if it did (then learned)."""

    def __init__(self, message: str, window: int | None = None, requested: int | None = None) -> None:
        super().__init__(message)
        self.window = window
        self.requested = requested


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
    # "stop", "length" (cut at `max_tokens` or at the server's window), "tool_calls"; "" if unsaid.
    finish_reason: str = ""


@dataclass(frozen=True)
class Profile:
    base_url: str
    api_key: str
    model: str
    timeout: float
    # 0: ask the server (llm.windows).
    context_window: int = 0

    @property
    def model_id(self) -> str:
        """The model as recorded and shown: its id, never the path a server may name it by
        (windows.model_id); `model` is what is sent to the server."""
        return windows.model_id(self.model)


# The model asked of OpenAI itself when none is configured.
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
# A model's name as recorded (LLMUsage.model, Message.model): a server may name its model by a
# long file path.
MODEL_NAME_CHARS = 200


def model_name(*, base_url: str, configured: str) -> str:
    """The model a profile names: the one configured; else, for a server of its own
    (`base_url`), the one model its `GET /v1/models` lists ("" if it cannot be told: a call then
    raises, see `_require_model`); else OpenAI's OPENAI_DEFAULT_MODEL."""
    if configured:
        return configured
    if not base_url:
        return OPENAI_DEFAULT_MODEL
    return windows.served_model(base_url).name


def chat_profile() -> Profile:
    """The chat model's endpoint (LLM_*). Never raises; its model may be "" (see `model_name`)."""
    return Profile(
        settings.LLM_BASE_URL,
        settings.LLM_API_KEY,
        model_name(base_url=settings.LLM_BASE_URL, configured=settings.LLM_MODEL),
        settings.LLM_TIMEOUT_SECONDS,
        settings.LLM_CONTEXT_WINDOW,
    )


def background_profile() -> Profile:
    """The background model's endpoint (LLM_SUMMARY_*). Its window, when LLM_SUMMARY_CONTEXT_WINDOW
    is not set and it is the chat model itself (same base URL and model), is LLM_CONTEXT_WINDOW."""
    base_url, api_key = settings.LLM_SUMMARY_BASE_URL, settings.LLM_SUMMARY_API_KEY
    model = model_name(base_url=base_url, configured=settings.LLM_SUMMARY_MODEL)
    window = settings.LLM_SUMMARY_CONTEXT_WINDOW
    if not window and base_url == settings.LLM_BASE_URL and model == chat_profile().model:
        window = settings.LLM_CONTEXT_WINDOW
    return Profile(base_url, api_key, model, settings.LLM_SUMMARY_TIMEOUT_SECONDS, window)


def context_window(profile: Profile) -> windows.Window:
    """The profile's context window: set, asked of the server, learned, or the default."""
    return windows.context_window(base_url=profile.base_url, model=profile.model, configured=profile.context_window)


def reply_reserve(window: int) -> int:
    """Tokens kept free for the answer: LLM_REPLY_RESERVE_TOKENS, at most a quarter of the window."""
    return min(settings.LLM_REPLY_RESERVE_TOKENS, window // 4)


def input_budget(profile: Profile) -> int:
    """The most tokens a prompt to this profile may hold: its window less the reply's reserve."""
    window = context_window(profile).tokens
    return window - reply_reserve(window)


def learn_window(profile: Profile, tokens: int, scale: float | None = None) -> None:
    """Remember a smaller window for this endpoint (see llm.windows)."""
    if not profile.context_window:
        windows.learn(base_url=profile.base_url, model=profile.model, tokens=tokens, scale=scale)


# Marked for translation, translated where it reaches a client (conversations.turn, insights.asking).
NOT_CONFIGURED_MESSAGE = gettext_noop(
    "No language model is configured. Set LLM_API_KEY for OpenAI, or LLM_BASE_URL for a local "
    "OpenAI-compatible server (Ollama: http://127.0.0.1:11434/v1, llama.cpp: http://127.0.0.1:8080/v1, "
    "vLLM started with --port 8001: http://127.0.0.1:8001/v1) with LLM_MODEL, then restart the server."
)


def is_configured(profile: Profile) -> bool:
    return bool(profile.base_url or profile.api_key)


def not_configured_reason(exc: LLMNotConfigured) -> str:
    """What an operator (a teacher, staff) is told of a configuration error: its real reason,
    translated when it is NOT_CONFIGURED_MESSAGE (a student is told less: see the chat turn)."""
    reason = str(exc)
    return gettext(reason) if reason == NOT_CONFIGURED_MESSAGE else reason


def reply_cap(max_tokens: int | None) -> int | None:
    """The longest streamed answer asked of the model: `max_tokens` (what the window leaves),
    at most LLM_MAX_REPLY_TOKENS when that is set (not 0)."""
    cap = settings.LLM_MAX_REPLY_TOKENS
    if not cap:
        return max_tokens
    return min(max_tokens, cap) if max_tokens else cap


_clients: dict[Profile, openai.OpenAI] = {}


def _client_options(profile: Profile) -> dict[str, Any]:
    if not is_configured(profile):
        raise LLMNotConfigured(NOT_CONFIGURED_MESSAGE)
    return {
        "base_url": profile.base_url or None,
        # Local servers ignore the key, but the SDK requires one.
        "api_key": profile.api_key or "not-needed",
        "timeout": profile.timeout,
        "max_retries": 0,
    }


def _require_model(profile: Profile) -> None:
    """A profile whose model could not be told (see `model_name`) cannot be called: LLMUnavailable
    when the server could not be asked (it may answer later), else LLMNotConfigured."""
    if profile.model or not is_configured(profile):
        return
    served = windows.served_model(profile.base_url)
    message = f"no model configured for {profile.base_url} and none can be told: {served.problem}"
    if served.transient:
        raise LLMUnavailable(message)
    raise LLMNotConfigured(f"{message}; set LLM_MODEL (LLM_SUMMARY_MODEL for background work)")


def client_for(profile: Profile) -> openai.OpenAI:
    """The profile's synchronous client, one per profile and process. Raises LLMNotConfigured, or
    LLMUnavailable when the model cannot be told yet (`_require_model`)."""
    _require_model(profile)
    client = _clients.get(profile)
    if client is None:
        client = _clients[profile] = openai.OpenAI(**_client_options(profile))
    return client


def complete(
    *,
    messages: list[dict[str, Any]],
    purpose: str,
    profile: Profile,
    student_id: int | None = None,
    conversation_id: int | None = None,
    tools: list[dict[str, Any]] | None = None,
    response_format: dict[str, Any] | None = None,
    usage_sink: list[LLMUsage] | None = None,
    max_tokens: int | None = None,
) -> LLMResult:
    """One chat completion. Raises LLMNotConfigured, LLMUnavailable or LLMBadResponse.

    The call's `LLMUsage` row is saved at once, unless it succeeded and `usage_sink` is given:
    then it is appended there, unsaved, and the caller saves it in the transaction that stores
    what the call produced (the chat turn saves it with the reply: one commit fewer per turn).
    A failed call's row is always saved at once.
    """
    client = client_for(profile)
    # The messages and tools are plain JSON already. Passed as `messages=`, the SDK walks every
    # message through its type transform, about 0.1 ms each: 0.1 s for a 1,000-message history
    # and about half a second near the compression threshold (bench/README.md). Sent through
    # `extra_body` they reach the same JSON body without that walk.
    body: dict[str, Any] = {"messages": messages}
    if tools:
        body["tools"] = tools
    kwargs: dict[str, Any] = {"model": profile.model, "messages": [], "extra_body": body}
    if response_format:
        body["response_format"] = response_format
    # Bounded by what the window keeps free for the answer: a small model otherwise writes until
    # its window is full.
    body["max_tokens"] = max_tokens or reply_reserve(context_window(profile).tokens)
    started = time.monotonic()
    usage = LLMUsage(purpose=purpose, model=profile.model_id[:MODEL_NAME_CHARS], student_id=student_id)
    usage.conversation_id = conversation_id
    try:
        with errors_mapped(profile):
            response = client.chat.completions.create(**kwargs)
        result = _parse(response, profile.model)
    except LLMError as exc:
        usage_failed(usage, exc, started)
        usage.save()
        raise
    latency = int((time.monotonic() - started) * 1000)
    usage_counted(usage, result.prompt_tokens, result.completion_tokens)
    usage.latency_ms = latency
    window_cut_learned(profile, result, asked=body["max_tokens"], sent=messages)
    if usage_sink is not None:
        usage_sink.append(usage)
    else:
        usage.save()
    return replace(result, latency_ms=latency)


@contextmanager
def errors_mapped(profile: Profile) -> Iterator[None]:
    """The SDK's (and the transport's) exceptions as LLMUnavailable, LLMBadResponse or
    LLMContextExceeded."""
    try:
        yield
    except (openai.APITimeoutError, openai.APIConnectionError) as exc:
        raise LLMUnavailable(f"model endpoint unreachable: {type(exc).__name__}") from exc
    except openai.APIStatusError as exc:
        # Whatever the status: llama-cpp-python has answered an overlong prompt with a 500.
        text = f"{exc.message} {json.dumps(exc.body, default=str)}"
        exceeded, window, requested = windows.context_exceeded(text)
        if exceeded:
            if window:
                learn_window(profile, window)
            raise LLMContextExceeded(
                f"the prompt is longer than the model's context window ({exc.status_code})", window, requested
            ) from exc
        if "response_format" in text and exc.status_code in (400, 422, 500):
            # A server that does not know the format asked for: llama-cpp-python's validation
            # of `response_format` answers 500, OpenAI-style servers 400.
            raise LLMRefused(f"model endpoint refused the response_format ({exc.status_code})") from exc
        if isinstance(exc, openai.RateLimitError):
            raise LLMUnavailable("model endpoint rate-limited the request (429)") from exc
        if exc.status_code >= 500 or exc.status_code in (408, 409):
            raise LLMUnavailable(f"model endpoint failed ({exc.status_code})") from exc
        # 4xx other than rate limits: our request or our credentials are wrong.
        raise LLMRefused(f"model endpoint refused the request ({exc.status_code})") from exc
    except (openai.APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
        raise LLMBadResponse("model endpoint returned a malformed answer") from exc
    except openai.APIError as exc:
        # An error event inside a stream.
        raise LLMUnavailable(f"model endpoint failed mid-answer: {str(exc)[:200]}") from exc
    except httpx2.TimeoutException as exc:
        raise LLMUnavailable(f"model endpoint stalled: {type(exc).__name__}") from exc
    except httpx2.TransportError as exc:
        # A stream cut after its first bytes surfaces from the transport itself.
        raise LLMDropped(f"model endpoint dropped the answer: {type(exc).__name__}") from exc


def usage_counted(usage: LLMUsage, prompt_tokens: int, completion_tokens: int) -> None:
    """A call's tokens, and their cost at today's prices (a failed call's row keeps 0 and 0)."""
    usage.prompt_tokens = prompt_tokens
    usage.completion_tokens = completion_tokens
    usage.cost = costs.usage_cost(model=usage.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    metrics.usage_observed(
        purpose=usage.purpose, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost=usage.cost
    )


def usage_failed(usage: LLMUsage, exc: LLMError, started: float) -> None:
    """Mark a call's row failed with `exc` (logged, counted by kind); the caller saves it."""
    usage.ok = False
    usage.error = str(exc)[:300]
    usage.latency_ms = int((time.monotonic() - started) * 1000)
    logger.warning("llm call failed purpose=%s model=%s: %s", usage.purpose, usage.model, exc)
    # The kind: "unavailable", "dropped", "bad_response", "refused", "context_exceeded".
    metrics.model_error(purpose=usage.purpose, kind=_ERROR_KINDS.get(type(exc), "other"))


_ERROR_KINDS = {
    LLMNotConfigured: "not_configured",
    LLMUnavailable: "unavailable",
    LLMDropped: "dropped",
    LLMBadResponse: "bad_response",
    LLMRefused: "refused",
    LLMContextExceeded: "context_exceeded",
}


# What no database column can hold: NUL (PostgreSQL refuses it in text) and lone surrogates
# (UTF-8 cannot encode them). A model may emit either; they carry no meaning in a reply.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` without the characters no database can store (NUL, lone surrogates)."""
    return _UNSTORABLE.sub("", text)


def _parse(response: Any, model: str) -> LLMResult:
    try:
        choice = response.choices[0]
        message = choice.message
        content = message.content or ""
        if not isinstance(content, str):
            raise TypeError("content is not text")
        content = storable(content)
        calls = [
            ToolCall(id=str(c.id), name=str(c.function.name), arguments=storable(str(c.function.arguments or "")))
            for c in (message.tool_calls or [])
        ]
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        finish = str(getattr(choice, "finish_reason", "") or "")
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        raise LLMBadResponse("model endpoint returned a malformed answer") from exc
    if not content.strip() and not calls:
        raise LLMBadResponse("model endpoint returned an empty answer")
    return LLMResult(
        content=content,
        tool_calls=calls,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=windows.model_id(str(getattr(response, "model", "") or model))[:MODEL_NAME_CHARS],
        finish_reason=finish,
    )


def window_cut_learned(profile: Profile, result: LLMResult, *, asked: int | None, sent: list[dict[str, Any]]) -> bool:
    """Whether the server cut the answer at its window, not at `max_tokens` (`asked`; None: no
    limit): finish_reason "length" short of `asked`, as llama-cpp-python does without an error
    (and never says its window otherwise). The window is then learned as the prompt and answer
    it held, in its tokens, with how many of ours (`sent`, counted locally) make one of its own."""
    short = asked is None or result.completion_tokens < asked
    if result.finish_reason != "length" or not short or not result.prompt_tokens or profile.context_window:
        return False
    held = result.prompt_tokens + result.completion_tokens
    if held < windows.MIN_WINDOW or held >= context_window(profile).stated:
        return False
    ours = sum(message_tokens(m) for m in sent)
    learn_window(profile, held, scale=min(1.0, ours / result.prompt_tokens))
    return True


async def _complete_async(
    *,
    body: dict[str, Any],
    profile: Profile,
    usage_sink: list[LLMUsage],
    on_delta: Callable[[str], Awaitable[None]],
    usage: LLMUsage,
) -> LLMResult:
    """The same request without streaming, after an empty stream: its answer in one delta."""
    retry = LLMUsage(
        purpose=usage.purpose, model=usage.model, student_id=usage.student_id, conversation_id=usage.conversation_id
    )
    usage_sink.append(retry)
    started = time.monotonic()
    plain = {k: v for k, v in body.items() if k != "stream_options"}
    try:
        with errors_mapped(profile):
            # On a client of its own: the server closed the failed stream's connection, which
            # the shared client's pool would otherwise hand to this request.
            async with openai.AsyncOpenAI(**_client_options(profile)) as fresh:
                response = await fresh.chat.completions.create(model=profile.model, messages=[], extra_body=plain)
        result = _parse(response, profile.model)
    except LLMError as exc:
        usage_failed(retry, exc, started)
        raise
    usage_counted(retry, result.prompt_tokens, result.completion_tokens)
    retry.latency_ms = int((time.monotonic() - started) * 1000)
    if result.content:
        await on_delta(result.content)
    return replace(result, latency_ms=retry.latency_ms)


# --- Streaming (the chat turn) ---------------------------------------------------------------

# One AsyncOpenAI client per profile and event loop: its connection pool belongs to the loop
# that opened it (one per server process; tests run several).
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Profile, openai.AsyncOpenAI]] = (
    weakref.WeakKeyDictionary()
)


# The request options the SDK's own `chat.completions.create` gives (its bearer key only), given
# here rather than left to the SDK's defaults, which it copies deeply for every request.
_CHAT_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}


def _async_client(profile: Profile) -> openai.AsyncOpenAI:
    """The profile's streaming client on this loop: the SDK's, its direct connections on
    asyncio's transports (llm.network)."""
    _require_model(profile)
    per_loop = _async_clients.setdefault(asyncio.get_running_loop(), {})
    client = per_loop.get(profile)
    if client is None:
        options = _client_options(profile)
        # The SDK's own defaults (limits, redirects), its connections made by llm.network.
        http_client = openai.DefaultAsyncHttpxClient(timeout=profile.timeout)
        network.install(http_client)
        client = per_loop[profile] = openai.AsyncOpenAI(**options, http_client=http_client)
    return client


async def stream(
    *,
    messages: list[dict[str, Any]],
    purpose: str,
    profile: Profile,
    on_delta: Callable[[str], Awaitable[None]],
    usage_sink: list[LLMUsage],
    student_id: int | None = None,
    conversation_id: int | None = None,
    tools: list[dict[str, Any]] | None = None,
    max_tokens: int | None = None,
) -> LLMResult:
    """One chat completion with `stream=True`; each text chunk is passed to `on_delta` as it comes.

    Touches no database: the call's `LLMUsage` row, successful or not, is appended to
    `usage_sink` unsaved, for the caller to save in its next database step. Raises LLMUnavailable
    (including a stream cut halfway) or LLMBadResponse, like `complete`.

    Streamed tool calls are assembled by their index. Servers that repeat the call's id and name
    in every chunk (llama-cpp-python) are handled: only the arguments are concatenated.
    """
    client = _async_client(profile)
    body: dict[str, Any] = {"messages": messages, "stream_options": {"include_usage": True}}
    if tools:
        body["tools"] = tools
    max_tokens = reply_cap(max_tokens)
    if max_tokens:
        body["max_tokens"] = max_tokens
    started = time.monotonic()
    usage = LLMUsage(purpose=purpose, model=profile.model_id[:MODEL_NAME_CHARS], student_id=student_id)
    usage.conversation_id = conversation_id
    usage_sink.append(usage)
    parts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    prompt_tokens = completion_tokens = 0
    model = ""
    data_lines = 0
    finished = ""
    try:
        with errors_mapped(profile):
            # The SDK's client posts the body as it is and gives back the HTTP response unread,
            # each `data:` line parsed here: building an SDK object per chunk cost a quarter of a
            # turn's CPU, and the typed `create` validates and copies its parameters per call
            # (bench/README.md).
            response = await client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                body={"model": profile.model, "stream": True, **body},
                options=_CHAT_OPTIONS,
                stream=True,
            )
            async with aclosing(response):
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        if line.strip() and not line.startswith((":", "event:", "id:", "retry:")):
                            data_lines += 1  # an answer came, not an empty stream
                            raise LLMBadResponse("model endpoint returned a malformed answer")
                        continue
                    data_lines += 1
                    data = line[5:].strip()
                    if data == "[DONE]":
                        continue  # read to the end of the body: the connection is then reused
                    chunk = json.loads(data)
                    if not isinstance(chunk, dict):
                        raise LLMBadResponse("model endpoint streamed a malformed chunk")
                    if chunk.get("error"):
                        raise LLMUnavailable(f"model endpoint failed mid-answer: {str(chunk['error'])[:200]}")
                    model = chunk.get("model") or model
                    usage_part = chunk.get("usage")
                    if isinstance(usage_part, dict):
                        prompt_tokens = int(usage_part.get("prompt_tokens") or 0)
                        completion_tokens = int(usage_part.get("completion_tokens") or 0)
                    choices = chunk.get("choices") or []
                    if choices and isinstance(choices[0], dict) and choices[0].get("finish_reason"):
                        finished = str(choices[0]["finish_reason"])
                    delta = choices[0].get("delta") if choices and isinstance(choices[0], dict) else None
                    if not isinstance(delta, dict):
                        continue
                    text = storable(delta["content"]) if isinstance(delta.get("content"), str) else None
                    if text:
                        parts.append(text)
                        await on_delta(text)
                    for call in delta.get("tool_calls") or []:
                        slot = calls.setdefault(int(call.get("index") or 0), {"id": "", "name": "", "arguments": ""})
                        slot["id"] = call.get("id") or slot["id"]
                        function = call.get("function") or {}
                        slot["name"] = function.get("name") or slot["name"]
                        slot["arguments"] += storable(function.get("arguments") or "")
        content = "".join(parts)
        tool_calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
            for i, c in sorted(calls.items())
        ]
        if not content.strip() and not tool_calls:
            raise LLMBadResponse("model endpoint returned an empty answer")
        if not finished:
            # Ended without a finish_reason: cut (llama-cpp-python ends a stream it interrupts
            # for a newer request with [DONE]); never stored as if it were the whole answer.
            raise LLMUnavailable("model endpoint cut the answer before it finished")
    except (LLMBadResponse, LLMDropped) as exc:
        if data_lines or type(exc) not in (LLMBadResponse, LLMDropped):
            usage_failed(usage, exc, started)
            raise
        # Nothing streamed: llama-cpp-python, for one, fails a stream after its headers when
        # the prompt is too long (an empty body, or a connection closed mid-body), and says why
        # only to a request without `stream`.
        usage_failed(usage, exc, started)
        return await _complete_async(body=body, profile=profile, usage_sink=usage_sink, on_delta=on_delta, usage=usage)
    except LLMError as exc:
        usage_failed(usage, exc, started)
        raise
    if not prompt_tokens:
        # The server sent no usage chunk (stream_options unsupported): count locally.
        prompt_tokens = sum(message_tokens(m) for m in messages)
        completion_tokens = count_tokens(content + "".join(c.arguments for c in tool_calls))
    usage_counted(usage, prompt_tokens, completion_tokens)
    usage.latency_ms = int((time.monotonic() - started) * 1000)
    result = LLMResult(
        content=content,
        tool_calls=tool_calls,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=windows.model_id(model or profile.model)[:MODEL_NAME_CHARS],
        latency_ms=usage.latency_ms,
        finish_reason=finished,
    )
    window_cut_learned(profile, result, asked=max_tokens, sent=messages)
    return result
