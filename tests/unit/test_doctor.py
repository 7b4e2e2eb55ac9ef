"""Doctor checks that need no database: the installation and the managed Neo4j's prerequisites."""

from __future__ import annotations

from pathlib import Path

from slowave_graph.commands.doctor import check_managed_prerequisites, check_python
from slowave_graph.config import Settings


def test_python_check_sees_every_dependency() -> None:
    check = check_python()
    assert check.status == "ok" and "dependencies" in check.detail


def test_managed_prerequisites_with_an_empty_cache(tmp_path: Path) -> None:
    settings = Settings.from_env({}, cache_dir=tmp_path / "cache", data_dir=tmp_path / "data")
    checks = {c.name: c for c in check_managed_prerequisites(settings)}
    assert checks["neo4j jars"].status == "warn" and checks["neo4j jars"].fix is not None
    assert "slowave-graph neo4j fetch" in checks["neo4j jars"].fix
    assert checks["maven"].status in ("ok", "fail")  # depends on mvn being installed, never skipped
    assert checks["java"].status in ("ok", "fail")


def test_missing_jdk_is_a_failure_that_says_what_to_do(tmp_path: Path) -> None:
    jdk = tmp_path / "jdk"
    jdk.mkdir()
    (jdk / "release").write_text('JAVA_VERSION="11.0.2"\n')
    settings = Settings.from_env({}, java_home=jdk, cache_dir=tmp_path)
    java = next(c for c in check_managed_prerequisites(settings) if c.name == "java")
    assert java.status == "fail" and "Java 11" in java.detail


def test_external_neo4j_skips_the_managed_prerequisites() -> None:
    checks = check_managed_prerequisites(Settings.from_env({"NEO4J_URI": "bolt://db:7687"}))
    assert [c.status for c in checks] == ["skip", "skip", "skip"]
