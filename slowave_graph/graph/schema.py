"""Start-up schema work: constraints and indexes from ``cypher/schema.cypher``, created idempotently
and awaited until online; the embedding model recorded in the database and checked."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from neo4j.exceptions import ClientError

from slowave_graph.graph.cypher import CypherCatalog
from slowave_graph.graph.database import Database, ServerInfo
from slowave_graph.graph.errors import EmbeddingMismatch

log = logging.getLogger(__name__)

# The filtered vector indexes keep full-precision vectors. Neo4j 2026.09's default is BINARY
# quantization (expansion factor 3, rescored); on the 100k benchmark, interleaved, full precision
# was both faster and closer to the exact top-50 for a filtered search (docs/performance.md,
# "Design choices, with their measured effect"). A server that does not know the setting gets the
# index without it.
VECTOR_QUANTIZATION = "NONE"
_QUANTIZATION_KEY = "vector.quantization.type"

# Created in this order; the vector index statement is chosen by server version.
_SCHEMA_PREFIXES = ("constraint_", "index_", "fulltext_")
_ALREADY_EXISTS = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
)


async def server_info(db: Database) -> ServerInfo:
    rows = await db.run_read("server_components")
    version, edition = str(rows[0]["version"]), str(rows[0]["edition"])
    index = await db.run_read("vector_index_info")
    props = index[0]["properties"] if index else []
    preliminary = ServerInfo(version, edition, vector_filter_in_index=False)
    filtered = preliminary.supports_search_clause and "scope" in props and "status" in props
    return ServerInfo(version, edition, vector_filter_in_index=filtered)


def schema_statements(queries: CypherCatalog, info: ServerInfo) -> list[str]:
    """The schema statements this server gets, in creation order: the vector indexes with in-index
    filters where the server has Cypher 25 SEARCH, else the plain memory index and the index of
    the exact experience scan (5.26 compares retrievals and procedures exactly, by scope)."""
    names = [n for n in queries.names("schema") if n.startswith(_SCHEMA_PREFIXES)]
    if info.supports_search_clause:
        return [
            *names,
            "vector_index_filtered",
            "retrieval_vector_index_filtered",
            "procedure_vector_index_filtered",
        ]
    return [*names, "vector_index_plain", "lts_index_retrieval_learned_recent"]


_CREATES = re.compile(r"CREATE (?:CONSTRAINT|(?:VECTOR |FULLTEXT )?INDEX) (\w+) IF NOT EXISTS")


def expected_indexes(queries: CypherCatalog, info: ServerInfo) -> list[str]:
    """Names of the constraints and indexes start-up creates on this server (doctor checks them)."""
    names = {m.group(1) for n in schema_statements(queries, info) if (m := _CREATES.search(queries[n]))}
    return sorted(names)


async def check_embedding_space(db: Database, model: str, dimension: int) -> None:
    """Record the model on first start; refuse to start on a mismatch."""
    rows = await db.run_read("embedding_space_get")
    if not rows:
        rows = await db.run_write("embedding_space_init", model=model, dimension=dimension)
    stored_model, stored_dimension = rows[0]["model"], rows[0]["dimension"]
    if stored_model != model or stored_dimension != dimension:
        raise EmbeddingMismatch(
            f"the database's memories were embedded with {stored_model} ({stored_dimension}-d) but "
            f"this server is configured for {model} ({dimension}-d). Either set "
            f"SLOWAVE_EMBEDDING_MODEL={stored_model}, or re-embed the stored memories with "
            f"`slowave-graph reembed --model {model}`."
        )


async def ensure_schema(db: Database, model: str, dimension: int, timeout_seconds: int = 300) -> ServerInfo:
    """Idempotent: safe on every start and when several servers start at once."""
    # The uniqueness constraint first: servers starting together on an empty database would
    # otherwise each MERGE their own EmbeddingSpace node, and the constraint could never be created.
    await _create(db, "constraint_embedding_space_name", dimension)
    await check_embedding_space(db, model, dimension)
    info = await server_info(db)
    names = schema_statements(db.queries, info)
    rebuilt = await _drop_outdated(db, _FULLTEXT_ANALYZER)
    if info.supports_search_clause:
        rebuilt += await _drop_outdated(db, _VECTOR_QUANTIZATION)
    for name in names:
        await _create(db, name, dimension)
    if info.supports_search_clause:
        await _retire_retrieval_query_index(db)
    # a rebuilt index is repopulated from every stored text or vector, which takes time that grows
    # with the store (docs/performance.md, "Floors and limits"); allow a large store the time it needs
    await db.run_schema(
        "await_indexes", timeout_seconds=max(timeout_seconds, 3600) if rebuilt else timeout_seconds
    )
    await _check_vector_index_dimension(db, dimension)
    info = await server_info(db)
    db.server = info
    log.info(
        "Neo4j %s %s; vector filtering %s",
        info.version,
        info.edition,
        "inside the index (SEARCH)" if info.vector_filter_in_index else "by over-fetch / exact scan",
    )
    return info


FULLTEXT_ANALYZER = "english"


@dataclass(frozen=True)
class _IndexSetting:
    """A setting of some indexes that start-up enforces by dropping and recreating them."""

    info: str  # statement returning (name, setting) per index
    column: str
    wanted: str
    drops: dict[str, str]  # index name -> drop statement
    repopulated_from: str


_FULLTEXT_ANALYZER = _IndexSetting(
    "fulltext_index_info",
    "analyzer",
    FULLTEXT_ANALYZER,
    {"memory_text": "drop_memory_fulltext_index", "procedure_text": "drop_procedure_fulltext_index"},
    "stored text (seconds per 100k memories)",
)
_VECTOR_QUANTIZATION = _IndexSetting(
    "vector_index_quantization",
    "quantization",
    VECTOR_QUANTIZATION,
    {
        "memory_embedding": "drop_vector_index",
        "retrieval_experience_embedding": "drop_retrieval_vector_index",
        "procedure_embedding": "drop_procedure_vector_index",
    },
    "stored vectors (~17 s per 100k on 2 cores)",
)


async def _drop_outdated(db: Database, setting: _IndexSetting) -> list[str]:
    """Indexes built with another value of the setting are dropped, to be created again (and
    repopulated) by the schema statements that follow; returns their names. An index that reports
    no value (a server without the setting) is kept."""
    dropped = []
    for row in await db.run_read(setting.info):
        found, name = row[setting.column], str(row["name"])
        if found is not None and found != setting.wanted:
            log.warning(
                "rebuilding index %s with %s %s (was %s); start-up waits until it is repopulated from the %s",
                name,
                setting.column,
                setting.wanted,
                found,
                setting.repopulated_from,
            )
            await db.run_schema(setting.drops[name])
            dropped.append(name)
    return dropped


def vector_config(dimension: int, quantization: str | None = VECTOR_QUANTIZATION) -> dict[str, object]:
    """indexConfig of the filtered vector indexes."""
    config: dict[str, object] = {"vector.dimensions": dimension, "vector.similarity_function": "cosine"}
    if quantization is not None:
        config[_QUANTIZATION_KEY] = quantization
    return config


async def _retire_retrieval_query_index(db: Database) -> None:
    """Earlier versions indexed every retrieval's query vector; the experience index now holds
    only learned retrievals (experience_embedding). Copy first, then drop: a start-up interrupted
    in between repeats the (idempotent) copy."""
    if not await db.run_read("retrieval_query_index_exists"):
        return
    log.warning("moving the experience lookup to the index of learned retrievals (one-time)")
    await db.run_schema("backfill_experience_embedding")
    await db.run_schema("drop_retrieval_query_index")


async def _create(db: Database, name: str, dimension: int) -> None:
    """Run one schema statement; a vector index the server cannot build without quantization
    (it does not know the setting) is built with the server's default."""
    for config in (vector_config(dimension), vector_config(dimension, None)):
        try:
            await db.run_schema(name, dimension=dimension, vector_config=config)
            return
        except ClientError as exc:
            if exc.code in _ALREADY_EXISTS:  # another server created it between check and create
                return
            if _QUANTIZATION_KEY not in config or _QUANTIZATION_KEY not in str(exc.message):
                raise


async def _check_vector_index_dimension(db: Database, dimension: int) -> None:
    rows = await db.run_read("vector_index_info")
    if not rows:
        raise RuntimeError("the vector index memory_embedding is missing after schema creation")
    config = rows[0]["config"] or {}
    stored = config.get("vector.dimensions")
    if stored is not None and int(stored) != dimension:
        raise EmbeddingMismatch(
            f"vector index memory_embedding is {stored}-d but the embedding model is {dimension}-d; "
            "run `slowave-graph reembed` to rebuild it."
        )
    if rows[0]["state"] != "ONLINE":
        raise RuntimeError(f"vector index memory_embedding is {rows[0]['state']}, not ONLINE")
