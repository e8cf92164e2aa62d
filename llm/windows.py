"""What a model endpoint says about itself: the model it serves, and its context window (set,
asked of the server, or learned from its errors).

The model: with no model configured (LLM_MODEL, LLM_SUMMARY_MODEL), the one `GET /v1/models`
lists (`served_model`), asked once per process and endpoint.

The window, in order:
1. `LLM_CONTEXT_WINDOW` / `LLM_SUMMARY_CONTEXT_WINDOW`, when set;
2. a window learned from the server's own "context length exceeded" answer (llama-cpp-python
   and OpenAI name it: "This model's maximum context length is 4096 tokens"), remembered for
   that endpoint and model in the shared cache, so every process fits from then on;
3. what the server says: `GET /v1/models` (vLLM's `max_model_len`, llama.cpp server's
   `meta.n_ctx` or `n_ctx_train`, `context_length`), or Ollama's `POST /api/show` (`num_ctx`
   among the parameters, else Ollama's default of 4,096, bounded by the model's own length);
4. otherwise DEFAULT_CONTEXT_WINDOW (128K).
The source is logged the first time a process resolves an endpoint's window.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx2
from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 131_072
OLLAMA_DEFAULT_NUM_CTX = 4096
# The smallest window the product accepts from a server or an error message.
MIN_WINDOW = 512


@dataclass(frozen=True)
class Window:
    """`tokens`: the window in the product's own token counts (tiktoken), the unit of every
    budget; `named`: the window as the server states it, when its tokenizer counts the same
    text as more tokens (then learned from its errors), else equal to `tokens`."""

    tokens: int
    source: str
    named: int = 0

    @property
    def stated(self) -> int:
        return self.named or self.tokens


_resolved: dict[tuple[str, str], Window] = {}
# Learned windows read from the shared cache are kept this long in the process: a turn asks for
# the window twice, and the cache is a network round trip away.
LEARNED_RECHECK_SECONDS = 10.0
_learned: dict[tuple[str, str], tuple[float, Any]] = {}


def _cache_key(base_url: str, model: str) -> str:
    return f"llm-window:{base_url}|{model}"[:240]


def context_window(*, base_url: str, model: str, configured: int) -> Window:
    """The window of this endpoint and model (see the module docstring for the order)."""
    if configured > 0:
        return Window(configured, "setting")
    key = (base_url, model)
    checked_at, learned = _learned.get(key, (0.0, None))
    if time.monotonic() - checked_at > LEARNED_RECHECK_SECONDS:
        learned = cache.get(_cache_key(base_url, model))
        _learned[key] = (time.monotonic(), learned)
    if learned:
        window, scale = (learned, 1.0) if isinstance(learned, int) else learned
        return Window(int(window * scale), "learned from the server's context-length error", int(window))
    window = _resolved.get(key)
    if window is None:
        window = _discover(base_url, model) or Window(DEFAULT_CONTEXT_WINDOW, "default (the server does not say)")
        _resolved[key] = window
        where = base_url or "OpenAI"
        logger.info("context window of %s at %s: %d tokens (%s)", model, where, window.tokens, window.source)
        if base_url and window.source.startswith("default"):
            # llama-cpp-python's server, for one, never says; it refuses a longer prompt and
            # cuts an answer at its window (gateway.window_cut_learned), which teach it.
            logger.warning(
                "context window of %s at %s: the server does not say it; %d tokens are assumed until it "
                "refuses a prompt or cuts an answer at its window. Set LLM_CONTEXT_WINDOW (llama-cpp-python: "
                "its --n_ctx, 2048 unless set)",
                model_id(model),
                base_url,
                window.tokens,
            )
    return window


def learn(*, base_url: str, model: str, tokens: int, scale: float | None = None) -> None:
    """Remember a window the server revealed (or a smaller one after an unexplained refusal).

    `scale`: the product's tokens per server token, when the server's tokenizer counts more
    (the budgets are then `tokens * scale` in the product's counts); None keeps the one known.
    """
    tokens = max(MIN_WINDOW, tokens)
    key = _cache_key(base_url, model)
    if scale is None:
        known = cache.get(key)
        scale = known[1] if isinstance(known, (list, tuple)) else 1.0
    scale = max(0.1, min(1.0, scale))
    cache.set(key, (tokens, scale), timeout=None)
    _resolved.pop((base_url, model), None)
    _learned[(base_url, model)] = (time.monotonic(), (tokens, scale))
    logger.warning(
        "context window of %s at %s is %d tokens, %.2f of ours per token of its own (learned from the server)",
        model,
        base_url,
        tokens,
        scale,
    )


def forget() -> None:
    """Drop what this process resolved (the learned windows stay in the cache)."""
    _resolved.clear()
    _learned.clear()
    _served.clear()


# --- The model an endpoint serves ----------------------------------------------------------------

# The extensions of the weights' files a server may name its model by.
_WEIGHTS_SUFFIXES = (".gguf", ".ggml", ".safetensors", ".bin")
_HOST_PATH = re.compile(r"^(?:/|~|\.{1,2}[/\\]|[A-Za-z]:[/\\]|\\\\)|\\")


def model_id(name: str) -> str:
    """The model's id as the product records and shows it: `name` itself when it is an id
    ("gpt-4o-mini", "llama3.1:8b", "Qwen/Qwen2.5-7B-Instruct"); when the server names its model
    by the path of its weights (llama-cpp-python lists "/srv/models/SmolLM2-135M-Instruct.Q4_1.gguf",
    vLLM the directory it loaded), the file's or directory's name without the weights' extension
    ("SmolLM2-135M-Instruct.Q4_1"), so that no host path reaches a client or a record.

    A name is a path when it is absolute or relative to a directory ("/", "~", "./", "C:\\",
    a backslash) or names a weights file ("models/x.gguf"); "org/name" is a hub's id and kept."""
    name = name.strip()
    if not name or not (_HOST_PATH.search(name) or name.lower().endswith(_WEIGHTS_SUFFIXES)):
        return name
    base = next((part for part in reversed(re.split(r"[/\\]", name)) if part not in ("", ".", "..", "~")), "")
    for suffix in _WEIGHTS_SUFFIXES:
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base or "model"


@dataclass(frozen=True)
class ServedModel:
    """What `GET /v1/models` told of the model to use: its `name`, or "" and the `problem` (for
    the log and the error a call raises); `transient` when the server could not be asked."""

    name: str
    problem: str = ""
    transient: bool = False


# A server that could not be asked is asked again after this long (a name, once known, is kept).
SERVED_RECHECK_SECONDS = 10.0
_served: dict[str, tuple[float, ServedModel]] = {}


def served_model(base_url: str) -> ServedModel:
    """The model the server at `base_url` serves, when it lists exactly one. Asked once per
    process and endpoint; an unreachable server is asked again SERVED_RECHECK_SECONDS later.
    Never raises."""
    checked_at, known = _served.get(base_url, (0.0, None))
    if known is not None and (not known.transient or time.monotonic() - checked_at < SERVED_RECHECK_SECONDS):
        return known
    served = _ask_served_model(base_url)
    _served[base_url] = (time.monotonic(), served)
    if served.name:
        logger.info("model at %s: %s (the one /v1/models lists; LLM_MODEL is not set)", base_url, served.name)
    else:
        logger.error("model at %s: unknown (%s); set LLM_MODEL / LLM_SUMMARY_MODEL", base_url, served.problem)
    return served


def _ask_served_model(base_url: str) -> ServedModel:
    try:
        with httpx2.Client(timeout=settings.LLM_DISCOVERY_TIMEOUT_SECONDS) as client:
            response = client.get(f"{base_url.rstrip('/')}/models")
        if response.status_code != 200:
            return ServedModel(
                "", f"GET /v1/models answered {response.status_code}", transient=response.status_code >= 500
            )
        names = [str(e["id"]) for e in (response.json().get("data") or []) if isinstance(e, dict) and e.get("id")]
    except httpx2.HTTPError as exc:
        return ServedModel("", f"GET /v1/models failed ({type(exc).__name__})", transient=True)
    except (ValueError, AttributeError):
        return ServedModel("", "GET /v1/models answered no list of models")
    if len(names) == 1:
        return ServedModel(names[0])
    if not names:
        return ServedModel("", "the server lists no model")
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return ServedModel("", f"the server serves {len(names)} models, none chosen: {shown}")


def _discover(base_url: str, model: str) -> Window | None:
    if not base_url:
        return None  # OpenAI itself: its models' windows are all 128K or more
    base = base_url.rstrip("/")
    try:
        with httpx2.Client(timeout=settings.LLM_DISCOVERY_TIMEOUT_SECONDS) as client:
            listed = _from_models(client.get(f"{base}/models"), model)
            if listed:
                return listed
            root = re.sub(r"/v1$", "", base)
            return _from_ollama(client.post(f"{root}/api/show", json={"model": model}))
    except (httpx2.HTTPError, ValueError) as exc:
        logger.info("context window of %s at %s: the server could not be asked (%s)", model, base_url, exc)
    return None


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= MIN_WINDOW else None


def _from_models(response: httpx2.Response, model: str) -> Window | None:
    if response.status_code != 200:
        return None
    entries = [e for e in (response.json().get("data") or []) if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if entry is None:
        return None
    meta = entry["meta"] if isinstance(entry.get("meta"), dict) else {}
    for source, value in (
        ("max_model_len", entry.get("max_model_len")),
        ("meta.n_ctx", meta.get("n_ctx")),
        ("meta.n_ctx_train", meta.get("n_ctx_train")),
        ("context_length", entry.get("context_length")),
        ("context_window", entry.get("context_window")),
    ):
        tokens = _int(value)
        if tokens:
            return Window(tokens, f"server: /v1/models {source}")
    return None


def _from_ollama(response: httpx2.Response) -> Window | None:
    if response.status_code != 200:
        return None
    body = response.json()
    params = str(body.get("parameters") or "")
    match = re.search(r"^\s*num_ctx\s+(\d+)", params, re.MULTILINE)
    if match and _int(match.group(1)):
        return Window(int(match.group(1)), "server: Ollama /api/show num_ctx")
    info = body.get("model_info") or {}
    native = next((_int(v) for k, v in info.items() if str(k).endswith(".context_length")), None)
    if native is None and not info:
        return None
    tokens = min(native or OLLAMA_DEFAULT_NUM_CTX, OLLAMA_DEFAULT_NUM_CTX)
    return Window(tokens, "server: Ollama's default num_ctx (set num_ctx in the Modelfile for more)")


# --- "Context length exceeded", however the server words it -------------------------------------

_EXCEEDED = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed_context_size|maximum context length|context (?:length|size|window)"
    r"|exceeds? (?:the )?(?:available |maximum )?context|prompt is too long|too many tokens|input length exceeds",
    re.IGNORECASE,
)
_WINDOW_NUMBER = [
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"context window of (\d+)", re.IGNORECASE),
    re.compile(r"['\"]n_ctx['\"]\s*:\s*(\d+)"),
    re.compile(r"context (?:length|size|window) (?:is|of) (\d+)", re.IGNORECASE),
]


_REQUESTED_NUMBER = [
    re.compile(r"you requested (\d+) tokens", re.IGNORECASE),
    re.compile(r"resulted in (\d+) tokens", re.IGNORECASE),
    re.compile(r"requested tokens \((\d+)\)", re.IGNORECASE),
    re.compile(r"['\"]n_prompt_tokens['\"]\s*:\s*(\d+)"),
]


def _first_number(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match and _int(match.group(1)):
            return int(match.group(1))
    return None


def context_exceeded(text: str) -> tuple[bool, int | None, int | None]:
    """Whether an error body says the prompt was longer than the window; the window and the
    prompt's size in the server's own tokens, where it names them."""
    if not _EXCEEDED.search(text):
        return False, None, None
    return True, _first_number(_WINDOW_NUMBER, text), _first_number(_REQUESTED_NUMBER, text)
