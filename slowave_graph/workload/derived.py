"""Derived vectors for filling large benchmark databases (``bench load --fill-vectors derived``).

Embedding every synthetic text is what a real import does, but at 1M memories it is impractical
on a small machine: the generator yields ~450k distinct texts (one claim of ~35k followed by a
sample of detail sentences), a long embedding run on 2 cores before anything is written
(docs/performance.md, "Measuring", ``--fill-vectors``). The load
benchmark measures latency, which depends on the size and the shape of the vector space (clusters
of near neighbours around real sentence embeddings), not on each vector being the exact
embedding of its text. So a derived fill:

* embeds each distinct *sentence* once (the claims and the ten detail sentences; ~35k at 1M),
  cached by its text (the per-record serial suffix is never part of the key);
* takes as a record's base vector its sentences' embeddings averaged with their word counts as
  weights (mean pooling, sentence by sentence) and renormalised. For a claim without detail
  sentences (45 % of records) that is exactly the embedding of its text; with details it is an
  approximation, close to the exact embedding (docs/performance.md, "Measuring", ``--fill-vectors``);
* adds per-record Gaussian noise (``SIGMA`` per dimension, seeded by seed, scope and serial
  number, so a rerun or a resumed fill derives the same vector) and renormalises, so every memory
  has its own vector: the expected cosine to the base is 1/sqrt(1 + d·σ²) ≈ 0.975 for d = 384.

Query vectors are never derived: the load phase's server embeds its queries for real.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np

from slowave_graph.embedding.embedder import Embedder, aembed_bulk
from slowave_graph.workload.synthetic import SyntheticMemory

SIGMA = 0.0115  # per dimension; for 384-d unit vectors the cosine to the base is ≈ 0.975


def expected_cosine(dimension: int, sigma: float = SIGMA) -> float:
    """E[cos(base, normalise(base + noise))] to first order for a unit base vector."""
    return float(1.0 / np.sqrt(1.0 + dimension * sigma * sigma))


def noisy(base: np.ndarray, seed: int, scope: str, index: int, sigma: float = SIGMA) -> list[float]:
    """``base`` plus seeded Gaussian noise, renormalised: deterministic per (seed, scope, index)."""
    rng = np.random.default_rng([seed, zlib.crc32(scope.encode()), index])
    vector = base + rng.standard_normal(base.shape[0]) * sigma
    out: list[float] = (vector / np.linalg.norm(vector)).tolist()
    return out


def pooled(vectors: list[np.ndarray], weights: list[int]) -> np.ndarray:
    """Weighted mean of unit sentence vectors, renormalised."""
    total = np.sum([w * v for w, v in zip(weights, vectors, strict=True)], axis=0)
    unit: np.ndarray = total / np.linalg.norm(total)
    return unit


class DerivedVectors:
    """Sentence embeddings cached by text, and the derived vector of each synthetic memory."""

    def __init__(self, embedder: Embedder, seed: int, sigma: float = SIGMA) -> None:
        self.embedder = embedder
        self.seed = seed
        self.sigma = sigma
        self.cache: dict[str, np.ndarray] = {}
        self.embedded = 0  # sentences embedded so far

    async def learn(self, sentences: Iterable[str]) -> None:
        """Embed the sentences not seen yet (one batch)."""
        missing = sorted({s for s in sentences if s not in self.cache})
        if missing:
            for sentence, vector in zip(missing, await aembed_bulk(self.embedder, missing), strict=True):
                self.cache[sentence] = np.asarray(vector, dtype=np.float64)
            self.embedded += len(missing)

    def base(self, memory: SyntheticMemory) -> np.ndarray:
        if len(memory.sentences) == 1:
            return self.cache[memory.sentences[0]]
        return pooled([self.cache[s] for s in memory.sentences], [len(s.split()) for s in memory.sentences])

    async def vectors(self, memories: list[SyntheticMemory]) -> list[list[float]]:
        await self.learn(s for m in memories for s in m.sentences)
        return [noisy(self.base(m), self.seed, m.scope, m.index, self.sigma) for m in memories]
