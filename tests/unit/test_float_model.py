"""What needs PyTorch (`make test-torch`, which `.ci/run` runs after `make test`): the float model
through sentence-transformers, the reference the ONNX models are held to."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.reference_vectors import computed, stored

pytestmark = pytest.mark.torch


def test_the_stored_reference_vectors_are_what_sentence_transformers_computes() -> None:
    now, kept = computed(), stored()
    assert now.shape == kept.shape == (4, 384)
    assert np.allclose(now, kept, atol=1e-6), np.abs(now - kept).max()


def test_the_float_model_loads_as_an_embedder() -> None:
    from slowave_graph.embedding.embedder import FLOAT_MODEL, load_embedder

    embedder = load_embedder(FLOAT_MODEL)
    assert (embedder.model_name, embedder.dimension) == (FLOAT_MODEL, 384)
    vector = np.array(embedder.embed(["deploy"])[0])
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
