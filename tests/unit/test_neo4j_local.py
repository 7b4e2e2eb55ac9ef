"""Managed Neo4j: version rules, configuration, JVM options and JDK choice (no Neo4j started here; a
JDK runs only `java -version` with the options)."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from slowave_graph.config import Settings
from slowave_graph.neo4j_local import manager
from slowave_graph.neo4j_local.browser import describe
from slowave_graph.neo4j_local.manager import (
    LAUNCHER_JAR,
    ManagedNeo4j,
    Neo4jLocalError,
    Neo4jVersion,
    find_java_home,
    free_port,
)


def test_a_free_port_lies_below_the_ephemeral_range_and_is_bindable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outgoing connections draw their local ports from the ephemeral range, so a port picked there
    can be gone before the server it is for binds it; free_port stays below the range."""
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("40000\t60999\n")
    monkeypatch.setattr(manager, "EPHEMERAL_RANGE", ranges)
    ports = {free_port() for _ in range(20)}
    assert all(40000 - manager.PORT_SPAN <= port < 40000 for port in ports), ports
    assert len(ports) > 1  # random: two servers starting side by side do not pick alike
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports.pop()))
    # a port already taken is skipped: with a span of one port, the kernel picks
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        busy = taken.getsockname()[1]
        ranges.write_text(f"{busy + 1}\t60999\n")
        monkeypatch.setattr(manager, "PORT_SPAN", 1)
        assert free_port() != busy
    # no range to read (not Linux): the kernel's pick
    monkeypatch.setattr(manager, "EPHEMERAL_RANGE", tmp_path / "missing")
    assert free_port() > 0


def conf_for(version: str, tmp_path: Path) -> dict[str, str]:
    settings = Settings.from_env({}, neo4j_version=version, data_dir=tmp_path, neo4j_bolt_port=7801)
    text = ManagedNeo4j(settings).neo4j_conf()
    return dict(line.split("=", 1) for line in text.splitlines())


def test_conf_binds_loopback_and_disables_reporting(tmp_path: Path) -> None:
    conf = conf_for("2026.09.0", tmp_path)
    assert conf["server.bolt.listen_address"] == "127.0.0.1:7801"
    assert conf["dbms.usage_report.enabled"] == "false"
    assert conf["dbms.security.auth_enabled"] == "true"
    assert conf["dbms.security.allow_csv_import_from_file_urls"] == "false"  # LOAD CSV reads no host file
    assert conf["dbms.fleet_manager.enabled"] == "false"
    assert conf["server.fleet_discovery.enabled"] == "false"


@pytest.mark.parametrize(
    ("version", "fleet", "discovery"),
    [
        ("5.26.31", False, False),
        ("2026.02.3", False, False),
        ("2026.04.0", True, False),
        ("2026.05.0", True, True),
    ],
)
def test_fleet_keys_only_where_they_exist(tmp_path: Path, version: str, fleet: bool, discovery: bool) -> None:
    conf = conf_for(version, tmp_path)  # strict validation makes unknown keys fatal
    assert ("dbms.fleet_manager.enabled" in conf) is fleet
    assert ("server.fleet_discovery.enabled" in conf) is discovery


def test_versions() -> None:
    new, lts = Neo4jVersion.parse("2026.09.0"), Neo4jVersion.parse("5.26.31")
    assert new.calver and (new.min_java, new.max_java) == (21, 25) and new.store_dir_name == "neo4j"
    assert not lts.calver and (lts.min_java, lts.max_java) == (17, 21) and lts.store_dir_name == "neo4j-5"
    with pytest.raises(Neo4jLocalError):
        Neo4jVersion.parse("latest")


def fake_jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "javac").write_text("")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home


def test_configured_jdk_must_fit(tmp_path: Path) -> None:
    jdk17 = fake_jdk(tmp_path, "jdk17", "17.0.15")
    assert find_java_home(Neo4jVersion.parse("5.26.31"), jdk17) == jdk17
    with pytest.raises(Neo4jLocalError, match="needs Java 21"):
        find_java_home(Neo4jVersion.parse("2026.09.0"), jdk17)


def test_password_file_is_private_and_stable(tmp_path: Path) -> None:
    managed = ManagedNeo4j(Settings.from_env({}, data_dir=tmp_path))
    first = managed.password()
    assert managed.password() == first and len(first) >= 20
    assert managed.password_file.stat().st_mode & 0o777 == 0o600
    configured = ManagedNeo4j(Settings.from_env({"NEO4J_PASSWORD": "given-password"}, data_dir=tmp_path))
    assert configured.password() == "given-password"


@pytest.mark.parametrize("version", ["2026.09.0", "5.26.31"])
def test_the_jvm_gets_its_whole_heap_and_accepts_every_flag(tmp_path: Path, version: str) -> None:
    settings = Settings.from_env({}, neo4j_version=version, data_dir=tmp_path, neo4j_heap="256m")
    manager = ManagedNeo4j(settings)
    try:
        java_home = find_java_home(manager.version, None)
    except Neo4jLocalError:
        pytest.skip(f"no JDK for Neo4j {version} on this machine")
    command = manager.java_command(java_home, tmp_path)
    flags = command[1 : command.index("-cp")]
    assert "-Xms256m" in flags and "-Xmx256m" in flags  # initial = max: no heap resizing once warm
    # an unknown or locked option would stop the JVM before Neo4j starts
    probe = subprocess.run([command[0], *flags, "-version"], capture_output=True, text=True, check=False)
    assert probe.returncode == 0, probe.stderr


def manager_with_jars(tmp_path: Path, **overrides: object) -> tuple[ManagedNeo4j, Path]:
    settings = Settings.from_env({}, data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", **overrides)
    manager = ManagedNeo4j(settings)
    manager.jar_dir.mkdir(parents=True, exist_ok=True)
    launcher = tmp_path / "launcher"
    launcher.mkdir(exist_ok=True)
    for jar in [manager.jar_dir / f"{name}.jar" for name in ("neo4j-kernel", "neo4j-bolt", "lucene-core")] + [
        launcher / LAUNCHER_JAR
    ]:
        if not jar.exists():  # a second manager on the same cache sees the same files
            jar.write_bytes(jar.name.encode())
    return manager, launcher


def test_class_path_is_the_launcher_jar_then_the_jars_in_a_fixed_order(tmp_path: Path) -> None:
    manager, launcher = manager_with_jars(tmp_path)
    entries = manager.class_path(launcher)
    assert entries[0] == launcher / LAUNCHER_JAR
    assert [p.name for p in entries[1:]] == ["lucene-core.jar", "neo4j-bolt.jar", "neo4j-kernel.jar"]


def test_aot_cache_is_named_by_jdk_flags_and_jars_but_not_heap(tmp_path: Path) -> None:
    jdk25 = fake_jdk(tmp_path, "jdk25", "25.0.3")
    manager, launcher = manager_with_jars(tmp_path)
    cache = manager.aot_cache(jdk25, launcher)
    assert cache is not None and cache.parent == manager.jar_dir.parent / "aot"
    assert manager.aot_cache(jdk25, launcher) == cache  # stable
    bigger_heap, _ = manager_with_jars(tmp_path, neo4j_heap="4g")
    assert bigger_heap.aot_cache(jdk25, launcher) == cache  # a cache recorded with one heap loads with any
    jar = manager.jar_dir / "neo4j-bolt.jar"
    jar.write_bytes(b"a newer build of the same jar")
    assert manager.aot_cache(jdk25, launcher) != cache  # the JVM would refuse the old cache
    other_jdk = fake_jdk(tmp_path, "jdk25b", "25.0.4")
    assert manager.aot_cache(other_jdk, launcher) not in (None, manager.aot_cache(jdk25, launcher))
    assert (
        manager.aot_cache(fake_jdk(tmp_path, "jdk21", "21.0.5"), launcher) is None
    )  # no AOT cache before 25


def test_a_cache_the_jvm_cannot_map_is_not_taken(tmp_path: Path) -> None:
    manager, launcher = manager_with_jars(tmp_path)
    try:
        java_home = find_java_home(manager.version, None)
    except Neo4jLocalError:
        pytest.skip("no JDK for Neo4j 2026.x on this machine")
    if manager.aot_cache(java_home, launcher) is None:
        pytest.skip("the newest JDK here has no AOT cache (Java 25+)")
    assert not manager._aot_loads(java_home, launcher, tmp_path / "missing.aot")
    garbage = tmp_path / "garbage.aot"
    garbage.write_bytes(b"\0" * 4096)  # e.g. a training JVM killed while it wrote the cache
    assert not manager._aot_loads(java_home, launcher, garbage)


def test_the_browser_is_styled_after_it_connects_and_told_it_can_write(tmp_path: Path) -> None:
    command = conf_for("2026.09.0", tmp_path)["browser.post_connect_cmd"]
    assert command.startswith("style {") and "\n" not in command and ";" not in command  # one command
    style = json.loads(command.removeprefix("style "))
    assert style["node.Memory"]["caption"] == "{content}" and style["node.Procedure"]["caption"] == "{goal}"
    shown = json.loads(describe("http://127.0.0.1:7474/browser/", "bolt://127.0.0.1:7801", "log in"))
    assert "can write" in shown["access"] and "cypher query" in shown["access"]
