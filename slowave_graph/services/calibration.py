"""Where "unrelated" lies on an embedding model's cosine scale, so retrieval's floors and weights
mean the same with every model.

Models spread cosines very differently: over pairs of unrelated texts all-MiniLM-L6-v2 gives a
mean of ~0.07 with a standard deviation of ~0.09, e5-small-v2 ~0.69 with ~0.03. A floor of 0.45
admits little with the first and everything with the second. So a question's cosine to a memory is
read in *calibrated units*: how many standard deviations it lies above the question's own cosines
to a fixed set of unrelated reference statements (calibration.txt),

    z = (cosine - mean_q) / sd_q

computed per question (a question that sits close to everything, as short generic ones do, is
measured against its own baseline). The reference vectors are embedded once per model. Questions
compared with questions (past retrievals, services/ranking.py experience) use one scale per model:
the reference questions' cosines to one another; memories compared with memories (near-duplicates
and updates, services/consolidation.py) the reference statements' cosines to one another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from slowave_graph.embedding.embedder import Embedder, aembed_query

_MIN_SD = 1e-4


def reference_texts() -> tuple[list[str], list[str]]:
    """The reference questions and statements of calibration.txt."""
    text = (resources.files("slowave_graph.services") / "calibration.txt").read_text()
    sections: dict[str, list[str]] = {"questions": [], "statements": []}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections[line[1:-1]]
            continue
        if current is not None:
            current.append(line)
    return sections["questions"], sections["statements"]


def _unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.asarray(array / np.maximum(norms, 1e-12), dtype=np.float32)


@dataclass(frozen=True)
class CosineScale:
    """One model's reference: its statement vectors and its question-to-question scale."""

    model: str
    statements: np.ndarray  # unit vectors, one row per reference statement
    question_mean: float
    question_sd: float
    statement_mean: float = 0.0
    statement_sd: float = 1.0

    def baselines(self, cues: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
        """Per cue: (mean, sd) of its cosines to the reference statements."""
        if not cues:
            return []
        cosines = _unit(cues) @ self.statements.T
        return [(float(row.mean()), max(float(row.std()), _MIN_SD)) for row in cosines]

    def question_cosine(self, z: float) -> float:
        """The question-to-question cosine that lies ``z`` units above unrelated questions."""
        return self.question_mean + z * self.question_sd

    def statement_z(self, cosine: float) -> float:
        """How many units a statement-to-statement cosine lies above unrelated statements."""
        return (cosine - self.statement_mean) / self.statement_sd


def build_scale(
    model: str, questions: Sequence[Sequence[float]], statements: Sequence[Sequence[float]]
) -> CosineScale:
    q, s = _unit(questions), _unit(statements)
    pairs = (q @ q.T)[np.triu_indices(len(q), 1)]
    statement_pairs = (s @ s.T)[np.triu_indices(len(s), 1)]
    return CosineScale(
        model,
        s,
        float(pairs.mean()),
        max(float(pairs.std()), _MIN_SD),
        float(statement_pairs.mean()),
        max(float(statement_pairs.std()), _MIN_SD),
    )


_scales: dict[str, CosineScale] = {}
_locks: dict[str, asyncio.Lock] = {}


async def scale_for(embedder: Embedder) -> CosineScale:
    """The model's scale, embedded on first use (~100 short texts) and kept for the process."""
    name = embedder.model_name
    found = _scales.get(name)
    if found is not None:
        return found
    lock = _locks.setdefault(name, asyncio.Lock())
    async with lock:
        found = _scales.get(name)
        if found is None:
            questions, statements = reference_texts()
            found = build_scale(
                name, await aembed_query(embedder, questions), await embedder.aembed(statements)
            )
            _scales[name] = found
    return found
