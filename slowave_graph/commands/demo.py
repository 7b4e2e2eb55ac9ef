"""`slowave-graph demo run|seed`.

run (also plain `slowave-graph demo`): a scripted two-task lifecycle against a running HTTP server,
in a fresh demo:xxxxxx scope (forgotten afterwards with --cleanup).
seed: a realistic demo memory built by simulated agents through the services, for notebooks and
Cypher exploration (see slowave_graph_lab.demo.seed).
cleanup: forget the scopes of kind demo that runs and seeds left (a dry run without --yes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING

from slowave_graph import __version__
from slowave_graph.commands import Common, lab_missing, needs_lab
from slowave_graph.config import Settings

if TYPE_CHECKING:  # the command line starts without the driver
    from slowave_graph.graph.database import Database


def _run_options(parser: argparse.ArgumentParser, common: Common) -> None:
    parser.add_argument("--url", help="MCP endpoint (default http://SLOWAVE_HTTP_HOST:SLOWAVE_HTTP_PORT/mcp)")
    parser.add_argument("--scope", help="scope to use (default: a fresh demo:xxxxxx)")
    parser.add_argument(
        "--cleanup",
        action="store_true",
        help="forget the demo's scope when it is done (reaches Neo4j with the settings, as `forget` does)",
    )
    common(parser)  # where Neo4j is, for --cleanup


def _tasks(value: str) -> int:
    number = int(value)
    if lab_missing("demo seed") is not None:
        return number  # the command itself says what to install
    from slowave_graph_lab.demo.seed import MIN_TASKS

    if number < MIN_TASKS:
        raise argparse.ArgumentTypeError(f"the demo needs at least {MIN_TASKS} tasks")
    return number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Common) -> None:
    demo = sub.add_parser(
        "demo",
        help="a scripted lifecycle against a running server (run), or a demo memory to explore (seed)",
        description="Without an action: `run`.",
    )
    _run_options(demo, common)
    demo.set_defaults(handler=run)
    actions = demo.add_subparsers(dest="demo_action", metavar="ACTION")

    run_parser = actions.add_parser("run", help="a scripted two-task lifecycle against a running HTTP server")
    _run_options(run_parser, common)
    run_parser.set_defaults(handler=run)

    seed_parser = actions.add_parser(
        "seed",
        help="seed a demo software-project memory through the real services (for notebooks and Cypher)",
        description="Simulated agents work on a software project through activate, remember, recall, "
        "feedback and commit, leaving a real feedback ledger, salience, co-use associations, procedures "
        "with outcomes and supersessions. Deterministic schedule for a given --seed.",
    )
    seed_parser.add_argument("--scope", default=None, help="scope to seed (default demo:harbor)")
    seed_parser.add_argument("--tasks", type=_tasks, default=None, help="number of agent tasks (default 30)")
    seed_parser.add_argument("--seed", type=int, default=42, help="random seed of the schedule (default 42)")
    seed_parser.add_argument(
        "--force", action="store_true", help="delete the demo already in the scope and seed it again"
    )
    seed_parser.add_argument("--json", action="store_true", help="print the result as JSON")
    common(seed_parser)
    seed_parser.set_defaults(handler=seed)

    cleanup_parser = actions.add_parser(
        "cleanup",
        help="forget every scope of kind demo (what demo runs and seeds left); a dry run without --yes",
    )
    cleanup_parser.add_argument("--yes", action="store_true", help="forget them (otherwise only list them)")
    cleanup_parser.add_argument("--json", action="store_true", help="print the result as JSON")
    common(cleanup_parser)
    cleanup_parser.set_defaults(handler=cleanup)


@needs_lab("demo")
def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph_lab.demo.lifecycle import new_demo_scope

    scope = args.scope or new_demo_scope()
    failed = asyncio.run(_run(settings, args.url, scope))
    if not args.cleanup:
        print(
            f"\nThe demo's memories stay in {scope} (the dashboard marks it as a demo scope); "
            f"`slowave-graph forget --scope {scope} --yes` removes them, `slowave-graph demo cleanup --yes` "
            "every demo scope."
        )
        return failed
    from slowave_graph.app import open_database

    async def forget_it() -> list[str]:
        async with open_database(settings) as db:
            return await _forget(db, [scope])

    try:
        forgotten = asyncio.run(forget_it())
    except Exception as exc:  # the demo's own outcome stands; say how to finish the cleanup
        print(
            f"could not forget {scope}: {exc!r}; run `slowave-graph forget --scope {scope} --yes`",
            file=sys.stderr,
        )
        return 1
    if forgotten:
        print(f"\nforgot {scope}")
    return failed


async def _forget(db: Database, scopes: list[str]) -> list[str]:
    """Forget each scope that exists; returns those forgotten."""
    from slowave_graph.operator.forget import UnknownTarget, forget

    done = []
    for scope in scopes:
        try:
            await forget(db, scope=scope)
        except UnknownTarget:  # a run that failed before its first write
            continue
        done.append(scope)
    return done


def cleanup(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.app import open_database
    from slowave_graph.contract.common import is_demo_scope

    async def main() -> tuple[list[str], list[str]]:
        async with open_database(settings) as db:
            rows = await db.run_read("export_scopes")
            scopes = [str(r["scope"]) for r in rows if is_demo_scope(str(r["scope"]))]
            return scopes, await _forget(db, scopes) if args.yes else []

    scopes, forgotten = asyncio.run(main())
    if args.json:
        print(json.dumps({"demo_scopes": scopes, "forgotten": forgotten}, indent=2))
    elif not scopes:
        print("no demo scopes")
    elif args.yes:
        print("forgot " + ", ".join(forgotten))
    else:
        print("demo scopes (forget them with --yes): " + ", ".join(scopes))
    return 0


async def _run(settings: Settings, url: str | None, scope: str) -> int:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    from slowave_graph_lab.demo.lifecycle import DemoFailed, run_demo

    url = url or f"http://{settings.http_host}:{settings.http_port}/mcp"
    token = settings.auth_token.get_secret_value() if settings.auth_token else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(url, http_client=http)
            info = Implementation(name="slowave-graph-demo", version=__version__)
            async with Client(transport, client_info=info) as client:
                await run_demo(client, scope)
    except DemoFailed as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(
            f"cannot run the demo against {url}: {exc!r} — is `slowave-graph serve` running?", file=sys.stderr
        )
        return 1
    return 0


@needs_lab("demo seed")
def seed(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph_lab.demo.seed import DEFAULT_SCOPE, DEFAULT_TASKS, DemoScopeInUse, describe, seed_scope

    quiet = args.json
    try:
        result = asyncio.run(
            seed_scope(
                settings,
                args.scope or DEFAULT_SCOPE,
                args.tasks or DEFAULT_TASKS,
                args.seed,
                args.force,
                say=(lambda _: None) if quiet else print,
            )
        )
    except DemoScopeInUse as exc:
        print(f"slowave-graph: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, default=str) if quiet else describe(result))
    return 0
