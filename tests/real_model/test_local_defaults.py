"""The real server configured as a new user would: LLM_BASE_URL, no LLM_MODEL or
LLM_SUMMARY_MODEL, and LLM_CONTEXT_WINDOW only (llama-cpp-python does not state its window).

The product must learn the model's name from the server (`GET /v1/models` lists one model, by
its GGUF path), record every call under it at cost 0 (a local model is not priced), and give the
summary side, the same endpoint and model, the chat side's window.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations.models import Message
from conversations.services import conversation_close
from conversations.summaries import Outcome, conversation_summary_write
from llm.models import LLMUsage
from llm.windows import model_id
from tests.conversations.test_turn import send, start
from tests.real_model.conftest import CONTEXT_TOKENS, RealModel
from tests.real_model.test_real_model import error_of
from tutor import startup

pytestmark = pytest.mark.real_model


@pytest.fixture
def unnamed(real_llm: RealModel, settings: Any) -> RealModel:
    """The real server with no model named in the settings and the window set for chat only."""
    settings.LLM_MODEL = ""
    settings.LLM_SUMMARY_MODEL = ""
    settings.LLM_CONTEXT_WINDOW = CONTEXT_TOKENS
    settings.LLM_SUMMARY_CONTEXT_WINDOW = 0
    return real_llm


def test_calls_are_recorded_under_the_servers_model_at_cost_0(clients: dict[str, APIClient], unnamed: RealModel):
    """A turn and the conversation's summary are answered by the model the server lists, and
    their usage rows and the reply carry its id (the GGUF's name, never the server's path), at
    cost 0."""
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "What is 3/4 of 12?", "m1")
    assert resp.status_code == 201, error_of(resp)
    conversation_close(conversation_id=cid)
    assert conversation_summary_write(conversation_id=cid) in (Outcome.STORED, Outcome.FALLBACK)
    # Every row, the summary's refused json_schema request included (this server answers it 500).
    usage = list(LLMUsage.objects.filter(conversation_id=cid).values_list("purpose", "model", "cost", "ok"))
    assert {purpose for purpose, _, _, ok in usage if ok} == {"chat", "summary"}, usage
    assert {(model, cost) for _, model, cost, _ in usage} == {(model_id(unnamed.model), Decimal(0))}, usage
    assert Message.objects.get(conversation_id=cid, role="tutor").model == model_id(unnamed.model)
    assert "/" not in model_id(unnamed.model)


def test_the_summary_side_gets_the_chat_window(unnamed: RealModel, caplog: pytest.LogCaptureFixture):
    """The start-up log of a process gives both sides the server's model and LLM_CONTEXT_WINDOW
    (before: the summary side logged 131,072 tokens, "the server does not say")."""
    with caplog.at_level(logging.INFO, logger="tutor.startup"):
        startup.warm_up()
    for side in ("chat", "summary"):
        line = f"{side} model: {unnamed.model} at {unnamed.base_url}, context window {CONTEXT_TOKENS} tokens (setting)"
        assert line in caplog.text, caplog.text
