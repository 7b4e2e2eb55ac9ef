"""Graph repository: the only code that talks to Neo4j on behalf of the services.

Each public method is one logical unit of work — one transaction — built from the named Cypher
statements in ``cypher/``. Methods take and return plain Python values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from neo4j import AsyncManagedTransaction

from slowave_graph.errors import invalid
from slowave_graph.graph.database import Database, rows

# On Neo4j 5.26 a scope this small is searched exactly by scanning it; larger ones over-fetch.
EXACT_SCAN_MAX = 5_000
# Upper bound on over-fetching from the global vector index (5.26 path).
OVERFETCH_MAX = 20_000


@dataclass(frozen=True)
class ScopeState:
    has_memories: bool
    has_procedures: bool
    variants: list[str]


@dataclass(frozen=True)
class SearchRows:
    vector: list[dict[str, Any]]
    fulltext: list[dict[str, Any]]
    truncated: bool  # some search returned as many rows as it was allowed to


VectorStrategy = Literal["auto", "filtered", "overfetch", "scan"]


class GraphRepository:
    def __init__(self, db: Database, idle_timeout: float, vector_strategy: VectorStrategy = "auto") -> None:
        self.db = db
        self.idle_timeout = idle_timeout
        # "auto": in-index filtering where the server has it, else exact scan of small scopes and
        # over-fetch for large ones. The others force one path (tests compare them).
        self.vector_strategy = vector_strategy

    # ------------------------------------------------------------------ sessions
    async def _guard_session(
        self, tx: AsyncManagedTransaction, session_id: str, scope: str, now: datetime
    ) -> None:
        """The session must exist, belong to ``scope`` and be open (idle ones are closed here)."""
        found = await rows(
            tx,
            self.db.q("session_for_call"),
            session_id=session_id,
            now=now,
            idle_before=now - timedelta(seconds=self.idle_timeout),
        )
        if not found:
            raise invalid(f"unknown session_id {session_id!r}; call slowave_activate first", "session_id")
        if found[0]["scope"] != scope:
            raise invalid("session_id and scope do not match", "scope")
        if found[0]["status"] != "open":
            raise invalid("session is already ended; call slowave_activate to start a new one", "session_id")

    # ------------------------------------------------------------------ remember
    async def remember(
        self,
        *,
        session_id: str,
        scope: str,
        scope_token: str,
        items: list[dict[str, Any]],
        client_name: str | None,
        client_version: str | None,
        now: datetime,
    ) -> list[dict[str, Any]]:
        """Store claims of one call in one transaction; rows in item order."""

        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            await self._guard_session(tx, session_id, scope, now)
            out = await rows(
                tx,
                self.db.q("remember_memories"),
                session_id=session_id,
                scope=scope,
                scope_token=scope_token,
                items=items,
                client_name=client_name,
                client_version=client_version,
                now=now,
            )
            if len(out) != len(items):
                raise RuntimeError(f"remember wrote {len(out)} of {len(items)} items")
            return sorted(out, key=lambda r: r["index"])

        return await self.db.write(work)

    # ------------------------------------------------------------------ activation
    async def scope_state(self, scope: str, norm_key: str) -> ScopeState:
        found = await self.db.run_read("scope_state", scope=scope, norm_key=norm_key)
        row = found[0]
        return ScopeState(bool(row["has_memories"]), bool(row["has_procedures"]), list(row["variants"]))

    async def continuity_scope(self, continuity_id: str) -> str | None:
        found = await self.db.run_read("continuity_scope", continuity_id=continuity_id)
        return str(found[0]["scope"]) if found else None

    async def create_activation(self, **params: Any) -> dict[str, Any] | None:
        """Write session, continuity and retrieval; None if the continuity line was not usable."""
        found = await self.db.run_write("create_activation", **params)
        return found[0] if found else None

    # ------------------------------------------------------------------ search
    async def search_direct(
        self, *, scope: str, embeddings: list[list[float]], lucene: str | None, k: int
    ) -> SearchRows:
        """Vector hits per query vector plus BM25 hits, all scope-filtered, in one read transaction."""

        async def work(tx: AsyncManagedTransaction) -> SearchRows:
            vector, vector_truncated = await self._vector_rows(tx, scope, embeddings, k)
            fulltext: list[dict[str, Any]] = []
            if lucene is not None:
                fulltext = await rows(
                    tx, self.db.q("fulltext_search"), scope=scope, lucene=lucene, k=k,
                    embeddings=embeddings,
                )  # fmt: skip
            return SearchRows(vector, fulltext, vector_truncated or len(fulltext) >= k)

        return await self.db.read(work)

    async def _vector_rows(
        self, tx: AsyncManagedTransaction, scope: str, embeddings: list[list[float]], k: int
    ) -> tuple[list[dict[str, Any]], bool]:
        server = self.db.server
        strategy = self.vector_strategy
        params: dict[str, Any] = {"scope": scope, "embeddings": embeddings, "k": k}
        if strategy == "filtered" or (
            strategy == "auto" and server is not None and server.vector_filter_in_index
        ):
            found = await rows(tx, self.db.q("vector_search_filtered"), **params)
            return found, _any_query_full(found, len(embeddings), k)
        sizes = (await rows(tx, self.db.q("scope_memory_count"), scope=scope))[0]
        scope_count, total = int(sizes["scope_count"]), int(sizes["total_count"])
        if strategy == "scan" or (strategy == "auto" and scope_count <= EXACT_SCAN_MAX):
            found = await rows(tx, self.db.q("vector_scan_scope"), **params)
            return found, _any_query_full(found, len(embeddings), k)
        # Over-fetch: expect k hits of this scope among k * total / scope_count neighbours; widen
        # until every query vector has k hits or the whole index has been read.
        fetch = min(total, max(k, math.ceil(2 * k * total / max(scope_count, 1))))
        while True:
            found = await rows(tx, self.db.q("vector_search_overfetch"), fetch=fetch, **params)
            short = _any_query_short(found, len(embeddings), k)
            exhausted = fetch >= total
            if not short or exhausted or fetch >= OVERFETCH_MAX:
                # truncated: a query vector filled its k (more may exist) or we stopped early
                return found, _any_query_full(found, len(embeddings), k) or (short and not exhausted)
            fetch = min(total, OVERFETCH_MAX, fetch * 4)

    async def search_associated(
        self,
        *,
        scope: str,
        seed_ids: list[str],
        now: datetime,
        min_strength: float,
        half_life_days: float,
        k: int,
    ) -> list[dict[str, Any]]:
        if not seed_ids:
            return []
        return await self.db.run_read(
            "associated_search",
            scope=scope,
            seed_ids=seed_ids,
            now=now,
            min_strength=min_strength,
            half_life_days=half_life_days,
            k=k,
        )


def _per_query_counts(found: list[dict[str, Any]], queries: int) -> list[int]:
    counts = [0] * queries
    for row in found:
        counts[int(row["qi"])] += 1
    return counts


def _any_query_full(found: list[dict[str, Any]], queries: int, k: int) -> bool:
    return any(count >= k for count in _per_query_counts(found, queries))


def _any_query_short(found: list[dict[str, Any]], queries: int, k: int) -> bool:
    return any(count < k for count in _per_query_counts(found, queries))
