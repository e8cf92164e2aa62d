"""Context compression past COMPRESSION_THRESHOLD_TOKENS: the latest KEEP_RECENT_MESSAGES stay
verbatim, the rest becomes a stored checkpoint summary, nothing is deleted."""

from __future__ import annotations

from unittest import mock

from conversations.models import ContextCheckpoint, Conversation, Message
from conversations.turn import window
from llm import tokens
from tests.conversations.test_turn import send, start

WORDS = "fractions denominators numerator practice example quiz answer step "


def chat(client, cid, n, offset=0):
    for i in range(offset, offset + n):
        resp = send(client, cid, f"question {i}: " + WORDS * 10, f"m{i}")
        assert resp.status_code == 201, resp.content


def test_below_threshold_sends_the_whole_history(clients, llm, settings):
    """Under the threshold every message is sent and no compression call is made."""
    cid = start(clients["alice"])
    chat(clients["alice"], cid, 5)
    last = llm.calls("chat")[-1]["messages"]
    assert sum(1 for m in last if m["role"] in ("user", "assistant")) == 9
    assert llm.calls("compression") == []
    assert not ContextCheckpoint.objects.exists()


def test_crossing_threshold_compresses_and_keeps_recent_verbatim(clients, llm, settings):
    """Past the threshold the 14 latest messages stay verbatim, the rest is replaced by a summary
    stored as a checkpoint; the full history stays in the database and the API."""
    # 1,200 tokens for the history beside the system prompt and the tools' schemas.
    settings.COMPRESSION_THRESHOLD_TOKENS = window.turn_limits().fixed + 1_200
    cid = start(clients["alice"])
    llm.script("compression", {"content": "SUMMARY-ONE: fractions practice so far."})
    chat(clients["alice"], cid, 20)
    checkpoint = ContextCheckpoint.objects.filter(conversation_id=cid).order_by("covers_through_seq").first()
    assert checkpoint is not None
    assert checkpoint.summary == "SUMMARY-ONE: fractions practice so far."
    # The first turn sent with the summary: exactly the 14 latest messages, verbatim, follow it.
    calls = llm.calls("chat")
    first = next(c["messages"] for c in calls if any("SUMMARY-ONE" in str(m["content"]) for m in c["messages"]))
    convo = [m for m in first if m["role"] in ("user", "assistant")]
    assert len(convo) == settings.KEEP_RECENT_MESSAGES
    expected = list(
        Message.objects.filter(conversation_id=cid, seq__gt=checkpoint.covers_through_seq)
        .order_by("seq")
        .values_list("content", flat=True)[: settings.KEEP_RECENT_MESSAGES]
    )
    assert [m["content"] for m in convo] == expected
    assert checkpoint.covered_messages == checkpoint.covers_through_seq
    # What the summary model was asked to fold: the old messages, not the 14 latest.
    folded = llm.calls("compression")[0]["messages"][1]["content"]
    assert "question 0:" in folded
    assert all(m["content"] not in folded for m in convo if m["role"] == "user")
    # Nothing is deleted.
    assert Message.objects.filter(conversation_id=cid).count() == 40
    detail = clients["alice"].get(f"/api/v1/conversations/{cid}/?limit=100").json()
    assert len(detail["messages"]["results"]) == 40


def test_checkpoint_is_reused_then_folded_into_the_next(clients, llm, settings):
    """Later turns reuse the checkpoint without a new compression call; a later compression folds
    the previous summary in."""
    settings.COMPRESSION_THRESHOLD_TOKENS = window.turn_limits().fixed + 1_200
    cid = start(clients["alice"])
    llm.script("compression", {"content": "SUMMARY-ONE."}, {"content": "SUMMARY-TWO."})
    chat(clients["alice"], cid, 12)
    assert len(llm.calls("compression")) == 1
    n_after_first = len(llm.calls("chat"))
    chat(clients["alice"], cid, 1, offset=100)
    assert len(llm.calls("compression")) == 1, "the checkpoint is reused"
    assert len(llm.calls("chat")) == n_after_first + 1
    chat(clients["alice"], cid, 20, offset=200)
    assert ContextCheckpoint.objects.filter(conversation_id=cid).count() >= 2
    second = llm.calls("compression")[1]["messages"][1]["content"]
    assert "Earlier summary:\n<conversation_summary>SUMMARY-ONE.</conversation_summary>" in second


def test_failed_compression_still_completes_the_turn_with_a_history_that_fits(clients, llm, settings, caplog):
    """If the summary call fails the turn completes: oldest messages are left out, with a marker, and it is logged."""
    settings.COMPRESSION_THRESHOLD_TOKENS = window.turn_limits().fixed + 1_200
    cid = start(clients["alice"])
    for _ in range(20):
        llm.script("compression", {"status": 503})
    chat(clients["alice"], cid, 16)
    assert not ContextCheckpoint.objects.exists()
    prompt = llm.calls("chat")[-1]["messages"]
    markers = [m for m in prompt if m["role"] == "system" and "not shown here" in m["content"]]
    assert len(markers) == 1
    sent_tokens = sum(tokens.count_tokens(str(m["content"])) + 4 for m in prompt)
    assert sent_tokens <= settings.COMPRESSION_THRESHOLD_TOKENS + 400  # + the tool schema, counted apart
    assert prompt[-1]["content"].startswith("question 15:")
    assert "context compression failed" in caplog.text


def test_compression_decision_does_not_retokenise_history(clients, llm, settings):
    """Deciding whether to compress uses stored counts: a turn tokenises only new text, whatever the history."""
    cid = start(clients["alice"])
    chat(clients["alice"], cid, 30)
    conversation = Conversation.objects.get(pk=cid)
    assert conversation.history_tokens == sum(
        Message.objects.filter(conversation_id=cid).values_list("token_count", flat=True)
    )
    real = tokens.count_tokens
    counted: list[int] = []

    def spy(text, **kw):
        counted.append(len(text))
        return real(text, **kw)

    with (
        mock.patch("conversations.turn.window.count_tokens", side_effect=spy),
        mock.patch("conversations.turn.finish.count_tokens", side_effect=spy),
    ):
        chat(clients["alice"], cid, 1, offset=500)
    # The student's message and the reply, nothing from the 60 earlier messages.
    assert len(counted) == 2
