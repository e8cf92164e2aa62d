"""The LLM gateway: the real openai SDK over HTTP, metered, never retrying by itself."""

from __future__ import annotations

import pytest

from llm import gateway
from llm.models import LLMUsage
from llm.tokens import count_tokens, encoding_name_for_model

pytestmark = pytest.mark.django_db


def test_every_call_is_metered(llm, school):
    """A call stores purpose, model, tokens, latency and student."""
    result = gateway.complete(
        messages=[{"role": "user", "content": "hello there"}],
        purpose="chat",
        profile=gateway.chat_profile(),
        student_id=school["alice"].pk,
    )
    assert result.content
    usage = LLMUsage.objects.get()
    assert (usage.purpose, usage.model, usage.student_id, usage.ok) == (
        "chat",
        "scripted-tutor",
        school["alice"].pk,
        True,
    )
    assert usage.prompt_tokens == result.prompt_tokens > 0
    assert usage.completion_tokens > 0
    assert usage.latency_ms >= 0


def test_background_profile_uses_the_summary_model(llm, settings):
    settings.LLM_SUMMARY_MODEL = "cheap-model"
    gateway.complete(
        messages=[{"role": "user", "content": "x"}], purpose="summary", profile=gateway.background_profile()
    )
    assert llm.calls()[0]["model"] == "cheap-model"
    assert LLMUsage.objects.get().purpose == "summary"


def test_sdk_does_not_retry(llm):
    """One failing call is one HTTP request: retries belong to the client or to Celery."""
    llm.script("chat", {"status": 503}, {"status": 503})
    with pytest.raises(gateway.LLMUnavailable):
        gateway.complete(messages=[{"role": "user", "content": "x"}], purpose="chat", profile=gateway.chat_profile())
    assert len(llm.calls()) == 1
    failed = LLMUsage.objects.get()
    assert failed.ok is False and "503" in failed.error


def test_client_errors_are_not_transient_unavailability(llm):
    llm.script("chat", {"status": 401, "body": {"error": {"message": "bad key"}}})
    with pytest.raises(gateway.LLMBadResponse):
        gateway.complete(messages=[{"role": "user", "content": "x"}], purpose="chat", profile=gateway.chat_profile())


def test_refused_connection_is_unavailable(settings, db):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_API_KEY = "x"
    with pytest.raises(gateway.LLMUnavailable):
        gateway.complete(messages=[{"role": "user", "content": "x"}], purpose="chat", profile=gateway.chat_profile())


def test_not_configured(no_llm, db):
    with pytest.raises(gateway.LLMNotConfigured, match="LLM_BASE_URL"):
        gateway.complete(messages=[{"role": "user", "content": "x"}], purpose="chat", profile=gateway.chat_profile())


def test_tokens_offline_and_model_mapping():
    """tiktoken runs offline from the shipped cl100k_base; unknown models use the documented fallback."""
    assert count_tokens("hello world") == 2
    assert encoding_name_for_model("gpt-4-turbo") == "cl100k_base"
    assert encoding_name_for_model("llama3.1:8b") == "cl100k_base"
    assert count_tokens("bonjour à tous", model="mistral") > 0
