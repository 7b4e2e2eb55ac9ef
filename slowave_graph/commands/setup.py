"""`slowave-graph setup`: write this server into MCP clients' own configuration files.

Every edit is planned first (nothing is written if any file of a client cannot be edited safely),
keeps other servers and unrelated keys, backs the previous file up with a timestamp, and is
idempotent: a second run changes nothing and makes no backup. ``--dry-run`` prints unified diffs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slowave_graph.clients import CLIENTS, SetupError, apply, plan, spec_from_settings
from slowave_graph.clients.instructions import BLOCK
from slowave_graph.commands import Common
from slowave_graph.config import Settings


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "setup",
        help="configure MCP clients (Claude Code, Codex, Cursor, …) to use this server",
        description=(
            "Writes the slowave-graph MCP server into each client's own configuration file, and an "
            "agent-instruction block into its instruction file where it has one. Other servers and "
            "keys are kept; the previous file is backed up (<file>.bak-<timestamp>); running it "
            "again changes nothing."
        ),
    )
    parser.add_argument(
        "--client",
        action="append",
        choices=[*CLIENTS, "all"],
        help="client to configure (repeatable); 'all' = every client found in the home directory",
    )
    parser.add_argument(
        "--transport",
        choices=["http", "stdio"],
        default="http",
        help="http: clients connect to a running `slowave-graph serve` (default); stdio: clients "
        "spawn the server themselves",
    )
    parser.add_argument("--url", help="MCP endpoint for http (default http://127.0.0.1:<port>/mcp)")
    parser.add_argument("--host", help="HTTP host of the server (SLOWAVE_HTTP_HOST)")
    parser.add_argument("--port", type=int, help="HTTP port of the server (SLOWAVE_HTTP_PORT)")
    parser.add_argument("--dry-run", action="store_true", help="print the diffs, write nothing")
    parser.add_argument("--home", help="home directory to configure (default: yours)")
    parser.add_argument("--no-instructions", action="store_true", help="leave instruction files alone")
    parser.add_argument(
        "--print-instructions", action="store_true", help="print the agent-instruction block and exit"
    )
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.print_instructions:
        print(BLOCK, end="")
        return 0
    if not args.client:
        print("slowave-graph setup: name a client with --client (or --client all)", file=sys.stderr)
        return 2
    home = Path(args.home).expanduser() if args.home else Path.home()
    spec = spec_from_settings(settings, args.transport, args.url)
    if "all" in args.client:
        names = [name for name, client in CLIENTS.items() if client.installed(home)]
        if not names:
            print(f"no MCP client found under {home}; name one with --client", file=sys.stderr)
            return 1
    else:
        names = list(dict.fromkeys(args.client))
    failures = 0
    for name in names:
        client = CLIENTS[name]
        try:
            client_plan = plan(client, home, spec, instructions=not args.no_instructions)
        except SetupError as exc:
            print(f"✗ {client.title}: {exc}", file=sys.stderr)
            failures += 1
            continue
        for note in client_plan.notes:
            print(f"  note: {note}")
        for change in client_plan.changes:
            if not change.changed:
                print(f"= {client.title}: {change.path} already up to date")
            elif args.dry_run:
                print(f"~ {client.title}: would {'create' if change.old is None else 'change'} {change.path}")
                print(change.diff(), end="")
            else:
                backup = apply(change)
                saved = f" (previous version: {backup})" if backup else ""
                print(
                    f"✓ {client.title}: {'created' if change.old is None else 'updated'} {change.path}{saved}"
                )
    if spec.transport == "http" and not args.dry_run:
        print(f"clients connect to {spec.url}: keep `slowave-graph serve` running")
    return 1 if failures else 0
