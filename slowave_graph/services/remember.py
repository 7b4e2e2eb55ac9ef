"""slowave_remember: store durable claims as Memory nodes derived from Events."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from slowave_graph.contract.common import ErrorCode, parse_rfc3339
from slowave_graph.contract.remember import (
    RememberBatchResult,
    RememberItemResult,
    RememberRequest,
    RememberResult,
    SimilarMemory,
)
from slowave_graph.embedding.embedder import Embedder
from slowave_graph.errors import ServiceError
from slowave_graph.graph.errors import DatabaseUnavailable, StoreRefusal
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.graph.rows import MemoryClaim, RememberItem, SimilarLink, StoredMemory
from slowave_graph.services import consolidation, text
from slowave_graph.services.calibration import scale_for
from slowave_graph.services.concepts import EXTRACTOR_VERSION, concept_links
from slowave_graph.services.context import ClientInfo, new_id, utcnow

log = logging.getLogger(__name__)


def memory_row(
    scope: str,
    content: str,
    type_: str,
    occurred_at: str | None,
    embedding: list[float],
    links: list[consolidation.Link] | None = None,
    *,
    judged: bool = False,
) -> MemoryClaim:
    """A claim as the write statements store it (remember_call, bulk_remember_memories): its
    duplicate key, hash, time, vector and the near-duplicates and updates found for it (its
    concepts go apart: ``concept_links``). ``judged``: its links were looked for (consolidation
    on), so the new memory is marked judged and the maintenance pass leaves it alone."""
    return {
        "content": content,
        "type": type_,
        "occurred_at": parse_rfc3339(occurred_at) if occurred_at else None,
        "active_key": text.active_key(scope, content),
        "content_hash": text.content_hash(content),
        "embedding": embedding,
        "links": [similar_link(link) for link in links or []],
        "similar_version": consolidation.SIMILAR_VERSION if judged else None,
    }


def similar_link(link: consolidation.Link) -> SimilarLink:
    earlier = link.target.startswith("#")
    return {
        "target_id": None if earlier else link.target,
        "target_position": int(link.target[1:]) if earlier else None,
        "kind": link.kind,
        "score": link.score,
    }


async def judge(
    repo: GraphRepository, embedder: Embedder, scope: str, contents: list[str], vectors: list[list[float]]
) -> list[list[consolidation.Link]]:
    """The near-duplicates and updates of each claim of one call among the scope's memories
    nearest to it and the call's earlier claims (services/consolidation.py)."""
    found, scale = await asyncio.gather(
        repo.nearest_memories(scope=scope, embeddings=vectors, k=consolidation.NEIGHBOURS),
        scale_for(embedder),
    )
    stored = [[consolidation.Neighbour(h["id"], h["content"], h["cosine"]) for h in hits] for hits in found]
    return consolidation.judge_claims(contents, vectors, stored, scale.statement_z)


@dataclass
class RememberService:
    repo: GraphRepository
    embedder: Embedder
    clock: Callable[[], datetime] = utcnow
    consolidate: bool = True  # find near-duplicates and updates (SLOWAVE_CONSOLIDATION)

    async def remember(
        self, req: RememberRequest, client: ClientInfo
    ) -> RememberResult | RememberBatchResult:
        items = req.items()
        contents = [item.content for item in items]
        vectors = await self.embedder.aembed(contents)
        links: list[list[consolidation.Link]] = [[] for _ in items]
        if self.consolidate:
            links = await judge(self.repo, self.embedder, req.scope, contents, vectors)
        judged = self.consolidate
        rows: list[RememberItem] = [
            {
                "index": index,
                **memory_row(
                    req.scope, item.content, item.type, item.occurred_at, vector, found, judged=judged
                ),
            }
            for index, (item, vector, found) in enumerate(zip(items, vectors, links, strict=True))
        ]
        written = await self._write_memories(req, rows, client)
        similar = self._similar(links, written)
        for result, found in zip(written, similar, strict=True):
            if isinstance(result, RememberResult) and result.disposition == "created" and found:
                result.similar = found
        if req.memories is None:
            result = written[0]
            assert isinstance(result, RememberResult)
            return result
        return RememberBatchResult(
            results=[
                RememberItemResult(index=i, ok=True, data=r)
                if isinstance(r, RememberResult)
                else RememberItemResult(index=i, ok=False, error=r.body())
                for i, r in enumerate(written)
            ]
        )

    async def _write_memories(
        self, req: RememberRequest, rows: list[RememberItem], client: ClientInfo
    ) -> list[RememberResult | ServiceError]:
        try:
            return [self._remembered(req, r) for r in await self._store(req, rows, client)]
        except (ServiceError, StoreRefusal, DatabaseUnavailable):
            raise
        except Exception as exc:
            if len(rows) == 1:
                raise
            # A batch is not all-or-nothing: store item by item so one bad item fails alone.
            log.warning("batch remember failed as a whole (%s); storing items one by one", exc)
        results: list[RememberResult | ServiceError] = []
        for row in rows:
            try:
                stored = await self._store(req, [row], client)
                results.append(self._remembered(req, stored[0]))
            except (ServiceError, StoreRefusal, DatabaseUnavailable):
                raise
            except Exception as exc:
                log.exception("remember item %s failed", row["index"])
                results.append(ServiceError(ErrorCode.storage_error, f"storing this memory failed: {exc}"))
        return results

    async def _store(
        self, req: RememberRequest, rows: list[RememberItem], client: ClientInfo
    ) -> list[StoredMemory]:
        return await self.repo.remember(
            call_id=new_id("rmc"),
            session_id=req.session_id,
            scope=req.scope,
            scope_token=text.scope_token(req.scope),
            items=rows,
            client_name=client.name,
            client_version=client.version,
            principal=client.principal,
            concept_links=concept_links([(req.scope, row["content"]) for row in rows]),
            concepts_version=EXTRACTOR_VERSION,
            now=self.clock(),
        )

    @staticmethod
    def _similar(
        links: list[list[consolidation.Link]], written: list[RememberResult | ServiceError]
    ) -> list[list[SimilarMemory]]:
        """What the agent is told of each claim's links: the memory (an earlier claim of the call
        by the id it was stored under), the kind and a short excerpt."""
        out = []
        for found in links:
            shown = []
            for link in found:
                memory_id = link.target
                if link.target.startswith("#"):
                    earlier = written[int(link.target[1:])]
                    if not isinstance(earlier, RememberResult):
                        continue
                    memory_id = earlier.memory_id
                shown.append(
                    SimilarMemory(memory_id=memory_id, kind=link.kind, excerpt=_excerpt(link.content))
                )
            out.append(shown)
        return out

    @staticmethod
    def _remembered(req: RememberRequest, row: StoredMemory) -> RememberResult:
        return RememberResult(
            stored=True,
            memory_id=row["memory_id"],
            disposition="created" if row["created"] else "matched",
            type=row["type"],
            scope=req.scope,
            source_event_id=row["event_id"],
        )


EXCERPT_CHARS = 160


def _excerpt(content: str) -> str:
    return content if len(content) <= EXCERPT_CHARS else content[: EXCERPT_CHARS - 1].rstrip() + "…"
