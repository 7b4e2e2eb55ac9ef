"""The Neo4j the integration tests run against: the suite's shared one (tests/integration/conftest.py)
or a private managed one that a test starts for itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import ManagedNeo4j, free_port

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


@contextmanager
def private_neo4j(settings: Settings) -> Iterator[Neo4jTarget]:
    """A managed Neo4j of its own (see managed_neo4j_settings), running for the block."""
    managed = ManagedNeo4j(settings)
    state, _ = managed.start()
    try:
        yield Neo4jTarget(state.uri, "neo4j", managed.password(), managed)
    finally:
        managed.stop(timeout=0)  # a throwaway store: killed, no clean shutdown (~10 s) needed
