"""The benchmarks, the demo and the notebooks' helpers are their own distribution (lab/): the
server's commands that run them say which package to install, before any work, when it is absent;
and the two distributions are released at one version."""

from __future__ import annotations

import argparse
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

import slowave_graph
import slowave_graph_lab
from slowave_graph.commands import bench, demo, soak
from slowave_graph.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_commands_of_the_lab_refuse_before_any_work_without_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("slowave_graph_lab") else found(name, *a),
    )

    def no_work(*_: object) -> None:
        raise AssertionError("the command ran")

    monkeypatch.setattr(bench, "_bench", no_work)
    monkeypatch.setattr(demo, "_run", no_work)
    monkeypatch.setattr(soak.asyncio, "run", no_work)
    monkeypatch.setattr(demo.asyncio, "run", no_work)
    args = argparse.Namespace(bench="consolidation", url=None, scope=None, clients=1, servers=1, duration=1.0)
    for handler in (bench.run, demo.run, demo.seed, soak.run):
        assert handler(args, Settings.from_env({})) == 2
        said = capsys.readouterr().err
        assert f"pip install slowave-graph-lab=={slowave_graph.__version__}" in said, said
        assert "Nothing was run" in said


def test_the_lab_is_released_at_the_servers_version() -> None:
    lab = tomllib.loads((ROOT / "lab" / "pyproject.toml").read_text())["project"]
    pins = [d.split("#")[0].strip() for d in lab["dependencies"]]
    assert f"slowave-graph=={slowave_graph.__version__}" in pins
    assert slowave_graph_lab.__version__ == slowave_graph.__version__


def test_the_server_package_imports_nothing_of_the_lab() -> None:
    """Outside commands that check for it first, no module of the server imports the lab."""
    checked = {"commands/bench.py", "commands/demo.py", "commands/soak.py"}
    for path in (ROOT / "slowave_graph").rglob("*.py"):
        if str(path.relative_to(ROOT / "slowave_graph")) in checked:
            continue
        assert not re.search(r"^\s*(from|import) slowave_graph_lab", path.read_text(), re.M), path
