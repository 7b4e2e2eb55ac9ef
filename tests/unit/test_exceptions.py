"""Every exception slowave_graph defines derives from its one root, ``SlowaveError``, so the command
line can answer any of them with a line instead of a traceback (cli.main)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

import slowave_graph
from slowave_graph import cli, logs
from slowave_graph.commands import stats
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.errors import DatabaseUnavailable

PACKAGE = Path(slowave_graph.__file__).resolve().parent


def package_modules() -> list[str]:
    """Every module of the package, found by walking its files (``graph/`` is a namespace package,
    which pkgutil does not descend into); ``__main__`` is left out, since importing it runs the CLI."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def defined_exceptions() -> list[type[BaseException]]:
    found = []
    for name in package_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found.append(value)
    return found


def test_every_exception_the_package_defines_derives_from_the_root() -> None:
    found = defined_exceptions()
    assert len(found) > 20
    assert [f"{e.__module__}.{e.__qualname__}" for e in found if not issubclass(e, SlowaveError)] == []


def test_the_command_line_answers_the_root_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable(*_: object) -> int:
        raise DatabaseUnavailable("Neo4j did not answer")

    monkeypatch.setattr(stats, "run", unavailable)
    monkeypatch.setattr(logs, "configure", lambda *_: None)
    assert cli.main(["stats"]) == 1
    assert capsys.readouterr().err == "slowave-graph: Neo4j did not answer\n"
