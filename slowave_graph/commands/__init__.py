"""Every subcommand of `slowave-graph`, one module per feature (cli.py only builds the parser from
them and dispatches).

Each module here exposes ``register(sub, common)``: it adds its parser(s) to the CLI's subparsers,
calls ``common(parser)`` for the shared connection flags, and sets ``handler=<callable>`` with
``parser.set_defaults``. The handler takes ``(args, settings)`` and returns the exit code.
"""

from __future__ import annotations

import argparse
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
]
