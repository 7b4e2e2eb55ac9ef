"""Import modules as a machine with only the runtime dependencies would.

    python -m tests.support.runtime_only MODULE...

The unit tests must run where only slowave-graph's own dependencies (pyproject's ``[project]
dependencies``, no extras) and pytest with pytest-asyncio are installed. The dev virtualenv has
every extra, so an import of a dev-only package (Playwright, Hypothesis, the lab package, ...) would
pass unnoticed there, also one reached through a helper or a ``slowave_graph`` module. This
installs an import finder that refuses every top-level module belonging to no distribution of
that closure (the standard library and this repository's ``slowave_graph`` and ``tests`` are
allowed), then imports each MODULE. A refused import raises ModuleNotFoundError, as on such a
machine, so code that copes with a missing optional package still passes. Exit status 1 and one
line per module that failed to import.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import sys
import sysconfig
import tomllib
import types
from collections.abc import Iterable, Sequence
from pathlib import Path

from packaging.requirements import Requirement  # pytest's own dependency
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"slowave_graph", "tests"}
TEST_RUNNER = ["pytest", "pytest-asyncio"]


def runtime_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *TEST_RUNNER]


def closure(requirements: Iterable[str]) -> set[str]:
    """The installed distributions these requirements bring in, their extras followed too."""
    found: set[str] = set()
    todo = [(Requirement(text), {""}) for text in requirements]
    while todo:
        requirement, extras = todo.pop()
        if requirement.marker and not any(requirement.marker.evaluate({"extra": e}) for e in extras):
            continue
        name = canonicalize_name(requirement.name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it can be imported either
        wanted = {"", *requirement.extras}
        if name in found and not requirement.extras:
            continue
        found.add(name)
        todo.extend((Requirement(text), wanted) for text in requires)
    return found


def allowed_modules(distributions: set[str]) -> set[str]:
    by_module = importlib.metadata.packages_distributions()
    allowed = {
        m for m, names in by_module.items() if any(canonicalize_name(n) in distributions for n in names)
    }
    return allowed | set(sys.stdlib_module_names) | FIRST_PARTY


class Refuse(importlib.abc.MetaPathFinder):
    """First on the meta path: a top-level module outside the allowed set is not there."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top not in self.allowed and not in_stdlib(top):
            raise ModuleNotFoundError(f"{top} is not a runtime dependency", name=fullname)
        return None


def in_stdlib(module: str) -> bool:
    """A module of the standard library that sys.stdlib_module_names leaves out, such as the
    platform's _sysconfigdata_*: found in the base interpreter's library folders, outside their
    site-packages (a virtualenv's own folders hold only installed packages)."""
    spec = importlib.machinery.PathFinder.find_spec(module)
    if spec is None or not spec.origin:
        return False
    origin = Path(spec.origin)
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    folders = {Path(sysconfig.get_path(name, vars=base)) for name in ("stdlib", "platstdlib")}
    return "site-packages" not in origin.parts and any(origin.is_relative_to(f) for f in folders)


def main(modules: list[str]) -> int:
    sys.meta_path.insert(0, Refuse(allowed_modules(closure(runtime_requirements()))))
    failures = 0
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure to import is a finding
            failures += 1
            print(f"{module}: {type(error).__name__}: {error}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
