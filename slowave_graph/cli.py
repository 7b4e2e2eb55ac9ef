"""`slowave-graph` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from slowave_graph import __version__
from slowave_graph.config import DEFAULT_NEO4J_VERSION, Settings
from slowave_graph.exceptions import SlowaveError

DESCRIPTION = """\
Long-term memory for AI agents over MCP, stored in Neo4j.

With NEO4J_URI unset, slowave-graph runs its own Neo4j Community server (fetched once from Maven
Central, data under SLOWAVE_DATA_DIR). Set NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD to use an existing
Neo4j, Aura or cluster instead."""

EPILOG = """\
examples:
  slowave-graph serve                       HTTP on http://127.0.0.1:8766/mcp (+ /health)
  slowave-graph serve --transport stdio     for MCP clients that spawn the server (or: stdio)
  slowave-graph neo4j start                 keep the managed Neo4j running between servers
  slowave-graph neo4j status                where it runs, its version, memory use, password file
  slowave-graph stats                       what the memory holds, per label and scope
  slowave-graph demo                        a scripted agent lifecycle against the running server
  slowave-graph demo seed                   a demo project memory to explore in notebooks/Cypher"""


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        neo4j_uri=getattr(args, "neo4j_uri", None),
        data_dir=getattr(args, "data_dir", None),
        cache_dir=getattr(args, "cache_dir", None),
        neo4j_version=getattr(args, "neo4j_version", None),
        neo4j_bolt_port=getattr(args, "bolt_port", None),
        http_host=getattr(args, "host", None),
        http_port=getattr(args, "port", None),
        log_level=getattr(args, "log_level", None),
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--neo4j-uri", help="use this Neo4j instead of the managed one (NEO4J_URI)")
    parser.add_argument("--data-dir", help="managed Neo4j data directory (SLOWAVE_DATA_DIR)")
    parser.add_argument("--cache-dir", help="jar cache directory (SLOWAVE_CACHE_DIR)")
    parser.add_argument(
        "--neo4j-version",
        help=f"managed Neo4j version (SLOWAVE_NEO4J_VERSION, default {DEFAULT_NEO4J_VERSION})",
    )
    parser.add_argument("--bolt-port", type=int, help="managed Neo4j Bolt port (SLOWAVE_NEO4J_BOLT_PORT)")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING … (SLOWAVE_LOG_LEVEL)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slowave-graph",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"slowave-graph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    from slowave_graph.commands import modules

    for module in modules():
        module.register(sub, _common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
    except Exception as exc:
        print(f"slowave-graph: bad configuration: {exc}", file=sys.stderr)
        return 2
    from slowave_graph import logs

    logs.configure(
        settings.log_level,
        settings.log_file,
        settings.log_max_bytes,
        settings.log_backups,
        settings.log_format,
    )

    try:
        return int(args.handler(args, settings))
    except SlowaveError as exc:  # raised on purpose, its message written for the person: no traceback
        print(f"slowave-graph: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
