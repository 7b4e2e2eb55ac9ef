"""The int8 ONNX embedder against the float model it quantises (both offline, no database)."""

from __future__ import annotations

import numpy as np
import pytest

from slowave_graph.embedder import (
    DEFAULT_MODEL,
    FLOAT_MODEL,
    INT8_MODEL,
    OnnxInt8Embedder,
    SentenceTransformerEmbedder,
    load_embedder,
)

TEXTS = [
    "Atlas authentication credentials expire after 45 minutes",
    "What did Caroline research about adoption agencies?",
    "deploy",
    "Never restart the auth service during business hours. " * 30,  # longer than 256 tokens
]


@pytest.fixture(scope="module")
def int8() -> OnnxInt8Embedder:
    return OnnxInt8Embedder(batch_size=2)


def test_int8_vectors_match_the_float_model(int8: OnnxInt8Embedder) -> None:
    quantised = np.array(int8.embed(TEXTS))
    exact = np.array(SentenceTransformerEmbedder(FLOAT_MODEL).embed(TEXTS))
    assert quantised.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    agreement = (quantised * exact).sum(axis=1)
    assert agreement.min() > 0.99, agreement
    # and it still tells texts apart: each vector is nearest to its own float twin
    assert (np.argmax(quantised @ exact.T, axis=1) == np.arange(len(TEXTS))).all()


def test_batches_and_identity(int8: OnnxInt8Embedder) -> None:
    one_by_one = [int8.embed([t])[0] for t in TEXTS]
    assert np.allclose(np.array(int8.embed(TEXTS)), np.array(one_by_one), atol=1e-5)  # padding-neutral
    assert int8.embed([]) == []
    assert (int8.model_name, int8.dimension) == (INT8_MODEL, 384)
    assert isinstance(load_embedder(INT8_MODEL), OnnxInt8Embedder)
    assert DEFAULT_MODEL == INT8_MODEL
