"""Rows come back as plain dicts exactly as Record.data() would give them, only cheaper."""

from __future__ import annotations

import pytest
from neo4j import GraphDatabase

from slowave_graph.graph.database import record_dict
from tests.conftest import Neo4jTarget

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


def test_record_dict_is_record_data(neo4j: Neo4jTarget) -> None:
    driver = GraphDatabase.driver(neo4j.uri, auth=(neo4j.user, neo4j.password))
    try:
        with driver.session(database="neo4j") as session:
            for statement in STATEMENTS:
                records = list(session.run(statement))
                assert records
                for record in records:
                    assert record_dict(record) == record.data(), statement
            session.run("MATCH (n:RecordProbe) DETACH DELETE n").consume()
    finally:
        driver.close()
