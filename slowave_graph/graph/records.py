"""A statement's result as rows: the records the driver decoded, turned into plain dicts, and the
parameters sent the other way, kept out of the driver's debug formatting."""

from __future__ import annotations

import logging
from typing import Any, TypeVar, overload

from neo4j import AsyncManagedTransaction, AsyncSession, Record
from neo4j.graph import Graph

from slowave_graph.graph.statements import Statement

R = TypeVar("R")

_driver_log = logging.getLogger("neo4j")


class UnloggedList(list[Any]):
    """A list parameter with a short repr. The driver (neo4j 6.1) formats every RUN's parameters
    for its debug log before the log level is checked (``" ".join(map(repr, fields))``): for a
    statement carrying three 384-d query vectors that is a measurable share of its CPU, on every
    statement (docs/performance.md, "Design choices, with their measured effect")."""

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def unlogged(params: dict[str, Any]) -> dict[str, Any]:
    """Top-level list parameters wrapped in UnloggedList, unless the driver's debug log is on."""
    if _driver_log.isEnabledFor(logging.DEBUG):
        return params
    return {k: UnloggedList(v) if type(v) is list else v for k, v in params.items()}


@overload
async def rows(
    tx: AsyncManagedTransaction | AsyncSession, statement: Statement[R], /, **params: Any
) -> list[R]: ...
@overload
async def rows(
    tx: AsyncManagedTransaction | AsyncSession, statement: str, /, **params: Any
) -> list[dict[str, Any]]: ...
async def rows(
    tx: AsyncManagedTransaction | AsyncSession, statement: Statement[Any] | str, /, **params: Any
) -> list[Any]:
    """All records of one statement, inside a transaction function or auto-commit in a session, as
    dicts. ``statement``: a typed handle (its rows come typed), or catalog text (``Database.q``)."""
    text = statement if isinstance(statement, str) else statement.text
    result = await tx.run(text, unlogged(params))
    records = [record async for record in result]
    return as_dicts(records, await result.graph())


def as_dicts(records: list[Record], graph: Graph) -> list[dict[str, Any]]:
    """A result's records as dicts, the same as ``Record.data()``. data() runs every value through
    the driver's generic exporter (ABC instance checks, new containers), which was the largest
    share of the server's CPU under load. So records are zipped instead, unless the result held a
    node or a relationship (``graph``: the ones the driver built while decoding it; a path's are
    among them), which only data() turns into dicts. The decoded graph tells the two apart; walking
    each row to do so cost a noticeable share of the server's GIL time with eight clients
    (docs/performance.md, "Design choices, with their measured effect")."""
    if graph.nodes or graph.relationships:
        return [record.data() for record in records]
    return [dict(zip(record.keys(), record.values(), strict=True)) for record in records]
