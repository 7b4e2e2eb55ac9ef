"""make serve's launcher (scripts/launcher): `slowave-graph` in a new shell, through a link that
follows the runtime virtualenv when the dependencies change, and client entries that name it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slowave_graph.clients.spec import stdio_command

ROOT = Path(__file__).resolve().parents[2]


def fake_venv(where: Path) -> Path:
    """A virtualenv whose console script says which it is."""
    (where / "bin").mkdir(parents=True)
    script = where / "bin" / "slowave-graph"
    script.write_text(f'#!/bin/sh\necho "{where.name} $@"\n')
    script.chmod(0o755)
    return where


def install(venv: Path, home: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "SLOWAVE_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([ROOT / "scripts" / "launcher", str(venv)], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "", done  # scripts/venv's stdout is its path alone
    return done


def run(command: Path, *args: str) -> str:
    return subprocess.run([command, *args], capture_output=True, text=True, check=True).stdout


def test_the_launcher_follows_the_runtime_virtualenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, cache = tmp_path / "home", tmp_path / "cache"
    old, new = fake_venv(tmp_path / "venv-serve-1111"), fake_venv(tmp_path / "venv-serve-2222")
    launcher = home / ".local" / "bin" / "slowave-graph"

    first = install(old, home, cache)
    assert "not on PATH" in first.stderr  # and says how to add it
    assert run(launcher, "stdio") == "venv-serve-1111 stdio\n"
    install(new, home, cache)  # the dependencies changed: a new virtualenv, the same launcher
    assert run(launcher, "serve", "--transport", "stdio") == "venv-serve-2222 serve --transport stdio\n"

    # client entries name the launcher while it runs this installation, and only then
    monkeypatch.setattr(sys, "prefix", str(new))
    assert stdio_command(launcher) == (str(launcher), ("serve", "--transport", "stdio"))
    monkeypatch.setattr(sys, "prefix", str(old))
    assert stdio_command(launcher)[0] != str(launcher)


def test_someone_elses_slowave_graph_is_left_alone(tmp_path: Path) -> None:
    home, cache = tmp_path / "home", tmp_path / "cache"
    launcher = home / ".local" / "bin" / "slowave-graph"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/bin/sh\necho mine\n")
    os.chmod(launcher, 0o755)
    done = install(fake_venv(tmp_path / "venv-serve-3333"), home, cache)
    assert "not ours" in done.stderr and run(launcher) == "mine\n"
    assert run(cache / "venv-serve" / "bin" / "slowave-graph") == "venv-serve-3333 \n"  # the link is made
