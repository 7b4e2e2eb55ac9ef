"""The notebooks in notebooks/: committed without outputs, and every one runs headless against a
real Neo4j (a freshly seeded demo scope), without a cell error, drawing at least one figure."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from slowave_graph.app import App
from slowave_graph_lab.notebooks import SCOPE_ENV
from tests.support.demo_helpers import shared_demo
from tests.support.neo4j import Neo4jTarget

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebooks_carry_no_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (path.name, cell.source[:80])


@pytest.fixture(scope="module")
async def demo_scope(app: App) -> str:
    return str((await shared_demo(app))["scope"])


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A kernelspec that runs this interpreter (the venv's), whatever kernels the machine has."""
    directory = tmp_path_factory.mktemp("kernels")
    spec = directory / "slowave-python" / "kernel.json"
    spec.parent.mkdir()
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.write_text(json.dumps({"argv": argv, "display_name": "slowave-graph", "language": "python"}))
    yield directory


@pytest.mark.neo4j
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_headless(path: Path, demo_scope: str, neo4j: Neo4jTarget, kernel_dir: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    env = {**neo4j.env(), SCOPE_ENV: demo_scope, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path.parents[1]), os.environ.get("PYTHONPATH")]))
    manager = AsyncKernelManager(
        kernel_name="slowave-python", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    )
    client = NotebookClient(
        notebook, km=manager, timeout=120, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute(env=env)  # raises CellExecutionError on the first failing cell

    outputs: list[dict[str, Any]] = [o for c in notebook.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} drew no figure"
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert demo_scope in text  # it looked at the scope it was given, not the default one
    if path.stem == "02_feedback_and_salience":  # neomodel objects followed a supersession to its events
        assert " supersedes " in text and " ← evt_" in text, text[-2000:]
