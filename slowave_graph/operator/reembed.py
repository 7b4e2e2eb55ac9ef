"""`slowave-graph reembed`: recompute every stored vector with another model.

Memories (the vector index), procedures and the query vectors of retrievals (experience
lookups) are re-embedded in id order, a page at a time, from the same texts the services embed.
With a new dimension the vector index is dropped first and rebuilt at the new dimension after
the last vector is written; the model and dimension recorded in the database change last, so
servers refuse to start with either model until the run has finished. A run that stops half-way
is finished by running it again. Stop the MCP servers while it runs: a query embedded with one
model meets vectors of the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from slowave_graph.embedding.embedder import Embedder, aembed_bulk
from slowave_graph.graph.database import Database
from slowave_graph.graph.schema import ensure_schema
from slowave_graph.operator.progress import Progress
from slowave_graph.operator.texts import memory_text, procedure_text, retrieval_text
from slowave_graph.services.context import utcnow

# (what, page statement, update statement, the text of a page row)
_KINDS: tuple[tuple[str, str, str, Callable[[dict[str, Any]], str]], ...] = (
    ("memories", "reembed_memory_page", "reembed_set_memories", lambda r: memory_text(r["text"] or "")),
    (
        "procedures",
        "reembed_procedure_page",
        "reembed_set_procedures",
        lambda r: procedure_text(r["goal"], r["summary"], r["context_text"]),
    ),
    (
        "retrievals",
        "reembed_retrieval_page",
        "reembed_set_retrievals",
        lambda r: retrieval_text(r["text"] or ""),
    ),
)


async def reembed(
    db: Database, embedder: Embedder, *, batch_size: int = 256, progress: Progress | None = None
) -> dict[str, Any]:
    """Re-embed everything with ``embedder``; returns counts, models and dimensions, timing."""
    started = time.perf_counter()
    space = await db.run_read("embedding_space_get")
    before = (space[0]["model"], int(space[0]["dimension"])) if space else (None, None)
    after = (embedder.model_name, embedder.dimension)
    rebuild = before[1] != after[1]
    await db.run_write("reembed_begin", model=after[0], now=utcnow())
    if rebuild:
        await db.run_schema("drop_vector_index")
        await db.run_schema("drop_retrieval_vector_index")
        await db.run_schema("drop_procedure_vector_index")
    counts: dict[str, int] = {}
    for what, page, update, text_of in _KINDS:
        counts[what] = 0
        last = ""
        while True:
            found = await db.run_read(page, after=last, limit=batch_size)
            if not found:
                break
            vectors = await aembed_bulk(embedder, [text_of(r) for r in found])
            rows = [{"id": r["id"], "embedding": v} for r, v in zip(found, vectors, strict=True)]
            await db.run_write(update, rows=rows)
            counts[what] += len(found)
            last = str(found[-1]["id"])
            if progress is not None:
                progress.update(len(found))
    await db.run_write("embedding_space_set", model=after[0], dimension=after[1], now=utcnow())
    # creates the vector index again if it was dropped, and waits until every index is online
    await ensure_schema(db, after[0], after[1])
    return {
        **counts,
        "model_before": before[0],
        "dimension_before": before[1],
        "model": after[0],
        "dimension": after[1],
        "vector_index_rebuilt": rebuild,
        "seconds": round(time.perf_counter() - started, 3),
    }
