"""The package's layers, written once: every import points down.

A unit is a top-level module or subpackage of ``slowave_graph``. A module may import from its own
unit and from units in lower layers; units in one layer are peers and import nothing of each
other. Imports inside functions and under ``TYPE_CHECKING`` count too: a lazy import is still a
dependency, only a later one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import slowave_graph

PACKAGE = Path(slowave_graph.__file__).parent

# Bottom first. Why each sits where it does:
LAYERS: list[set[str]] = [
    # the version, the root exception, the tool contract (pure pydantic), counters and timers
    {"__init__", "exceptions", "contract", "telemetry"},
    {"logs", "embedding"},
    {"config"},  # settings name the embedding models
    {"graph", "neo4j_local"},  # the store and named Cypher; the managed server's launcher
    {"errors"},  # what the agent is told, including the store's refusals
    {"services"},  # the five tools' logic over the store
    # who may call (tokens, grants), the analyst's Cypher catalog, MCP client set-up files
    {"access", "explore", "clients"},
    {"app"},  # assembly: settings → Neo4j → schema → embedder → services
    {"operator"},  # export, import, maintenance, forget, audit … on an assembled app
    {"mcp", "dashboard"},  # two faces of one app, mounted side by side by the serve command
    {"workload"},  # synthetic stores and lifecycles driven through the MCP server
    {"commands"},
    {"cli"},
    {"__main__"},
]
# The benchmarks and the demo live in slowave-graph-lab, an optional package that depends on this
# one; only the commands that run them may import it (lazily, when it is installed).
PLUGINS = {"slowave_graph_lab": {"commands"}}


def _rank() -> dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, module: str) -> list[str]:
    """Absolute names of what ``module`` (at ``path``) imports, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.append(".".join([*base, node.module] if node.module else base))
            else:
                found.append(node.module or "")
    return found


def violations(module: str, imported: list[str]) -> list[str]:
    rank = _rank()
    unit = _unit(module)
    wrong: list[str] = []
    for name in imported:
        top = name.split(".")[0]
        if top in PLUGINS:
            if unit not in PLUGINS[top]:
                wrong.append(f"{module} -> {name} (only {sorted(PLUGINS[top])} may)")
            continue
        if top != "slowave_graph":
            continue
        target = _unit(name)
        if target == unit:
            continue
        if target not in rank or unit not in rank:
            wrong.append(f"{module} -> {name} (unit not placed in LAYERS)")
        elif rank[target] >= rank[unit]:
            wrong.append(f"{module} -> {name} ({target} is not below {unit})")
    return wrong


def upward_imports() -> list[str]:
    wrong: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        wrong += violations(module, _imported(path, module))
    return wrong


def test_every_unit_has_a_layer() -> None:
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if p.suffix == ".py" or (p.is_dir() and any(p.glob("*.py")))}  # fmt: skip
    assert units == set(_rank()), (units - set(_rank()), set(_rank()) - units)


def test_every_import_points_down() -> None:
    assert upward_imports() == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """Relative and lazy imports are resolved, so an upward one cannot hide; peers are refused."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from . import ranking\n"
        "def f():\n    from ..app import App\n    from slowave_graph.access import tokens\n"
        "import slowave_graph_lab.bench\n"
    )
    imported = _imported(probe, "slowave_graph.services.probe")
    assert sorted(imported) == ["slowave_graph.access", "slowave_graph.app", "slowave_graph.services",
                                "slowave_graph_lab.bench"]  # fmt: skip
    assert len(violations("slowave_graph.services.probe", imported)) == 3
    assert violations("slowave_graph.mcp.server", ["slowave_graph.dashboard"])  # peers
    assert violations("slowave_graph.commands.bench", ["slowave_graph_lab.bench", "slowave_graph.app"]) == []
