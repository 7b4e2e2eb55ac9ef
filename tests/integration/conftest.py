"""Integration fixtures: one real Neo4j per test run, one embedding model, fresh scopes per test.

The Neo4j is the project's own managed server (Maven jars, started by slowave_graph.neo4j_local)
in a temporary data directory on a free port. Set SLOWAVE_TEST_NEO4J_URI (+ _USER/_PASSWORD) to
run the suite against a Neo4j of your own instead; tests only ever write into fresh scopes.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from slowave_graph.app import App, open_app
from slowave_graph.embedding.embedder import DEFAULT_MODEL, Embedder, load_embedder
from slowave_graph.neo4j_local.manager import ManagedNeo4j, free_port
from tests.support.neo4j import Neo4jTarget, managed_neo4j_settings, private_neo4j


@pytest.fixture(scope="session")
def neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jTarget]:
    uri = os.environ.get("SLOWAVE_TEST_NEO4J_URI")
    if uri:
        yield Neo4jTarget(
            uri,
            os.environ.get("SLOWAVE_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("SLOWAVE_TEST_NEO4J_PASSWORD", ""),
            None,
        )
        return
    # the training workload drives a whole server: imported only when a managed Neo4j is started
    from slowave_graph.workload.jvm_training import trainer

    settings = managed_neo4j_settings(
        tmp_path_factory.mktemp("neo4j-data"), neo4j_heap="768m", neo4j_pagecache="256m"
    )
    ManagedNeo4j(settings).train_aot_cache(trainer(settings))  # once per machine (Java 25+): faster starts
    with private_neo4j(settings) as target:
        yield target


@pytest.fixture(scope="session")
def http_url(neo4j: Neo4jTarget) -> Iterator[str]:
    """One streamable-HTTP server process (default configuration) shared by the tests that need one."""
    from tests.support.servers import http_server

    port = free_port()
    with http_server(neo4j.env(), port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default model, as a server started with no configuration uses it."""
    return load_embedder(DEFAULT_MODEL)


@pytest.fixture(scope="session")
async def app(neo4j: Neo4jTarget, embedder: Embedder) -> AsyncIterator[App]:
    async with open_app(neo4j.settings(), embedder=embedder) as application:
        yield application


@pytest.fixture
def scope() -> str:
    """A scope no other test uses: tests are isolated without wiping the database."""
    return f"test:{uuid.uuid4().hex[:12]}"


@pytest.fixture
def cli_env(neo4j: Neo4jTarget, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Arguments (and environment) that point a `slowave-graph` command at the suite's Neo4j."""
    monkeypatch.setenv("NEO4J_USER", neo4j.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j.password)
    yield ["--neo4j-uri", neo4j.uri]
