"""The concept layer for memories stored without it, or by an older extractor.

New memories get their concepts in the transaction that stores them (link_concepts in
memory.cypher). A store written before the layer existed — or when EXTRACTOR_VERSION moves on — is
brought up to date here, in id order, a page per transaction (concepts_relink), then the counts
retrieval weighs concepts by are recomputed for every scope the run touched (concepts_recount).

Idempotent and restartable: a memory is done once it carries the current version, so a run that
stops half-way is finished by running it again, and a second run finds nothing to do. Servers keep
serving meanwhile (each server also runs it in the background at start-up, see ``keep_up``; the
operator's `slowave-graph concepts backfill` runs it with a progress bar); until a memory has its
concepts the walk simply does not reach it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from slowave_graph.graph.database import Database
from slowave_graph.services.concepts import EXTRACTOR_VERSION, concept_links
from slowave_graph.services.context import utcnow

log = logging.getLogger(__name__)

PAGE = 500


@dataclass
class BackfillResult:
    memories: int = 0
    mentions: int = 0
    scopes: set[str] = field(default_factory=set)
    seconds: float = 0.0

    def summary(self) -> dict[str, object]:
        return {
            "memories": self.memories,
            "mentions": self.mentions,
            "scopes": len(self.scopes),
            "seconds": round(self.seconds, 2),
            "extractor_version": EXTRACTOR_VERSION,
        }


async def pending(db: Database) -> int:
    """Memories whose concepts are missing or from an older extractor."""
    found = await db.run_read("concepts_pending_count", concepts_version=EXTRACTOR_VERSION)
    return int(found[0]["pending"])


async def up_to_date(db: Database) -> bool:
    """Whether the last complete backfill reached the current extractor (one cheap read)."""
    found = await db.run_read("concepts_state", concepts_version=EXTRACTOR_VERSION)
    return bool(found) and found[0]["version"] == EXTRACTOR_VERSION and not found[0]["pending"]


async def backfill(
    db: Database, *, page: int = PAGE, progress: Callable[[int], object] | None = None
) -> BackfillResult:
    """Extract and link the concepts of every memory that lacks the current ones; ``progress`` is
    told how many memories each page brought up to date."""
    started = time.perf_counter()
    result = BackfillResult()
    last = ""
    while True:
        found = await db.run_read(
            "concepts_pending_page", after=last, limit=page, concepts_version=EXTRACTOR_VERSION
        )
        if not found:
            break
        links = concept_links([(str(r["scope"]), str(r["content"] or "")) for r in found])
        written = await db.run_write(
            "concepts_relink", ids=[r["id"] for r in found], concept_links=links,
            concepts_version=EXTRACTOR_VERSION, now=utcnow(),
        )  # fmt: skip
        result.memories += len(found)
        result.mentions += int(written[0]["mentions"]) if written else 0
        result.scopes.update(str(r["scope"]) for r in found if r["scope"] is not None)
        last = str(found[-1]["id"])
        if progress is not None:
            progress(len(found))
    for scope in sorted(result.scopes):
        await db.run_write("concepts_recount", scope=scope)
    await db.run_write("concepts_mark_complete", concepts_version=EXTRACTOR_VERSION)
    result.seconds = time.perf_counter() - started
    return result


async def keep_up(db: Database, retry_seconds: float = 60.0) -> None:
    """A server's start-up task: backfill once if the store is behind, then end. Failures (the
    database restarting) are retried; a store already up to date costs one read."""
    while True:
        try:
            if await up_to_date(db):
                return
            result = await backfill(db)
            if result.memories:
                log.info("concept layer: %s", result.summary())
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("concept backfill: %s (retrying in %.0f s)", exc, retry_seconds)
            await asyncio.sleep(retry_seconds)
