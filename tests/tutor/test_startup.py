"""A process says at start which models, windows and embedder it uses, and loads the embedder then."""

from __future__ import annotations

from tutor.startup import warm_up


def test_warm_up_logs_the_models_windows_and_embedder(llm, caplog, settings):
    """The start-up log names the chat and summary models, their windows with the source, and the
    embedder; the window asked of the server is then known before the first request."""
    caplog.set_level("INFO")
    llm.models_meta = {"max_model_len": 8192}
    warm_up()
    assert "chat model: scripted-tutor at" in caplog.text and "context window 8192 tokens" in caplog.text
    assert "summary model: scripted-summary" in caplog.text
    assert "embedder: none" in caplog.text


def test_warm_up_without_a_model_still_starts(no_llm, caplog):
    """No model configured: the process starts and the log says how to configure one."""
    warm_up()
    assert "chat model: not configured" in caplog.text
