"""The local embedder's int8 query side (EMBEDDINGS_QUERY_INT8): its vectors stay close to the fp32
ones that memories are stored with, never share a cache entry with them, and the setting turns it off.

The reference vectors are onnx_reference.json's (sentence-transformers' fp32 vectors, equal to the
fp32 model's within 1e-4: test_onnx_embedder.py). Each side of the model is built once per process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memory.search import embeddings

REFERENCE = json.loads((Path(__file__).with_name("onnx_reference.json")).read_text(encoding="utf-8"))
TEXTS: list[str] = REFERENCE["texts"]
VECTORS = np.array(REFERENCE["vectors"], dtype=np.float32)
# Texts with next to no words: empty, a space, "?", "hi", emoji and "thanks!!!".
DEGENERATE = {0, 1, 2, 3, 16}
ORDINARY = [i for i in range(len(TEXTS)) if i not in DEGENERATE]


@pytest.fixture
def local(local_embedder, settings) -> Iterator[embeddings.LocalEmbedder]:
    settings.EMBEDDINGS_QUERY_INT8 = True
    embeddings.query_cache.clear()
    yield embeddings.LocalEmbedder()
    embeddings.query_cache.clear()


def test_int8_query_vectors_are_within_the_stated_cosine_of_fp32(local):
    """Each text alone, as a query is embedded: at least 0.98 cosine to the fp32 vector for a
    sentence in any of the set's languages (code and truncated texts included), 0.96 for a text of
    next to no words; unit length, float32."""
    assert local.query_precision == "int8"
    vectors = np.concatenate([local.embed_query([text]) for text in TEXTS])
    assert vectors.dtype == np.float32 and vectors.shape == VECTORS.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(vectors * VECTORS, axis=1)
    assert cosines[ORDINARY].min() >= 0.98, dict(zip(ORDINARY, cosines[ORDINARY].round(4), strict=True))
    assert cosines.min() >= 0.96 and cosines.mean() >= 0.985
    # Not the fp32 vectors: the int8 side is the one that ran.
    assert cosines.max() < 1 - 1e-4


def test_a_question_and_its_topic_text_in_one_call_stay_within_the_cosine(local):
    """Recall embeds a message and its topic text together, and the activations are quantized once
    for the call: each vector of the pair is still within 0.98 of its fp32 vector."""
    for index in ORDINARY:
        text = TEXTS[index]
        topic = text.split(" ", 1)[-1]
        pair = local.embed_query([text, topic])
        fp32 = local.embed([text, topic])
        assert float(pair[0] @ VECTORS[index]) >= 0.98, index
        assert float(pair[1] @ fp32[1]) >= 0.98, index


def test_the_cache_keeps_int8_and_fp32_vectors_apart(local, settings):
    """The recent-query cache keys the precision: turning the int8 side off embeds the same text
    again in fp32, and each precision gets back its own vector."""
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 16
    int8 = embeddings.embed_queries(local, ["How do I add fractions?"])
    settings.EMBEDDINGS_QUERY_INT8 = False
    fp32 = embeddings.embed_queries(local, ["How do I add fractions?"])
    assert len(embeddings.query_cache) == 2 and embeddings.query_cache.hits == 0
    assert np.array_equal(fp32, local.embed(["How do I add fractions?"]))
    assert not np.array_equal(int8, fp32) and float(int8[0] @ fp32[0]) >= 0.98
    settings.EMBEDDINGS_QUERY_INT8 = True
    assert np.array_equal(embeddings.embed_queries(local, ["How do I add fractions?"]), int8)
    assert embeddings.query_cache.hits == 1


def test_the_setting_turns_the_int8_side_off(local, settings):
    """EMBEDDINGS_QUERY_INT8=false: queries are embedded by the fp32 model, as memories are."""
    settings.EMBEDDINGS_QUERY_INT8 = False
    assert local.query_precision == "fp32" and embeddings.query_precision(local) == "fp32"
    texts = [TEXTS[4], TEXTS[4].split(" ", 1)[-1]]
    assert np.array_equal(local.embed_query(texts), local.embed(texts))
    settings.EMBEDDINGS_QUERY_CACHE_SIZE = 0
    assert np.array_equal(embeddings.embed_queries(local, texts), local.embed(texts))


def test_memories_and_endpoints_stay_in_fp32(local, openai_embedder, settings):
    """`embed` (memories, the embeddings server) is the fp32 model whatever the setting, under the
    one model name; the openai backend's queries are the endpoint's own vectors."""
    assert local.name == embeddings.LOCAL_MODEL_NAME
    assert float(local.embed([TEXTS[4]])[0] @ VECTORS[4]) >= 1 - 1e-4
    remote = embeddings.get_embedder()
    assert isinstance(remote, embeddings.OpenAIEmbedder) and embeddings.query_precision(remote) == "fp32"
