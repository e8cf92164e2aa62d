"""The models: any OpenAI-compatible endpoint for the chat and for background work, their context
windows, what they can see, and what they cost (llm.costs, docs/costs.md)."""

from __future__ import annotations

from decimal import Decimal

from .env import env_bool, env_choice, env_decimal, env_float, env_int, env_prices, env_str, env_url

_HTTP = ("http", "https")

# Any OpenAI-compatible endpoint: OpenAI (key only), Ollama, vLLM, llama.cpp server (base URL).
LLM_BASE_URL = env_url("LLM_BASE_URL", schemes=_HTTP)
LLM_API_KEY = env_str("LLM_API_KEY", secret=True)
# Empty: the one model the server at LLM_BASE_URL lists (GET /v1/models), or gpt-4o-mini on
# OpenAI (llm.gateway.model_name).
LLM_MODEL = env_str("LLM_MODEL")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0, minimum=0)
# Background jobs (summaries, compression) may use a cheaper model on another endpoint.
LLM_SUMMARY_BASE_URL = env_url("LLM_SUMMARY_BASE_URL", LLM_BASE_URL, schemes=_HTTP)
LLM_SUMMARY_API_KEY = env_str("LLM_SUMMARY_API_KEY", LLM_API_KEY, secret=True)
LLM_SUMMARY_MODEL = env_str("LLM_SUMMARY_MODEL", LLM_MODEL)
LLM_SUMMARY_TIMEOUT_SECONDS = env_float("LLM_SUMMARY_TIMEOUT_SECONDS", 120.0, minimum=0)
# Context windows in tokens; 0: ask the server, else 128K (llm.windows).
# The summary model's is LLM_CONTEXT_WINDOW when it is the chat model (same base URL and model).
LLM_CONTEXT_WINDOW = env_int("LLM_CONTEXT_WINDOW", 0, minimum=0)
LLM_SUMMARY_CONTEXT_WINDOW = env_int("LLM_SUMMARY_CONTEXT_WINDOW", 0, minimum=0)
# Tokens kept free for the model's answer (at most a quarter of a small window).
LLM_REPLY_RESERVE_TOKENS = env_int("LLM_REPLY_RESERVE_TOKENS", 1024, minimum=0)
# The longest streamed answer (a chat reply, an answer about a student), in tokens, sent as
# max_tokens; 0: what the window leaves. A small local model is slow per token (`make run`: 400).
LLM_MAX_REPLY_TOKENS = env_int("LLM_MAX_REPLY_TOKENS", 0, minimum=0)
# The endpoint is the demo model (llm.demo_model, scripted answers), which `make run` starts
# when no model is configured: the pages and the start-up banner say so.
LLM_DEMO_MODEL = env_bool("LLM_DEMO_MODEL", False)
LLM_DISCOVERY_TIMEOUT_SECONDS = env_float("LLM_DISCOVERY_TIMEOUT_SECONDS", 3.0, minimum=0)
# How summaries ask for JSON: auto (json_schema, then json_object, then the prompt alone, each
# endpoint's choice remembered after a refusal), or one of json_schema, json_object, none.
LLM_SUMMARY_RESPONSE_FORMAT = env_choice(
    "LLM_SUMMARY_RESPONSE_FORMAT", "auto", ("auto", "json_schema", "json_object", "none")
)
# Encoding used to count tokens for models tiktoken does not know (see llm/tokens.py).
TOKEN_ENCODING_FALLBACK = env_str("TOKEN_ENCODING_FALLBACK", "cl100k_base")

# Whether the chat model accepts images (OpenAI-style image parts). Off: the tutor is told it
# cannot see the images a student attached; their names are still listed.
LLM_SUPPORTS_IMAGES = env_bool("LLM_SUPPORTS_IMAGES", False)
# With images on: the latest LLM_MAX_IMAGES images of the conversation go in each prompt, each
# counted as LLM_IMAGE_TOKENS tokens in the window's budget (OpenAI bills a 512-px tile 170 + 85).
LLM_MAX_IMAGES = env_int("LLM_MAX_IMAGES", 4, minimum=0)
LLM_IMAGE_TOKENS = env_int("LLM_IMAGE_TOKENS", 765, minimum=0)

# --- Costs (llm.costs, docs/costs.md) -------------------------------------------------------------
# USD per million tokens, (input, output), by model name as configured (LLM_MODEL...): hosted
# models' list prices, defaults to check against the provider's page (docs/costs.md dates them).
# A model not listed costs 0 (a local one) unless LLM_PRICES prices it: JSON {"model": [input,
# output]}, merged over these. A dated snapshot (gpt-4o-mini-2024-07-18) takes its model's price.
LLM_PRICE_DEFAULTS: dict[str, tuple[Decimal, Decimal]] = {
    name: (Decimal(prompt), Decimal(completion))
    for name, prompt, completion in [
        ("gpt-4o-mini", "0.15", "0.60"),
        ("gpt-4o", "2.50", "10.00"),
        ("gpt-4.1", "2.00", "8.00"),
        ("gpt-4.1-mini", "0.40", "1.60"),
        ("gpt-4.1-nano", "0.10", "0.40"),
        ("gpt-5", "1.25", "10.00"),
        ("gpt-5-mini", "0.25", "2.00"),
        ("gpt-5-nano", "0.05", "0.40"),
        ("o3", "2.00", "8.00"),
        ("o3-mini", "1.10", "4.40"),
        ("o4-mini", "1.10", "4.40"),
        ("gpt-3.5-turbo", "0.50", "1.50"),
        ("text-embedding-3-small", "0.02", "0"),
        ("text-embedding-3-large", "0.13", "0"),
    ]
}
LLM_PRICES = {**LLM_PRICE_DEFAULTS, **env_prices("LLM_PRICES")}
# Spend budgets in USD, per UTC day and calendar month (UTC); 0 or empty: none. A classroom may
# override each for its students and itself (Classroom.budget_*). Past one, a new chat message is
# refused with 429 budget_exceeded until the period ends; background work is never refused, nor
# counted. The asker budgets are each teacher's or staff member's, over the questions they ask.
BUDGET_STUDENT_DAILY = env_decimal("BUDGET_STUDENT_DAILY")
BUDGET_STUDENT_MONTHLY = env_decimal("BUDGET_STUDENT_MONTHLY")
BUDGET_CLASSROOM_DAILY = env_decimal("BUDGET_CLASSROOM_DAILY")
BUDGET_CLASSROOM_MONTHLY = env_decimal("BUDGET_CLASSROOM_MONTHLY")
BUDGET_ASKER_DAILY = env_decimal("BUDGET_ASKER_DAILY")
BUDGET_ASKER_MONTHLY = env_decimal("BUDGET_ASKER_MONTHLY")
