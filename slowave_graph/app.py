"""Assembly: settings → (managed) Neo4j → driver → schema → embedder → repository → services."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from neo4j.exceptions import AuthError, Neo4jError

from slowave_graph.config import Settings
from slowave_graph.embedding.embedder import DEFAULT_MODEL, Embedder, load_embedder
from slowave_graph.embedding.endpoint import EndpointConfig
from slowave_graph.graph.database import Database
from slowave_graph.graph.errors import DatabaseUnavailable, EmbeddingMismatch
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.graph.schema import ensure_schema
from slowave_graph.neo4j_local.lease import ManagedLease
from slowave_graph.services import Services, concept_upkeep
from slowave_graph.services.context import utcnow
from slowave_graph.services.experience_index import ExperienceIndexer
from slowave_graph.services.ranking import policy_for
from slowave_graph.telemetry import ToolMetrics

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    db: Database
    embedder: Embedder
    repo: GraphRepository
    services: Services
    experience: ExperienceIndexer
    metrics: ToolMetrics = field(default_factory=ToolMetrics)


async def _wait_connectivity(db: Database, timeout: float = 180.0) -> None:
    """Wait for Neo4j to accept us. A server started beside its database waits through the
    database's start-up (over a minute on a busy 2-core machine); while the managed launcher has
    not yet set the password, attempts fail authentication and Neo4j locks the user for a few
    seconds after three of them, so authentication failures back off longer."""
    deadline = asyncio.get_running_loop().time() + timeout
    refused_before = False
    while True:
        try:
            await db.driver.verify_connectivity()
            return
        except Exception as exc:
            refused = _auth_failure(exc)
            if refused and not refused_before:  # a wrong password should not look like a hang
                log.warning(
                    "Neo4j refused the credentials; retrying for up to %.0f s, in case it is still "
                    "starting (a new managed Neo4j refuses them until its password is set)",
                    timeout,
                )
            refused_before = refused_before or refused
            if asyncio.get_running_loop().time() > deadline:
                if refused:
                    raise DatabaseUnavailable(
                        f"Neo4j refused the credentials (NEO4J_USER / NEO4J_PASSWORD): {exc}"
                    ) from exc
                raise DatabaseUnavailable(f"cannot connect to Neo4j: {exc}") from exc
            await asyncio.sleep(3.0 if refused else 0.5)


def _auth_failure(exc: Exception) -> bool:
    return isinstance(exc, AuthError) or (
        isinstance(exc, Neo4jError) and exc.code == "Neo.ClientError.Security.AuthenticationRateLimit"
    )


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[Database]:
    """A connected Database; with no NEO4J_URI the managed local Neo4j is started (or joined). One a
    server process started stops ``neo4j_linger`` seconds after the last process using it exits."""
    lease: ManagedLease | None = None
    if settings.managed:
        lease = ManagedLease(settings)
        uri, user, password = await asyncio.to_thread(lease.acquire)
    else:
        assert settings.neo4j_uri is not None
        uri, user = settings.neo4j_uri, settings.neo4j_user
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
    db = Database.connect(
        uri, user, password, settings.neo4j_database, statement_threads=settings.neo4j_concurrency
    )
    try:
        await _wait_connectivity(db)
        yield db
    finally:
        await db.close()
        if lease is not None:
            await asyncio.to_thread(lease.release)


async def database_embedder(
    db: Database,
    configured: str | None,
    loaded: Embedder | None = None,
    endpoint: EndpointConfig | None = None,
) -> Embedder:
    """The embedding model for this database: the configured one (``ensure_schema`` refuses a
    mismatch); unset, the model its memories were embedded with, or the default on a new database.
    ``loaded``: a model already loaded, used when it is the one; ``endpoint``: where an
    ``openai:<model>`` is asked."""
    name = configured
    if name is None:
        stored = await db.run_read("embedding_space_get")
        name = str(stored[0]["model"]) if stored else DEFAULT_MODEL
    if loaded is not None and loaded.model_name == name:
        return loaded
    if configured is None:
        log.info("the database's memories were embedded with %s: loading it", name)
    try:
        return await asyncio.to_thread(load_embedder, name, endpoint)
    except ValueError as exc:  # a stored local model directory, say, that is not on this machine
        if configured is not None:
            raise
        raise EmbeddingMismatch(
            f"the database's memories were embedded with {name}, which does not load here ({exc}); "
            "set SLOWAVE_EMBEDDING_MODEL to where it is, or re-embed with `slowave-graph reembed`"
        ) from exc


@asynccontextmanager
async def open_app(
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    background: Sequence[Callable[[App], Coroutine[Any, Any, None]]] = (),
) -> AsyncIterator[App]:
    """Everything the tools need, ready to serve. ``background``: tasks a server runs beside the
    tools for as long as the app is open, each started with the app and cancelled with the app's
    own upkeep (the serve command's maintenance pass; not a one-off command's or a benchmark's,
    whose timings a pass would disturb)."""
    # the model loads while Neo4j starts: the configured one, or the default a database most
    # likely holds (another is loaded once the database says so)
    loading = (
        asyncio.create_task(
            asyncio.to_thread(
                load_embedder, settings.embedding_model or DEFAULT_MODEL, settings.embedding_endpoint
            )
        )
        if embedder is None
        else None
    )
    try:
        async with open_database(settings) as db:
            if embedder is not None:
                model = embedder
            else:
                assert loading is not None
                model = await database_embedder(
                    db, settings.embedding_model, await loading, settings.embedding_endpoint
                )
            await ensure_schema(db, model.model_name, model.dimension)
            repo = GraphRepository(db, idle_timeout=settings.session_idle_timeout)
            indexer = ExperienceIndexer(repo)
            upkeep = [
                asyncio.create_task(reap_idle_sessions(repo, settings.session_idle_timeout)),
                asyncio.create_task(indexer.run()),
                # a store written before the concept layer (or by an older extractor) gets it
                asyncio.create_task(concept_upkeep.keep_up(db)),
            ]
            try:
                services = Services.build(
                    repo,
                    model,
                    policy_for(
                        settings.candidate_k, settings.retrieval_graph, settings.co_use_half_life_days
                    ),
                    consolidate=settings.consolidation,
                    generalise=settings.generalisation,
                )
                app = App(settings, db, model, repo, services, indexer)
                upkeep += [asyncio.create_task(task(app)) for task in background]
                yield app
                # the lessons feedback asked to judge (services/generalisation.py), within a bound
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(services.generaliser.idle(), timeout=10)
            finally:
                for task in upkeep:
                    task.cancel()
                for task in upkeep:
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
    finally:
        if loading is not None and not loading.done():
            loading.cancel()


async def reap_idle_sessions(repo: GraphRepository, idle_timeout: float) -> None:
    """Close sessions nobody has called for idle_timeout seconds (outcome unknown).

    Safe with several server processes: the query re-checks each session under its write lock.
    Sessions are also closed lazily when a late call names them, so the period only bounds how
    long an abandoned session looks open to analysts.
    """
    closer = f"{socket.gethostname()}:{os.getpid()}"
    period = max(0.5, min(60.0, idle_timeout / 3))
    while True:
        try:
            closed = await repo.close_idle_sessions(now=utcnow(), closer=closer)
            if closed:
                log.info("closed %d idle session(s): %s", len(closed), ", ".join(closed[:10]))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database may be restarting; try again next period
            log.warning("idle-session reaper: %s", exc)
        await asyncio.sleep(period)
