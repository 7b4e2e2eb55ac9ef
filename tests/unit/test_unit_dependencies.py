"""tests/unit runs where only slowave-graph's runtime dependencies and pytest are installed. The
dev virtualenv has every extra, so an import of Playwright, Hypothesis or the lab package would
pass unnoticed in it: each module pytest loads for tests/unit is imported in a process that
refuses every other package (tests/support/runtime_only.py). Tests that need more live elsewhere:
tests/property (Hypothesis), tests/lab (the lab package), tests/integration (Neo4j)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

UNIT = Path(__file__).resolve().parent
ROOT = UNIT.parents[1]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_the_unit_tests_import_with_only_the_runtime_dependencies() -> None:
    conftests = [p for p in (ROOT / "tests" / "conftest.py", UNIT / "conftest.py") if p.exists()]
    modules = [module_name(p) for p in [*conftests, *sorted(UNIT.rglob("test_*.py"))]]
    run = [sys.executable, "-m", "tests.support.runtime_only", *modules]
    result = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
