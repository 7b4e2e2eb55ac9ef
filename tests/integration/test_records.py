"""Rows come back as plain dicts exactly as Record.data() would give them, only cheaper."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import AsyncManagedTransaction, GraphDatabase

from slowave_graph.app import App
from slowave_graph.graph.records import as_dicts, rows
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.neo4j

STATEMENTS = [
    # the shape of the search rows: scalars, nulls, lists of numbers, nested maps, temporals
    "RETURN 1 AS qi, 'sch_1' AS id, 0.5 AS cosine, null AS integration, [0.1, 0.2] AS similarities, "
    "{links: [{seed: 'sch_2', strength: 0.4}], n: null} AS nested, datetime('2026-03-11T10:00:00Z') AS at",
    # graph values, at the top and nested: still converted the way data() converts them
    "CREATE (a:RecordProbe {name: 'a'})-[r:PROBES {w: 1}]->(b:RecordProbe {name: 'b'}) "
    "RETURN a, r, [a, b] AS both, {start: a} AS wrapped",
    # a graph value deep among plain ones: found however far down it sits
    "MATCH (a:RecordProbe {name: 'a'})-[r:PROBES]->(b:RecordProbe) "
    "RETURN [1, 'x', null, a] AS mixed, {k: [0.5, {n: b}], s: 'x'} AS deep, [[1, 2], [r]] AS lists",
    "MATCH p = (:RecordProbe {name: 'a'})-[:PROBES]->(:RecordProbe) RETURN p LIMIT 1",
]


def test_as_dicts_is_record_data(neo4j: Neo4jTarget) -> None:
    driver = GraphDatabase.driver(neo4j.uri, auth=(neo4j.user, neo4j.password))
    try:
        with driver.session(database="neo4j") as session:
            for statement in STATEMENTS:
                result = session.run(statement)
                records = list(result)
                assert records
                assert as_dicts(records, result.graph()) == [record.data() for record in records], statement
            session.run("MATCH (n:RecordProbe) DETACH DELETE n").consume()
    finally:
        driver.close()


async def test_database_statements_convert_graph_values(
    app: App, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the service's own paths: a write transaction (run_write), an auto-commit read on a
    reader thread (run_read) and a read transaction of the async driver (read, as explore runs)."""
    db = app.db
    statements = {
        "create": "CREATE (a:RecordProbe {name: $scope}) RETURN a, [1, a] AS wrapped, 'x' AS s",
        "read": "MATCH (a:RecordProbe {name: $scope}) RETURN a, {n: [a]} AS nested, a.name AS name",
        "plain": "MATCH (a:RecordProbe {name: $scope}) RETURN a.name AS name, [1, 'x'] AS list",
        "delete": "MATCH (a:RecordProbe {name: $scope}) DELETE a",
    }
    monkeypatch.setattr(db, "queries", statements)  # Database.q looks statements up by name
    probe = {"name": scope}
    try:
        assert await db.run_write("create", scope=scope) == [{"a": probe, "wrapped": [1, probe], "s": "x"}]
        assert await db.run_read("read", scope=scope) == [
            {"a": probe, "nested": {"n": [probe]}, "name": scope}
        ]
        assert await db.run_read("plain", scope=scope) == [{"name": scope, "list": [1, "x"]}]

        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await rows(tx, statements["read"], scope=scope)

        assert await db.read(work) == [{"a": probe, "nested": {"n": [probe]}, "name": scope}]
    finally:
        await db.run_write("delete", scope=scope)
