"""Query plans of the hot path: every statement the tools run is planned by the real Neo4j and
must reach its nodes through an index (unique constraint, range, vector or full-text), never by
scanning all nodes or a whole label. EXPLAIN plans without executing, so write statements are
checked without side effects and without data."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import GraphDatabase

from slowave_graph.graph.cypher import catalog
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.lts  # also run against the 5.26 LTS line (scripts/test)

# The statements that activate, remember, recall, feedback and commit run.
HOT_PATH_FILES = ("memory", "session", "retrieval", "feedback", "commit")
SCANS = {
    "AllNodesScan",
    "NodeByLabelScan",
    "DirectedRelationshipTypeScan",
    "UndirectedRelationshipTypeScan",
    "DirectedAllRelationshipsScan",
    "UndirectedAllRelationshipsScan",
}


def operators(plan: dict[str, Any]) -> list[tuple[str, str]]:
    # "NodeUniqueIndexSeek(Locking)@neo4j" → "NodeUniqueIndexSeek"
    name = str(plan["operatorType"]).split("@")[0].split("(")[0]
    out = [(name, str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children", []):
        out.extend(operators(child))
    return out


def explain(statement: str) -> str:
    if statement.startswith("CYPHER 25"):
        return "CYPHER 25 EXPLAIN " + statement[len("CYPHER 25") :]
    return "EXPLAIN " + statement


def hot_path_queries() -> list[str]:
    return [name for file in HOT_PATH_FILES for name in catalog().names(file)]


SEARCH_ONLY = {"vector_search_filtered", "experience_search", "procedure_search_filtered"}


def plannable(name: str, server_version: str) -> bool:
    """The in-index filtered vector search exists from Neo4j 2026.01 (Cypher 25 SEARCH) and is
    only run there; every other statement runs on every supported version."""
    return name not in SEARCH_ONLY or int(server_version.split(".")[0]) >= 2026


def test_hot_path_catalog_is_not_empty() -> None:
    assert len(hot_path_queries()) >= 30


@pytest.fixture(scope="module")
def plans(neo4j: Neo4jTarget) -> dict[str, list[tuple[str, str]]]:
    driver = GraphDatabase.driver(
        neo4j.uri, auth=(neo4j.user, neo4j.password), notifications_min_severity="OFF"
    )
    try:
        with driver.session(database="neo4j") as session:
            version = session.run(
                "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0] AS v"
            ).single()
            assert version is not None
            return {
                name: operators(session.run(explain(catalog()[name])).consume().plan)
                for name in hot_path_queries()
                if plannable(name, str(version["v"]))
            }
    finally:
        driver.close()


@pytest.mark.parametrize("name", hot_path_queries())
def test_no_scan_where_an_index_exists(plans: dict[str, list[tuple[str, str]]], name: str) -> None:
    if name not in plans:
        pytest.skip(f"{name} is not used on this Neo4j version (see plannable)")
    scans = [(op, details) for op, details in plans[name] if op in SCANS]
    assert not scans, f"{name} scans instead of using an index: {scans}"


def test_searches_use_their_indexes(plans: dict[str, list[tuple[str, str]]]) -> None:
    ops = {name: {op for op, _ in found} for name, found in plans.items()}
    if "vector_search_filtered" in ops:  # 2026.01+: in-index filtered SEARCH
        assert "NodeVectorIndexSearch" in ops["vector_search_filtered"]
        assert "NodeVectorIndexSearch" in ops["experience_search"]  # past questions
        assert "NodeVectorIndexSearch" in ops["procedure_search_filtered"]
    else:  # 5.26: the strategy is picked from the scope's size, counted through its index
        assert "NodeCountFromCountStore" in ops["vector_scan_scope"]  # the database's size
    assert "ProcedureCall" in ops["fulltext_search"]  # db.index.fulltext.queryNodes
    assert "ProcedureCall" in ops["vector_search_overfetch"]  # db.index.vector.queryNodes
    # exact scan of one scope goes through the (scope, status) range index
    assert "NodeIndexSeek" in ops["vector_scan_scope"]
    assert "NodeUniqueIndexSeek" in ops["session_for_call"]
    assert "NodeIndexSeek" in ops["scope_state"]  # both EXISTS checks through (scope, status)
