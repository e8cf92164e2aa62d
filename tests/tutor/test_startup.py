"""A process says at start which models, windows and embedder it uses, and loads the embedder then."""

from __future__ import annotations

from memory.search import embeddings
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


def test_a_web_process_loads_the_query_side_and_a_worker_the_fp32_model(local_embedder, no_llm, caplog, monkeypatch):
    """The web process embeds queries only (the int8 query side), a worker's pool process embeds
    memories (fp32): each warm-up loads that side alone, and the log says how queries are embedded."""
    caplog.set_level("INFO")
    # Each side is built once per process: a side built already is handed back, not built again.
    held = {False: embeddings.LocalEmbedder._model, True: embeddings.LocalEmbedder._query_model}
    build = embeddings.LocalEmbedder._build

    def built(threads: int, *, int8: bool = False) -> object:
        held[int8] = held[int8] or build(threads, int8=int8)
        return held[int8]

    monkeypatch.setattr(embeddings.LocalEmbedder, "_build", staticmethod(built))
    for queries in (True, False):
        monkeypatch.setattr(embeddings.LocalEmbedder, "_model", None)
        monkeypatch.setattr(embeddings.LocalEmbedder, "_query_model", None)
        warm_up(safety_screen=False, queries=queries)
        assert (embeddings.LocalEmbedder._query_model is not None) is queries
        assert (embeddings.LocalEmbedder._model is not None) is not queries
    assert "embedder: local local:sentence-transformers/all-MiniLM-L6-v2, queries in int8, ready in" in caplog.text
