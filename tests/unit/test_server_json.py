"""server.json (the MCP registry entry) agrees with the package: version, name, transports, and
every environment variable the configuration reads."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from slowave_graph import __version__
from slowave_graph.cli import build_parser
from slowave_graph.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SERVER = json.loads((ROOT / "server.json").read_text())
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_registry_fields() -> None:
    assert SERVER["$schema"] == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    assert re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/slowave-graph", SERVER["name"])
    assert 0 < len(SERVER["description"]) <= 100 and SERVER["description"] == PROJECT["description"]
    assert SERVER["version"] == __version__
    # PyPI ownership: the registry looks for "mcp-name: <name>" in the package's README.
    assert f"mcp-name: {SERVER['name']}" in (ROOT / PROJECT["readme"]).read_text()


def test_packages_are_this_pypi_package_in_both_transports() -> None:
    packages = SERVER["packages"]
    assert {p["transport"]["type"] for p in packages} == {"stdio", "streamable-http"}
    for package in packages:
        assert {"registryType", "identifier", "version", "transport"} <= set(package)
        assert (package["registryType"], package["identifier"]) == ("pypi", PROJECT["name"])
        assert package["version"] == __version__
        argv = [
            a["value"] if a["type"] == "positional" else f"{a['name']}={a['value']}"
            for a in package["packageArguments"]
        ]
        args = build_parser().parse_args(argv)  # the arguments run the real CLI
        assert (args.command, args.transport) == (
            "serve",
            "stdio" if package["transport"]["type"] == "stdio" else "http",
        )
    http = next(p for p in packages if p["transport"]["type"] == "streamable-http")
    assert http["transport"]["url"] == "http://127.0.0.1:{SLOWAVE_HTTP_PORT}/mcp"


def _defaults() -> dict[str, Any]:
    settings = Settings.from_env({})
    return {var: getattr(settings, field) for field, var in Settings.env_names().items()}


def test_environment_variables_are_exactly_the_settings() -> None:
    names = set(Settings.env_names().values())
    defaults = _defaults()
    for package in SERVER["packages"]:
        variables = {v["name"]: v for v in package["environmentVariables"]}
        assert set(variables) == names
        assert {n for n, v in variables.items() if v.get("isSecret")} == {
            "NEO4J_PASSWORD",
            "SLOWAVE_AUTH_TOKEN",
        }
        described = {
            var: Settings.model_fields[field].description for field, var in Settings.env_names().items()
        }
        for name, variable in variables.items():
            assert variable["description"] == described[name], name  # one text: the setting's own
            if "default" in variable:
                value = defaults[name]
                assert variable["default"] == (
                    str(value).lower() if isinstance(value, bool) else str(value)
                ), name
        assert variables["SLOWAVE_HTTP_PORT"]["default"] == str(Settings().http_port)
