"""Test fixtures: one real Neo4j per test run, one embedding model, fresh scopes per test.

The Neo4j is the project's own managed server (Maven jars, started by slowave_graph.neo4j_local)
in a temporary data directory on a free port. Set SLOWAVE_TEST_NEO4J_URI (+ _USER/_PASSWORD) to
run the suite against a Neo4j of your own instead; tests only ever write into fresh scopes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from slowave_graph.app import App, open_app
from slowave_graph.config import Settings
from slowave_graph.embedding.embedder import DEFAULT_MODEL, Embedder, load_embedder
from slowave_graph.neo4j_local.manager import ManagedNeo4j, free_port
from slowave_graph.operator.jvm_training import trainer

# Tests share one database, each in fresh scopes of the kind "test", and many write the same texts
# and mark them used: with generalisation on, those would be lessons validated across scopes and
# travel into other tests' scopes. The suite runs with it off; test_generalisation.py turns it on
# for its own scopes.
ISOLATED = {"generalisation": False}


@dataclass(frozen=True)
class Neo4jTarget:
    uri: str
    user: str
    password: str
    managed: ManagedNeo4j | None

    def settings(self, **overrides: object) -> Settings:
        connection = {"neo4j_uri": self.uri, "neo4j_user": self.user, "neo4j_password": self.password}
        return Settings.from_env({}, **{**connection, **ISOLATED, **overrides})

    def env(self) -> dict[str, str]:
        """Environment for a server subprocess that uses this Neo4j."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SLOWAVE_"))}
        env.update(NEO4J_URI=self.uri, NEO4J_USER=self.user, NEO4J_PASSWORD=self.password)
        # no background maintenance pass: it works on every scope, and tests keep to their own; no
        # lessons travelling between scopes either (see ISOLATED)
        env.update(SLOWAVE_MAINTENANCE_INTERVAL="0", SLOWAVE_GENERALISATION="false")
        return env


def managed_neo4j_settings(data_dir: Path, **overrides: object) -> Settings:
    """A managed Neo4j of the tests' own: a fresh store, a free port, the shared jar cache."""
    return Settings.from_env(
        {k: v for k, v in os.environ.items() if k in ("SLOWAVE_CACHE_DIR", "SLOWAVE_NEO4J_VERSION")},
        **{"data_dir": data_dir, "neo4j_bolt_port": free_port(), "neo4j_heap": "512m",
           "neo4j_pagecache": "128m", **overrides},
    )  # fmt: skip


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
    settings = managed_neo4j_settings(
        tmp_path_factory.mktemp("neo4j-data"), neo4j_heap="768m", neo4j_pagecache="256m"
    )
    ManagedNeo4j(settings).train_aot_cache(trainer(settings))  # once per machine (Java 25+): faster starts
    with private_neo4j(settings) as target:
        yield target


@contextmanager
def private_neo4j(settings: Settings) -> Iterator[Neo4jTarget]:
    """A managed Neo4j of its own (see managed_neo4j_settings), running for the block."""
    managed = ManagedNeo4j(settings)
    state, _ = managed.start()
    try:
        yield Neo4jTarget(state.uri, "neo4j", managed.password(), managed)
    finally:
        managed.stop(timeout=0)  # a throwaway store: killed, no clean shutdown (~10 s) needed


@pytest.fixture(scope="session")
def http_url(neo4j: Neo4jTarget) -> Iterator[str]:
    """One streamable-HTTP server process (default configuration) shared by the tests that need one."""
    from tests.servers import http_server

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


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium (the project never downloads a browser; `make test` installs it)."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    assert found, "the browser tests need Debian's Chromium: scripts/chromium installs it (make test runs it)"
    return found


@pytest.fixture(scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """Chromium driven by Playwright, one per test module."""
    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
def cli_env(neo4j: Neo4jTarget, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Arguments (and environment) that point a `slowave-graph` command at the suite's Neo4j."""
    monkeypatch.setenv("NEO4J_USER", neo4j.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j.password)
    yield ["--neo4j-uri", neo4j.uri]


async def run_cli(argv: list[str]) -> int:
    """`slowave-graph ARGV`; the CLI runs its own event loop, so it runs in a worker thread."""
    import asyncio

    from slowave_graph import cli

    return await asyncio.to_thread(cli.main, argv)
