"""The load bench's server under test: started with the managed Neo4j flags `bench load` was given."""

from __future__ import annotations

import pytest

from slowave_graph.config import Settings
from slowave_graph_lab.bench.load import server_env


def test_the_load_bench_hands_its_managed_neo4j_flags_to_the_server_under_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`bench load --neo4j-version 5.26.31 --bolt-port …` once started its server under test on
    the default version and port: a second, empty Neo4j that it then measured."""
    monkeypatch.delenv("SLOWAVE_NEO4J_VERSION", raising=False)
    monkeypatch.delenv("SLOWAVE_NEO4J_BOLT_PORT", raising=False)
    settings = Settings.from_env(
        {}, data_dir="/tmp/d", neo4j_version="5.26.31", neo4j_bolt_port=7698, neo4j_pagecache="2g"
    )
    env = server_env(settings, 8899)
    assert env["SLOWAVE_NEO4J_VERSION"] == "5.26.31" and env["SLOWAVE_NEO4J_BOLT_PORT"] == "7698"
    assert env["SLOWAVE_DATA_DIR"] == "/tmp/d" and env["SLOWAVE_NEO4J_PAGECACHE"] == "2g"
    assert env["SLOWAVE_HTTP_PORT"] == "8899" and "NEO4J_URI" not in env
    external = server_env(Settings.from_env({}, neo4j_uri="bolt://db:7687", neo4j_password="pw"), 8899)
    assert external["NEO4J_URI"] == "bolt://db:7687" and external["NEO4J_PASSWORD"] == "pw"
    assert "SLOWAVE_NEO4J_VERSION" not in external  # an external Neo4j: no managed one to find
