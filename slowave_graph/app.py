"""Assembly: settings → (managed) Neo4j → driver → schema → embedder → repository → services."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from slowave_graph.config import Settings
from slowave_graph.embedder import Embedder, SentenceTransformerEmbedder
from slowave_graph.graph.database import Database, DatabaseUnavailable
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.graph.schema import ensure_schema
from slowave_graph.neo4j_local.lease import ManagedLease
from slowave_graph.services.memory import MemoryService

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    db: Database
    embedder: Embedder
    repo: GraphRepository
    memory: MemoryService


async def _wait_connectivity(db: Database, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            await db.driver.verify_connectivity()
            return
        except Exception as exc:
            if asyncio.get_running_loop().time() > deadline:
                raise DatabaseUnavailable(f"cannot connect to Neo4j: {exc}") from exc
            await asyncio.sleep(0.5)


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[Database]:
    """A connected Database; with no NEO4J_URI the managed local Neo4j is started (and stopped on
    exit when this process started it and no other slowave-graph process still uses it)."""
    lease: ManagedLease | None = None
    if settings.managed:
        lease = ManagedLease(settings)
        uri, user, password = await asyncio.to_thread(lease.acquire)
    else:
        assert settings.neo4j_uri is not None
        uri, user = settings.neo4j_uri, settings.neo4j_user
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
    db = Database.connect(uri, user, password, settings.neo4j_database)
    try:
        await _wait_connectivity(db)
        yield db
    finally:
        await db.close()
        if lease is not None:
            await asyncio.to_thread(lease.release)


@asynccontextmanager
async def open_app(settings: Settings, embedder: Embedder | None = None) -> AsyncIterator[App]:
    """Everything the tools need, ready to serve."""
    loading = (
        asyncio.create_task(asyncio.to_thread(SentenceTransformerEmbedder, settings.embedding_model))
        if embedder is None
        else None
    )
    try:
        async with open_database(settings) as db:
            model = embedder if embedder is not None else await loading  # type: ignore[misc]
            assert model is not None
            await ensure_schema(db, model.model_name, model.dimension)
            repo = GraphRepository(db, idle_timeout=settings.session_idle_timeout)
            yield App(settings, db, model, repo, MemoryService(repo, model))
    finally:
        if loading is not None and not loading.done():
            loading.cancel()
