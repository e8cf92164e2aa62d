"""The model's name when none is configured, and the summary model's window on the chat endpoint.

A new user of a local server sets LLM_BASE_URL and nothing else. The product then asks the
server which model it serves (`GET /v1/models`), once per process and endpoint, records every
call under that name, and prices it at 0 unless LLM_PRICES prices it: OpenAI's default name is
never assumed for a server of one's own. The scripted server lists one model by a GGUF path,
as llama-cpp-python does.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import pytest

from conversations.models import Conversation, Message
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from llm import gateway, windows
from llm.models import LLMUsage
from tests.conftest import Worker, wait_for
from tests.conversations.test_summary_worker import ended_pending, send_summarize
from tests.conversations.test_turn import send, start
from tests.llm_server import ScriptedLLM
from tutor import startup

LOCAL = "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
# What the product records and shows: the model's id, not the server's path (llm.windows.model_id).
LOCAL_ID = "SmolLM2-135M-Instruct.Q4_1"


@pytest.fixture
def unnamed(llm: ScriptedLLM, settings: Any) -> ScriptedLLM:
    """The scripted server as a local one whose model nobody named: LLM_MODEL and
    LLM_SUMMARY_MODEL left out (empty), one model listed."""
    llm.models = [LOCAL]
    settings.LLM_MODEL = ""
    settings.LLM_SUMMARY_MODEL = ""
    return llm


def test_a_turn_is_recorded_under_the_servers_one_model_at_cost_0(clients, unnamed, school):
    """With no LLM_MODEL, the turn asks the server's one model by its name, and the reply and
    its usage row carry its id (the file's name, not the server's path) at cost 0; the server is
    asked which model it serves once."""
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1")
    assert resp.status_code == 201, resp.content
    asked = unnamed.models_asked
    assert send(clients["alice"], cid, "And 1/4 and 1/5?", "m2").status_code == 201
    assert unnamed.models_asked == asked  # the name and the window are known in this process
    assert {call["model"] for call in unnamed.calls("chat")} == {LOCAL}
    usage = list(LLMUsage.objects.filter(purpose="chat"))
    assert len(usage) == 2 and {(u.model, u.cost) for u in usage} == {(LOCAL_ID, Decimal(0))}
    reply = Message.objects.filter(conversation_id=cid, role="tutor").first()
    assert reply is not None and reply.model == LOCAL_ID


def test_a_priced_name_on_a_server_of_ones_own_is_priced(clients, unnamed, settings):
    """Only what is priced costs: the same local model priced in LLM_PRICES (by its id) costs its price."""
    settings.LLM_PRICES = {**settings.LLM_PRICES, LOCAL_ID: (Decimal("1"), Decimal("2"))}
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1").status_code == 201
    assert LLMUsage.objects.get(purpose="chat").cost > 0


def test_several_models_and_none_chosen_is_a_clear_503_and_a_log(clients, unnamed, caplog):
    """A server listing several models with none configured: the send is a retry-safe 503
    model_not_configured (the message is kept), and the log names the models and LLM_MODEL."""
    unnamed.models = ["llama3.1:8b", "qwen2.5:7b"]
    cid = start(clients["alice"])
    with caplog.at_level(logging.INFO):
        resp = send(clients["alice"], cid, "How do I add 1/2 and 1/3?", "m1")
    assert resp.status_code == 503, resp.content
    error = resp.json()["error"]
    assert error["code"] == "model_not_configured" and error["retry_safe"] is True
    assert "llama3.1:8b, qwen2.5:7b" in caplog.text and "LLM_MODEL" in caplog.text
    assert Message.objects.filter(conversation_id=cid, role="student").count() == 1
    assert not unnamed.calls("chat")


def test_an_unreachable_server_is_asked_again_later(settings, db, caplog, monkeypatch):
    """A server that cannot be asked which model it serves makes a call transient
    (LLMUnavailable, which the caller retries); it is not asked again at once, but again once
    SERVED_RECHECK_SECONDS have passed."""
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_MODEL = ""
    asked = "model at http://127.0.0.1:9/v1: unknown (GET /v1/models failed"
    assert gateway.chat_profile().model == ""
    with pytest.raises(gateway.LLMUnavailable, match="/v1/models"):
        gateway.complete(messages=[{"role": "user", "content": "x"}], purpose="chat", profile=gateway.chat_profile())
    assert caplog.text.count(asked) == 1
    monkeypatch.setattr(windows, "SERVED_RECHECK_SECONDS", 0.0)
    assert gateway.chat_profile().model == ""
    assert caplog.text.count(asked) == 2


def test_openai_without_a_model_is_gpt_4o_mini(settings):
    """With an API key and no base URL (OpenAI itself), the default model is gpt-4o-mini,
    without asking anything."""
    settings.LLM_BASE_URL = ""
    settings.LLM_API_KEY = "sk-test"
    settings.LLM_MODEL = ""
    assert gateway.chat_profile().model == gateway.OPENAI_DEFAULT_MODEL == "gpt-4o-mini"


@pytest.mark.worker
def test_a_worker_with_no_model_configured_records_the_servers_model_at_cost_0(
    worker_env: dict[str, str], llm: ScriptedLLM, school: dict[str, Any]
) -> None:
    """A real worker started with LLM_BASE_URL and no LLM_MODEL or LLM_SUMMARY_MODEL in its
    environment (the settings' own defaults) writes a summary with the server's one model, and
    its usage row is recorded under its id at cost 0 (the default prices hold gpt-4o-mini)."""
    llm.models = [LOCAL]
    env = {k: v for k, v in worker_env.items() if k not in ("LLM_MODEL", "LLM_SUMMARY_MODEL")}
    conversation = ended_pending(school["alice"])
    worker = Worker(llm, env["CELERY_QUEUE"], env).start()
    try:
        send_summarize(conversation.pk)
        wait_for(lambda: Conversation.objects.get(pk=conversation.pk).summary_status == "done")
    finally:
        worker.stop()
    assert [call["model"] for call in llm.calls("summary")] == [LOCAL]
    usage = LLMUsage.objects.get(purpose="summary", conversation_id=conversation.pk)
    assert (usage.model, usage.cost) == (LOCAL_ID, Decimal(0))


# --- 12. The summary model's window on the chat endpoint ------------------------------------------


def test_the_summary_model_on_the_chat_endpoint_uses_llm_context_window(unnamed, settings, caplog):
    """LLM_CONTEXT_WINDOW reaches the summary side when it is the chat model (same base URL and
    model) and LLM_SUMMARY_CONTEXT_WINDOW is unset: the start-up log says so for both."""
    settings.LLM_CONTEXT_WINDOW = 4096
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 0
    with caplog.at_level(logging.INFO, logger="tutor.startup"):
        startup.warm_up()
    assert f"chat model: {LOCAL} at {unnamed.base_url}, context window 4096 tokens (setting)" in caplog.text
    assert f"summary model: {LOCAL} at {unnamed.base_url}, context window 4096 tokens (setting)" in caplog.text


def test_another_summary_model_keeps_its_own_window(llm, settings):
    """A summary model other than the chat model does not take the chat model's window, and
    LLM_SUMMARY_CONTEXT_WINDOW, when set, wins."""
    settings.LLM_CONTEXT_WINDOW = 4096
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 0
    assert settings.LLM_SUMMARY_MODEL != settings.LLM_MODEL
    assert gateway.context_window(gateway.background_profile()).source != "setting"
    settings.LLM_SUMMARY_MODEL = settings.LLM_MODEL
    assert gateway.context_window(gateway.background_profile()) == windows.Window(4096, "setting")
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 8192
    assert gateway.context_window(gateway.background_profile()).tokens == 8192


def test_a_long_conversation_is_summarised_in_parts_for_the_chat_window(clients, unnamed, settings):
    """On a server that does not state its window, LLM_CONTEXT_WINDOW=2048 alone makes the
    summary of a transcript longer than that come in parts, no request past the window."""
    settings.LLM_CONTEXT_WINDOW = 2048
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 0
    unnamed.context_window = 2048
    cid = start(clients["alice"])
    assert send(clients["alice"], cid, "Can you help me with fractions?", "m1").status_code == 201
    conversation = Conversation.objects.get(pk=cid)
    for i in range(12):
        Message.objects.create(
            conversation=conversation,
            seq=100 + i,
            role="student" if i % 2 == 0 else "tutor",
            content=f"Part {i}: " + "fractions with unlike denominators " * 60,
            token_count=300,
            client_message_id=f"long-{i}" if i % 2 == 0 else None,
        )
    conversation_close(conversation_id=cid)
    assert conversation_summary_write(conversation_id=cid) is Outcome.STORED
    assert len(unnamed.calls("summary_part")) >= 3
    assert not LLMUsage.objects.filter(ok=False).exists()
