"""`manage.py embeddings_server`, started for real in a subprocess: the openai backend pointed at
it gets the local model's vectors under the local model's name, bad requests get OpenAI-style
errors, and the model runs on one thread unless told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import numpy as np
import pytest

from memory.embeddings_server import MAX_INPUT_CHARS, MAX_INPUTS
from memory.search import embeddings
from tests.conftest import ROOT, free_port

TEXTS = [
    "Loves playing football every weekend",
    "Struggles with adding unlike fractions. Mixed up the denominators twice.",
    "soccer match",
    "Les dénominateurs communs l'ont aidée à comparer les fractions.",
    "",
]


class EmbeddingsServer:
    def __init__(self, base_url: str, log: Path) -> None:
        self.base_url = base_url
        self.log = log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def embeddings_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddingsServer]:
    """The server as production runs it: its own process, the default thread setting."""
    port = free_port()
    log = tmp_path_factory.mktemp("embeddings-server") / "server.log"
    env = {k: v for k, v in os.environ.items() if k != "EMBEDDINGS_LOCAL_THREADS"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "embeddings_server", "--port", str(port)],
            cwd=ROOT,
            env={**env, "PYTHONUNBUFFERED": "1"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = EmbeddingsServer(f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 90  # loading the model takes seconds on a busy machine
        while time.monotonic() < deadline:
            assert proc.poll() is None, server.log_text()
            try:
                if httpx2.get(f"{server.base_url}/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError(f"embeddings server did not start:\n{server.log_text()}")
        yield server
    finally:
        proc.terminate()
        proc.wait(30)
        assert "Traceback" not in server.log_text(), server.log_text()


def post(server: EmbeddingsServer, body: Any) -> httpx2.Response:
    content = body if isinstance(body, bytes) else None
    return httpx2.post(
        f"{server.base_url}/v1/embeddings",
        content=content,
        json=None if content is not None else body,
        timeout=30,
    )


def test_openai_backend_gets_the_local_vectors_under_the_local_name(db, embeddings_server, settings):
    """Configured as the docs say, the openai backend names its vectors as the local backend does
    and gets the same vectors, a batch split over several requests included."""
    settings.EMBEDDINGS_BACKEND = "openai"
    settings.EMBEDDINGS_BASE_URL = f"{embeddings_server.base_url}/v1"
    settings.EMBEDDINGS_API_KEY = ""
    settings.EMBEDDINGS_MODEL = "all-MiniLM-L6-v2"
    settings.EMBEDDINGS_TIMEOUT_SECONDS = 30.0
    settings.EMBEDDINGS_REQUEST_MAX_INPUTS = 2
    remote = embeddings.get_embedder()
    assert isinstance(remote, embeddings.OpenAIEmbedder)
    assert remote.name == embeddings.LOCAL_MODEL_NAME == embeddings.LocalEmbedder.name

    served = remote.embed(TEXTS)
    local = embeddings.LocalEmbedder().embed(TEXTS)
    assert served.shape == local.shape == (len(TEXTS), embeddings.LOCAL_DIM)
    assert served.dtype == np.float32
    assert np.allclose(served, local, atol=1e-6)
    # The full id is accepted too; the server always answers with it.
    full = embeddings.OpenAIEmbedder(f"{embeddings_server.base_url}/v1", "", embeddings.LOCAL_MODEL_ID, 30.0)
    assert full.name == embeddings.LOCAL_MODEL_NAME
    assert np.allclose(full.embed(TEXTS[:1]), local[:1], atol=1e-6)


def test_float_encoding_models_and_usage(embeddings_server):
    """The OpenAI response shape, with plain floats when asked; /v1/models lists the one model."""
    resp = post(embeddings_server, {"model": embeddings.LOCAL_MODEL_ID, "input": "hello", "encoding_format": "float"})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["object"] == "list" and body["model"] == embeddings.LOCAL_MODEL_ID
    assert [(d["object"], d["index"]) for d in body["data"]] == [("embedding", 0)]
    vector = np.array(body["data"][0]["embedding"], dtype=np.float32)
    assert vector.shape == (embeddings.LOCAL_DIM,) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # [CLS] hello [SEP]
    assert body["usage"] == {"prompt_tokens": 3, "total_tokens": 3}

    models = httpx2.get(f"{embeddings_server.base_url}/v1/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == [embeddings.LOCAL_MODEL_ID]


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        (b"not json", 400, None),
        ([1, 2], 400, None),
        ({"input": "hi"}, 400, "model"),
        ({"model": "all-MiniLM-L6-v2"}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": []}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": ["ok", 3]}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": [[101, 102]]}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": ["a"] * (MAX_INPUTS + 1)}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": "a" * (MAX_INPUT_CHARS + 1)}, 400, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": "hi", "dimensions": 512}, 400, "dimensions"),
        ({"model": "all-MiniLM-L6-v2", "input": "hi", "encoding_format": "int8"}, 400, "encoding_format"),
        ({"model": "text-embedding-3-small", "input": "hi"}, 404, "model"),
    ],
)
def test_bad_requests_get_an_openai_style_error(embeddings_server, body, status, param):
    """Each refusal is a JSON error the openai SDK understands, never a traceback or a vector."""
    resp = post(embeddings_server, body)
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"] == "application/json"
    error = resp.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert error["param"] == param


def test_a_model_the_server_does_not_serve_is_unavailable(db, embeddings_server):
    """The openai backend asking for another model gets the server's 404 as EmbedderUnavailable,
    which makes recall lexical rather than failing."""
    other = embeddings.OpenAIEmbedder(f"{embeddings_server.base_url}/v1", "", "text-embedding-3-small", 30.0)
    with pytest.raises(embeddings.EmbedderUnavailable, match="NotFoundError"):
        other.embed(["hi"])


def test_the_local_model_runs_on_one_thread_by_default(embeddings_server, settings):
    """EMBEDDINGS_LOCAL_THREADS defaults to 1, in the server and in a process using `local`."""
    assert settings.EMBEDDINGS_LOCAL_THREADS == 1
    assert "on 1 ONNX Runtime thread," in embeddings_server.log_text()
    embeddings.LocalEmbedder().embed(["warm"])
    session = embeddings.LocalEmbedder._model.session
    assert embeddings.LocalEmbedder.threads() == 1 and session.get_session_options().intra_op_num_threads == 1
