"""Running a catalog query by name: always in a read transaction (the server refuses any write
in one), results as JSON-ready rows."""

from __future__ import annotations

from typing import Any

from neo4j import AsyncManagedTransaction

from slowave_graph.explore.catalog import CatalogQuery, bind_params, get_query
from slowave_graph.graph.database import Database, rows
from slowave_graph.graph.values import jsonable


async def run_catalog_query(
    db: Database, name: str, params: list[str] | dict[str, Any] | None = None
) -> tuple[CatalogQuery, list[dict[str, Any]]]:
    """Run a catalog query (explore.cypher or stats.cypher) by name in a read transaction."""
    query = get_query(name, db.queries)
    bound = bind_params(query, params or {})

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        return await rows(tx, db.q(query.name), **bound)

    found = await db.read(work)
    return query, [{k: jsonable(v) for k, v in row.items()} for row in found]


async def run_read_statement(db: Database, statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Any statement an analyst types, in a read transaction: the server refuses writes in it, so
    this cannot change the memory whatever the text says. The text is the analyst's own query;
    values still travel as parameters."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        return await rows(tx, statement, **params)

    found = await db.read(work)
    return [{k: jsonable(v) for k, v in row.items()} for row in found]
