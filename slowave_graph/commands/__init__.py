"""Every subcommand of `slowave-graph`, one module per feature (cli.py only builds the parser from
them and dispatches).

Each module here exposes ``register(sub, common)``: it adds its parser(s) to the CLI's subparsers,
calls ``common(parser)`` for the shared connection flags, and sets ``handler=<callable>`` with
``parser.set_defaults``. The handler takes ``(args, settings)`` and returns the exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from types import ModuleType

from slowave_graph.config import Settings

Handler = Callable[[argparse.Namespace, Settings], int]
Common = Callable[[argparse.ArgumentParser], None]


def modules() -> list[ModuleType]:
    """The command modules, imported lazily so `slowave-graph --help` stays fast."""
    from importlib import import_module

    return [import_module(f"slowave_graph.commands.{name}") for name in COMMAND_MODULES]


# One entry per feature module in this package (each registers its own subcommands).
COMMAND_MODULES: list[str] = [
    "serve",
    "neo4j",
    "bench",
    "stats",
    "setup",
    "doctor",
    "dashboard",
    "audit",
    "soak",
    "demo",
    "cypher",
    "data",
    "forget",
    "maintain",
    "memory",
    "token",
    "service",
]


# The benchmarks, the demo and the notebooks' helpers are their own distribution (lab/): the
# server's package stays the server and the operator commands.
LAB_DISTRIBUTION = "slowave-graph-lab"


def lab_missing(command: str) -> str | None:
    """Why ``command`` cannot run in this install (slowave-graph-lab is absent), or None."""
    import importlib.util

    if importlib.util.find_spec("slowave_graph_lab") is not None:
        return None
    from slowave_graph import __version__

    return (
        f"slowave-graph {command} comes with the {LAB_DISTRIBUTION} package, which this install lacks: "
        f"pip install {LAB_DISTRIBUTION}=={__version__} (in a clone, scripts/venv dev has it). "
        "Nothing was run."
    )


def needs_lab(command: str) -> Callable[[Handler], Handler]:
    """A handler that says which package to install, before any work, when the lab is absent."""

    def wrap(handler: Handler) -> Handler:
        def run(args: argparse.Namespace, settings: Settings) -> int:
            missing = lab_missing(command)
            if missing is not None:
                print(missing, file=sys.stderr)
                return 2
            return handler(args, settings)

        return run

    return wrap
