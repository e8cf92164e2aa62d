"""The recent-query cache (`embeddings.embed_queries`) and the openai backend's requests: batches
split by EMBEDDINGS_REQUEST_MAX_INPUTS, and the local model's name only for the local model."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memory.search import embeddings


class CountingEmbedder:
    """A deterministic embedder that records what it was asked to embed."""

    def __init__(self, name: str = "test:counting", fail: bool = False) -> None:
        self.name = name
        self.fail = fail
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        self.calls.append(list(texts))
        if self.fail:
            raise embeddings.EmbedderUnavailable("down")
        rows = [np.random.default_rng(abs(hash((self.name, t))) % 2**32).normal(size=8) for t in texts]
        return embeddings.normalise(np.array(rows).reshape(len(texts), 8))


@pytest.fixture(autouse=True)
def _empty_query_cache() -> Iterator[None]:
    embeddings.query_cache.clear()
    yield
    embeddings.query_cache.clear()


def test_a_repeated_query_is_embedded_once(settings):
    """Only the texts not seen recently reach the embedder, in one call, each once; the rows come
    back in the order asked, equal to what the embedder gives."""
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 16
    embedder = CountingEmbedder()
    first = embeddings.embed_queries(embedder, ["fractions", "fractions", "football"])
    assert embedder.calls == [["fractions", "football"]]
    second = embeddings.embed_queries(embedder, ["football", "decimals", "fractions"])
    assert embedder.calls[1:] == [["decimals"]]
    assert np.array_equal(second[0], first[2]) and np.array_equal(second[2], first[0])
    assert np.array_equal(second, embedder.embed(["football", "decimals", "fractions"]))
    assert second.dtype == np.float32 and second.shape == (3, 8)
    # A new array each time: the caller may write to it without touching the cache.
    second[:] = 0
    assert np.array_equal(embeddings.embed_queries(embedder, ["football"])[0], first[2])


def test_the_cache_keeps_the_most_recent_queries_up_to_its_size(settings):
    """Least recently used out: a query read again stays, the oldest goes."""
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 2
    embedder = CountingEmbedder()
    embeddings.embed_queries(embedder, ["a"])
    embeddings.embed_queries(embedder, ["b"])
    embeddings.embed_queries(embedder, ["a"])  # a is now the most recent
    embeddings.embed_queries(embedder, ["c"])  # b goes
    assert len(embeddings.query_cache) == 2
    embedder.calls.clear()
    embeddings.embed_queries(embedder, ["a", "c", "b"])
    assert embedder.calls == [["b"]]


def test_another_model_never_gets_a_cached_vector(settings):
    """The key includes the embedder's name: a change of model embeds again."""
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 16
    old, new = CountingEmbedder("test:old"), CountingEmbedder("test:new")
    embeddings.embed_queries(old, ["fractions"])
    embeddings.embed_queries(new, ["fractions"])
    assert new.calls == [["fractions"]]


def test_a_failure_caches_nothing_and_size_zero_turns_the_cache_off(settings):
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 16
    with pytest.raises(embeddings.EmbedderUnavailable):
        embeddings.embed_queries(CountingEmbedder(fail=True), ["fractions"])
    assert len(embeddings.query_cache) == 0
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 0
    embedder = CountingEmbedder()
    embeddings.embed_queries(embedder, ["fractions"])
    embeddings.embed_queries(embedder, ["fractions"])
    assert embedder.calls == [["fractions"], ["fractions"]]
    assert len(embeddings.query_cache) == 0


def test_the_openai_backend_splits_a_large_batch(db, openai_embedder, settings):
    """A batch larger than EMBEDDINGS_REQUEST_MAX_INPUTS goes as several requests, in order."""
    settings.EMBEDDINGS_REQUEST_MAX_INPUTS = 2
    embedder = embeddings.get_embedder()
    assert embedder is not None
    texts = [f"text number {i}" for i in range(5)]
    matrix = embedder.embed(texts)
    sizes = [len(body["input"]) for kind, body in openai_embedder.requests if kind == "embeddings"]
    assert sizes == [2, 2, 1]
    assert np.array_equal(matrix[3], embedder.embed([texts[3]])[0])


def test_the_local_name_needs_the_local_model_to_answer(db, openai_embedder, settings):
    """EMBEDDINGS_MODEL naming the local model, against an endpoint that answers with another
    model: refused, so no vector of another model is ever stored under the local model's name."""
    settings.EMBEDDINGS_MODEL = "all-MiniLM-L6-v2"
    embedder = embeddings.get_embedder()
    assert embedder is not None and embedder.name == embeddings.LOCAL_MODEL_NAME
    with pytest.raises(embeddings.EmbedderUnavailable, match="names the local model"):
        embedder.embed(["fractions"])
