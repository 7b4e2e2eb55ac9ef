"""Configuration keys, and the Docker compose file checked against them (no Docker engine here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slowave_graph.config import DEFAULT_NEO4J_VERSION, Settings

ROOT = Path(__file__).resolve().parents[2]


def test_settings_from_environment() -> None:
    s = Settings.from_env(
        {"NEO4J_URI": "neo4j+s://abc.databases.neo4j.io", "NEO4J_PASSWORD": "pw", "SLOWAVE_HTTP_PORT": "9000",
         "SLOWAVE_SESSION_IDLE_TIMEOUT": "60", "NEO4J_USER": " "},
    )  # fmt: skip
    assert s.neo4j_uri == "neo4j+s://abc.databases.neo4j.io" and not s.managed
    assert s.neo4j_password is not None and s.neo4j_password.get_secret_value() == "pw"
    assert s.http_port == 9000 and s.session_idle_timeout == 60.0
    assert "pw" not in repr(s)


def test_defaults_and_flag_overrides() -> None:
    s = Settings.from_env({"NEO4J_URI": ""}, http_port=None, neo4j_bolt_port=7800)
    assert s.managed and s.neo4j_version == DEFAULT_NEO4J_VERSION
    assert (s.http_host, s.http_port, s.neo4j_bolt_port) == ("127.0.0.1", 8766, 7800)


def test_a_flag_beats_its_variable_and_only_declared_variables_count(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"SLOWAVE_HTTP_PORT": "9000", "SLOWAVE_NEO4J_AOT_CACHE": "false", "data_dir": "/elsewhere"}
    s = Settings.from_env(env, http_port=9100)
    assert (s.http_port, s.neo4j_aot_cache) == (9100, False)
    assert s.data_dir != Path("/elsewhere")  # a field's own name is not a variable
    monkeypatch.setenv("SLOWAVE_HTTP_PORT", "9200")
    assert Settings.from_env({}).http_port == 8766  # an explicit mapping replaces os.environ
    assert Settings.from_env().http_port == 9200
    assert Settings().http_port == 8766  # built from arguments alone (the linger process)


def test_every_setting_names_an_environment_variable() -> None:
    names = Settings.env_names()
    assert names["neo4j_uri"] == "NEO4J_URI" and names["auth_token"] == "SLOWAVE_AUTH_TOKEN"
    assert len(set(names.values())) == len(names)


def test_readme_documents_every_setting() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [env for env in Settings.env_names().values() if f"`{env}`" not in readme]
    assert missing == []


def test_compose_file_matches_the_service_configuration() -> None:
    yaml = pytest.importorskip("yaml")  # PyYAML: a dev dependency, not the server's
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    neo4j, app = services["neo4j"], services["slowave-graph"]

    image, tag = neo4j["image"].split(":")
    assert image == "neo4j" and tag.startswith("2026.") and "latest" not in tag  # pinned
    assert any(str(p).endswith(":7687") for p in neo4j["ports"])
    assert "cypher-shell" in " ".join(neo4j["healthcheck"]["test"])
    assert neo4j["environment"]["NEO4J_dbms_usage__report_enabled"] == "false"

    env = app["environment"]
    known = set(Settings.env_names().values())
    assert set(env) <= known, set(env) - known
    assert env["NEO4J_URI"] == "bolt://neo4j:7687"
    assert env["SLOWAVE_HTTP_HOST"] == "0.0.0.0" and "SLOWAVE_AUTH_TOKEN" in env  # public bind needs a token
    assert app["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert any(str(p).endswith(f":{Settings().http_port}") for p in app["ports"])
    assert (ROOT / "docker" / app["build"]["context"] / app["build"]["dockerfile"]).resolve().is_file()
    auth = neo4j["environment"]["NEO4J_AUTH"]
    assert auth.startswith("neo4j/") and env["NEO4J_PASSWORD"] in auth
