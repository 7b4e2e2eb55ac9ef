"""A benchmark that plots needs the bench extra: without it the command says so before any work
(the runtime install has no matplotlib)."""

from __future__ import annotations

import argparse
import importlib.util

import pytest

from slowave_graph.commands import bench
from slowave_graph.config import Settings


def test_a_plotting_benchmark_without_matplotlib_refuses_before_any_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else found(name, *a)
    )

    def no_work(*_: object) -> None:
        raise AssertionError("the benchmark ran")

    monkeypatch.setattr(bench, "_bench", no_work)
    for name in bench.PLOTTED:
        assert bench.run(argparse.Namespace(bench=name), Settings.from_env({})) == 2
        assert "pip install 'slowave-graph[bench]'" in capsys.readouterr().err
    assert bench.missing_extra("consolidation") is None  # draws nothing: runs anywhere
