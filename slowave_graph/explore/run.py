"""Running a catalog query by name: always in a read transaction (the server refuses any write
in one), results as JSON-ready rows."""

from __future__ import annotations

import re
from typing import Any

from neo4j import AsyncManagedTransaction

from slowave_graph.exceptions import SlowaveError
from slowave_graph.explore.catalog import CatalogQuery, bind_params, get_query
from slowave_graph.graph.database import Database
from slowave_graph.graph.records import rows, unlogged
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


# Procedures of mode DBMS that only report; the others of that mode act on the server (kill
# connections, clear caches, set transaction metadata) and are refused.
REPORTING_PROCEDURES = frozenset(
    {
        "dbms.components",
        "dbms.info",
        "dbms.listCapabilities",
        "dbms.listConfig",
        "dbms.listConnections",
        "dbms.queryJmx",
        "dbms.showCurrentUser",
        "dbms.routing.getRoutingTable",
        "dbms.cluster.routing.getRoutingTable",
        "tx.getMetaData",
    }
)
_PROCEDURE = re.compile(r"^\s*([\w.]+)\s*\(")


class UnsafeStatement(SlowaveError, ValueError):
    """A statement ``cypher query`` will not run: it reads files or URLs, or acts on the server."""


def plan_operators(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """(operator, details) of every operator in an EXPLAIN plan, the root first."""
    operator = str(plan.get("operatorType", "")).split("@")[0]
    found = [(operator, str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children", []):
        found.extend(plan_operators(child))
    return found


def refusal(operators: list[tuple[str, str]], modes: dict[str, str]) -> str | None:
    """Why a plan's statement must not run under `cypher query`, or None. Read-only is not
    harmless: LOAD CSV reads the host's files and fetches URLs, TERMINATE and some procedures act on
    the server."""
    for operator, details in operators:
        if operator == "LoadCSV":
            return "LOAD CSV reads files and fetches URLs from the database host"
        if operator.startswith("Terminate"):
            return f"{operator} acts on the server"
        if operator == "ProcedureCall" and (match := _PROCEDURE.match(details)):
            name = match.group(1)
            mode = modes.get(name, "unknown")
            if mode != "READ" and name not in REPORTING_PROCEDURES:
                return f"procedure {name} (mode {mode}) is not a reading procedure"
    return None


async def run_read_statement(db: Database, statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Any statement an analyst types, in a read transaction: the server refuses writes in it, so
    this cannot change the memory whatever the text says, and its plan is checked first for what
    reads the host or acts on the server (``refusal``). The text is the analyst's own query;
    values still travel as parameters."""

    async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
        planned = await (await tx.run("EXPLAIN " + statement, unlogged(params))).consume()
        if planned.plan is not None:
            operators = plan_operators(planned.plan)
            calls = any(operator == "ProcedureCall" for operator, _ in operators)
            modes = (
                {str(r["name"]): str(r["mode"]) for r in await rows(tx, db.q("procedure_modes"))}
                if calls
                else {}
            )
            why = refusal(operators, modes)
            if why is not None:
                raise UnsafeStatement(f"refused: {why}; nothing ran")
        return await rows(tx, statement, **params)

    found = await db.read(work)
    return [{k: jsonable(v) for k, v in row.items()} for row in found]
