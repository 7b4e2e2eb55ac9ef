"""The managed Neo4j starts from the JVM's AOT cache that the suite recorded before it (Java 25+)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.neo4j import Neo4jTarget


def test_the_managed_neo4j_starts_from_the_recorded_aot_cache(neo4j: Neo4jTarget) -> None:
    if neo4j.managed is None:
        pytest.skip("the suite runs against a Neo4j of its own (SLOWAVE_TEST_NEO4J_URI)")
    state = neo4j.managed.running()
    assert state is not None
    java_home = Path(state.java)
    launcher = neo4j.managed.ensure_launcher(java_home)
    cache = neo4j.managed.aot_cache(java_home, launcher)
    if cache is None:
        pytest.skip(f"the JDK {java_home} has no AOT cache (Java 25+)")
    assert state.aot_cache == str(cache) and cache.is_file()
    assert neo4j.managed._aot_loads(java_home, launcher, cache)
    # the JVM logs nothing about a cache it maps; a mismatch or a damaged file prints [aot] lines
    assert "[aot]" not in neo4j.managed.log_file.read_text(errors="replace")
