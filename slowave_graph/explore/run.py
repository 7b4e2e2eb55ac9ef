"""Running a catalog query by name: always in a read transaction (the server refuses any write
in one), results as JSON-ready rows."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from neo4j import AsyncManagedTransaction

from slowave_graph.explore.catalog import CatalogQuery, bind_params, get_query
from slowave_graph.graph.database import Database, rows


def jsonable(value: Any) -> Any:
    """Driver values as JSON values: temporal values as ISO 8601 strings, lists and maps
    recursively, bytes as base64, anything else (points, graph objects) as its string form."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    to_native = getattr(value, "to_native", None)
    if callable(to_native):
        try:
            native = to_native()
        except (ValueError, OverflowError):  # nanoseconds or ranges Python cannot hold
            native = None
        if native is not None and hasattr(native, "isoformat"):
            return native.isoformat()
    iso = getattr(value, "iso_format", None)
    if callable(iso):
        return iso()
    return str(value)


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
