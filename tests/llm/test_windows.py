"""The model's context window: set, asked of the server, learned from its error, or the default."""

from __future__ import annotations

import pytest

from llm import gateway, windows


def chat_window():
    return gateway.context_window(gateway.chat_profile())


def test_the_setting_wins(llm, settings):
    """LLM_CONTEXT_WINDOW, when set, is used as is."""
    settings.LLM_CONTEXT_WINDOW = 8192
    llm.models_meta = {"max_model_len": 4096}
    assert chat_window() == windows.Window(8192, "setting")


@pytest.mark.parametrize(
    ("meta", "tokens", "source"),
    [
        ({"max_model_len": 8192}, 8192, "max_model_len"),  # vLLM
        ({"meta": {"n_ctx": 4096, "n_ctx_train": 8192}}, 4096, "meta.n_ctx"),  # llama.cpp server
        ({"meta": {"n_ctx_train": 8192}}, 8192, "meta.n_ctx_train"),
        ({"context_length": 32768}, 32768, "context_length"),
    ],
)
def test_the_window_is_read_from_v1_models(llm, caplog, meta, tokens, source):
    """vLLM's max_model_len, llama.cpp's n_ctx, ...: read from /v1/models and logged with its source."""
    llm.models_meta = meta
    window = chat_window()
    assert window.tokens == tokens and source in window.source
    assert f"{tokens} tokens" in caplog.text and source in caplog.text


def test_ollama_num_ctx_from_api_show(llm):
    """Ollama: num_ctx from /api/show's parameters, else its default of 4,096."""
    llm.ollama_show = {"parameters": "stop <|eot|>\nnum_ctx 8192", "model_info": {"llama.context_length": 131072}}
    assert chat_window().tokens == 8192
    windows.forget()
    llm.ollama_show = {"parameters": "", "model_info": {"llama.context_length": 131072}}
    assert chat_window().tokens == 4096


def test_the_default_when_the_server_says_nothing(llm, caplog):
    """A server that says nothing: 128K, and the log says it is the default."""
    assert chat_window().tokens == windows.DEFAULT_CONTEXT_WINDOW
    assert "default" in caplog.text


def test_a_learned_window_is_shared_and_wins_over_discovery(llm):
    """A window learned from an error is kept in the shared cache for that endpoint."""
    llm.models_meta = {"max_model_len": 8192}
    assert chat_window().tokens == 8192
    gateway.learn_window(gateway.chat_profile(), 4096)
    windows.forget()  # another process
    assert chat_window().tokens == 4096


@pytest.mark.parametrize(
    ("text", "window", "requested"),
    [
        (
            "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens",
            4096,
            5000,
        ),
        ("This model's maximum context length is 4096 tokens. However, you requested 5410 tokens (5410 in", 4096, 5410),
        ('{"code": "context_length_exceeded", "message": "maximum context length is 8192 tokens"}', 8192, None),
        ("Requested tokens (5000) exceed context window of 4096", 4096, 5000),
        ('the request exceeds the available context size {"n_prompt_tokens": 3000, "n_ctx": 2048}', 2048, 3000),
        ("input length exceeds the context length", None, None),
        ("prompt is too long: 210000 tokens > 200000 maximum", None, None),
    ],
)
def test_context_exceeded_in_each_servers_words(text, window, requested):
    """OpenAI, llama-cpp-python, vLLM, llama.cpp, Ollama, Anthropic-style wordings are recognised;
    the window and the prompt's size in the server's tokens are read where the text names them."""
    assert windows.context_exceeded(text) == (True, window, requested)


def test_other_errors_are_not_context_errors():
    assert windows.context_exceeded("Invalid API key") == (False, None, None)
    assert windows.context_exceeded("model 'x' not found") == (False, None, None)


def test_a_server_counting_more_tokens_than_we_do_shrinks_our_budgets(llm):
    """A window learned with a scale (the server counts 2 tokens where we count 1): budgets use
    half the window, and messages still state the server's own figure."""
    gateway.learn_window(gateway.chat_profile(), 4096, scale=0.5)
    window = chat_window()
    assert (window.tokens, window.stated) == (2048, 4096)
    gateway.learn_window(gateway.chat_profile(), 4096)  # the gateway relearning the window keeps the scale
    assert chat_window().tokens == 2048
