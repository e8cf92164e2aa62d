"""Conversations on a small model (a 4,096-token window): they never get stuck."""

from __future__ import annotations

import pytest

from conversations.models import ContextCheckpoint, Message
from llm import gateway
from tests.conversations.test_turn import send, start

LONG = ("We add fractions by finding a common denominator, then adding the numerators. " * 60)[:4500]


@pytest.mark.parametrize("wording", ["openai", "llama-cpp-python", "vllm", "llamacpp", "ollama"])
def test_a_prompt_past_the_window_is_compressed_and_sent_again(clients, llm, wording):
    """The server refuses the prompt as too long (in its own words): the turn learns the window,
    compresses harder and tries once more; the student gets a 201, never a 502."""
    llm.context_window = 4096
    llm.context_error = wording
    cid = start(clients["alice"])
    statuses = [send(clients["alice"], cid, f"{i}: {LONG}", f"m{i}").status_code for i in range(6)]
    assert statuses == [201] * 6
    assert ContextCheckpoint.objects.filter(conversation_id=cid).exists()
    learned = gateway.context_window(gateway.chat_profile())
    assert learned.tokens <= 4096 and "learned" in learned.source


def test_thirty_long_turns_on_a_known_small_window(clients, llm, settings):
    """30 turns of 4,500 characters on a 4,096-token model all complete, with compression; every
    prompt sent fits the window."""
    llm.context_window = 4096
    llm.models_meta = {"max_model_len": 4096}
    cid = start(clients["alice"])
    statuses = [send(clients["alice"], cid, f"{i}: {LONG}", f"m{i}").status_code for i in range(30)]
    assert statuses == [201] * 30
    assert ContextCheckpoint.objects.filter(conversation_id=cid).count() >= 2
    assert Message.objects.filter(conversation_id=cid).count() == 60  # nothing deleted
    assert all(sum(len(str(m.get("content") or "")) // 4 + 4 for m in c["messages"]) <= 4096 for c in llm.calls("chat"))


def test_a_message_that_cannot_fit_the_window_is_refused_up_front(clients, llm):
    """20,000 characters on a 4,096-token model: a 400 that names the limit in characters, nothing
    stored and nothing sent; the next short message gets its reply."""
    llm.models_meta = {"max_model_len": 4096}
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "word " * 4000, "big")
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["code"] == "message_too_long"
    assert err["details"]["context_window"] == 4096 and 1000 < err["details"]["max_characters"] < 16000
    assert f"{err['details']['max_characters']:,} characters" in err["message"]
    assert not Message.objects.filter(conversation_id=cid).exists() and llm.calls("chat") == []
    assert send(clients["alice"], cid, "Can you help with fractions?", "small").status_code == 201


@pytest.mark.parametrize("cut", [True, False])
def test_on_a_server_that_hides_its_window_an_oversized_message_is_a_400_once_learned(clients, llm, cut):
    """llama-cpp-python reports no window: the first prompt past it reveals it (its stream comes
    back empty, or cut before its end, and the same request without streaming names the window).
    A message that cannot fit on its own is then a 400 naming the limit, at once on a retry; the
    next message is answered."""
    llm.context_window = 4096
    llm.context_error = "llama-cpp-python"
    llm.cut_failed_streams = cut
    cid = start(clients["alice"])
    resp = send(clients["alice"], cid, "word " * 4000, "big")
    assert resp.status_code == 400, resp.content
    err = resp.json()["error"]
    assert err["code"] == "message_too_long" and err["details"]["context_window"] == 4096
    assert "characters" in err["message"]
    again = send(clients["alice"], cid, "word " * 4000, "big")
    assert again.status_code == 400
    assert send(clients["alice"], cid, "Can you help with fractions?", "small").status_code == 201


def test_a_server_whose_tokenizer_counts_more_is_learned_and_fitted(clients, llm):
    """The server counts half again as many tokens as the product for the same text: its
    refusal gives both figures, the product learns the ratio, and every turn is answered."""
    llm.context_window = 4096
    llm.context_error = "llama-cpp-python"
    llm.token_scale = 1.5
    cid = start(clients["alice"])
    statuses = [send(clients["alice"], cid, f"{i}: {LONG}", f"m{i}").status_code for i in range(8)]
    assert statuses == [201] * 8
    window = gateway.context_window(gateway.chat_profile())
    assert window.stated == 4096 and window.tokens < 3000
