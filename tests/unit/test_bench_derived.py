"""Derived fill vectors: deterministic per memory, unit length, close to (but not equal to) the
base embedding, and each distinct sentence embedded once."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence

import numpy as np

from slowave_graph.workload import derived, synthetic

DIM = 384


class FakeEmbedder:
    """Unit vectors seeded by the text (no model load); counts what it was asked to embed."""

    model_name = "fake"
    dimension = DIM

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked.extend(texts)
        out = []
        for text in texts:
            v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(DIM)
            out.append((v / np.linalg.norm(v)).tolist())
        return out

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


def test_noise_is_deterministic_unit_and_close_to_the_base() -> None:
    base = np.random.default_rng(0).standard_normal(DIM)
    base /= np.linalg.norm(base)
    vectors = np.array([derived.noisy(base, 7, "project:x", i) for i in range(200)])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert derived.noisy(base, 7, "project:x", 5) == vectors[5].tolist()
    assert derived.noisy(base, 8, "project:x", 5) != vectors[5].tolist()
    assert derived.noisy(base, 7, "project:y", 5) != vectors[5].tolist()
    cosines = vectors @ base
    assert cosines.min() > 0.96 and cosines.max() < 0.99
    assert abs(cosines.mean() - derived.expected_cosine(DIM)) < 0.005
    assert 0.97 <= derived.expected_cosine(DIM) <= 0.98
    assert (vectors @ vectors.T)[np.triu_indices(200, 1)].max() < 0.99  # every memory its own vector


def test_derived_vectors_embed_each_sentence_once_and_resume_identically() -> None:
    embedder = FakeEmbedder()
    plan = synthetic.ScopePlan("project:derived", 300)
    memories = list(synthetic.synthetic_memories(plan, seed=3))
    assert [m.record() for m in memories] == list(synthetic.memories(plan, seed=3))
    vectors = asyncio.run(derived.DerivedVectors(embedder, seed=3).vectors(memories))
    sentences = {s for m in memories for s in m.sentences}
    assert sorted(embedder.asked) == sorted(sentences)  # each distinct sentence once
    assert len(sentences) < sum(len(m.sentences) for m in memories)
    assert all(" (note " not in s for s in embedder.asked)  # keyed without the serial suffix
    resumed = asyncio.run(derived.DerivedVectors(FakeEmbedder(), seed=3).vectors(memories[250:]))
    assert resumed == vectors[250:]
    single = next(i for i, m in enumerate(memories) if len(m.sentences) == 1)
    exact = np.array(embedder.embed([memories[single].text])[0])
    assert 0.96 < float(np.array(vectors[single]) @ exact) < 0.99  # a lone claim: its own embedding
    several = next(i for i, m in enumerate(memories) if len(m.sentences) > 2)
    parts = np.array(embedder.embed(memories[several].sentences))
    assert all(float(np.array(vectors[several]) @ p) > 0.1 for p in parts)  # pooled from its sentences
