"""A built wheel carries everything an installed server needs besides Python code: the Cypher
catalog, the managed-Neo4j launcher and pom, the dashboard's templates and stylesheet."""

from __future__ import annotations

import email
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from slowave_graph import __version__

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # built without isolation, so with the build backend installed here (the dev extra has it)
    pytest.importorskip("hatchling", reason="the build backend (the dev extra): not installed")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("slowave_graph-*.whl")
    return built


def test_wheel_carries_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    cypher = {f"slowave_graph/cypher/{p.name}" for p in (ROOT / "cypher").glob("*.cypher")}
    assert cypher and cypher <= names
    assert {"slowave_graph/neo4j_local/SlowaveNeo4j.java", "slowave_graph/neo4j_local/pom.xml"} <= names
    dashboard = ROOT / "slowave_graph" / "dashboard"
    data = {str(p.relative_to(ROOT)) for p in dashboard.rglob("*") if p.suffix in (".html", ".css")}
    assert data and data <= names


def test_wheel_metadata_and_entry_point(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    dist = f"slowave_graph-{__version__}.dist-info"
    metadata = email.message_from_string(archive.read(f"{dist}/METADATA").decode())
    assert (metadata["Name"], metadata["Version"]) == ("slowave-graph", __version__)
    requires = metadata.get_all("Requires-Dist")
    assert any(r.startswith("mcp==") for r in requires)
    assert any(r.startswith("neo4j~=") for r in requires)  # imported directly, so declared directly
    assert "slowave-graph = slowave_graph.cli:main" in archive.read(f"{dist}/entry_points.txt").decode()


def test_installed_wheel_finds_its_catalog_and_templates(wheel: Path, tmp_path: Path) -> None:
    """Installed (not from the checkout), the package reads the Cypher and templates it carries."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    probe = (
        "import slowave_graph.graph.cypher as c, slowave_graph.dashboard.web as w, slowave_graph.cli as cli;"
        "print(c.cypher_directory()); print(len(c.catalog().names()));"
        "print(w._environment().get_template('memory.html').filename);"
        "cli.main(['--version'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PYTHONPATH": str(target)},
        cwd=tmp_path,  # not the checkout: its slowave_graph/ would shadow the installed one
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    assert out[0] == str(target / "slowave_graph" / "cypher")
    assert int(out[1]) > 20
    assert out[2].startswith(str(target / "slowave_graph" / "dashboard" / "templates"))
    assert out[3] == f"slowave-graph {__version__}"
