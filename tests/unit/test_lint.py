"""Style and types are part of the suite: ruff (lint + format) and mypy must be clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "slowave_graph", "tests"],
        ["ruff", "format", "--check", "slowave_graph", "tests"],
        # the cache lives in the virtualenv, outside the clone: a fresh clone on the same machine
        # rechecks only what changed (mypy validates each cached module against its source)
        ["mypy", "--cache-dir", str(BIN.parent / "mypy-cache")],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_clean(command: list[str]) -> None:
    pytest.importorskip(command[0], reason="a dev tool (the dev extra): not installed")
    proc = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
