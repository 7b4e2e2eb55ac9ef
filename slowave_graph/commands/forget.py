"""`slowave-graph forget --scope S | --memory ID [--yes]`: delete a scope or one memory for good.

A dry run unless ``--yes``: it prints what would be deleted and changes nothing. ``--yes`` deletes
it in one transaction and leaves an audit record (operator/forget.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.operator.forget import Forgetting

# What the changes to what stays mean (forget_memory in cypher/admin.cypher).
UPDATED = {
    "next_bridged": "NEXT neighbours linked to each other instead",
    "retrieval_catalogs": "frozen catalogs that listed it (its place kept as 'forgotten')",
    "coverage_declarations": "complete-feedback declarations that counted its exposure",
    "session_heads": "sessions whose last remembered memory it was",
    "concept_counts": "concepts that stay, counted one active memory fewer",
}


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "forget",
        help="delete a scope or one memory and everything only it owns (dry run unless --yes)",
        description="Deletes a whole scope (--scope) or one memory (--memory, optionally with --scope "
        "to insist on its scope) with everything that belongs only to it, in one transaction, and "
        "records who forgot what and when (a :Forgetting node, never the content). Without --yes "
        "it only prints what would go.",
    )
    parser.add_argument("--scope", metavar="KIND:ID", help="the scope to forget (with --memory: its scope)")
    parser.add_argument("--memory", metavar="ID", help="the memory to forget, e.g. sch_12")
    parser.add_argument("--yes", action="store_true", help="really delete (default: a dry run)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.app import open_database
    from slowave_graph.operator.forget import UnknownTarget, forget, plan

    if args.scope is None and args.memory is None:
        print("slowave-graph: forget needs --scope or --memory", file=sys.stderr)
        return 2

    async def main() -> Forgetting:
        async with open_database(settings) as db:
            if args.yes:
                return await forget(db, scope=args.scope, memory=args.memory)
            return await plan(db, scope=args.scope, memory=args.memory)

    try:
        result = asyncio.run(main())
    except UnknownTarget as exc:
        print(f"slowave-graph: {exc}; nothing changed", file=sys.stderr)
        return 1
    print(json.dumps(result.as_dict(), indent=2) if args.json else text(result))
    return 0


def text(result: Forgetting) -> str:
    """A small table: nodes per label, relationships per type, then what stays but changes."""
    what = f"{result.target} {result.target_id}"
    if result.target == "memory":
        what += f" (scope {result.scope})"
    if result.done:
        lines = [f"forgot {what}: deleted"]
    else:
        lines = [f"dry run, nothing changed (add --yes to forget it) — forgetting {what} would delete:"]
    lines.append(f"  {'nodes':<24}{result.total_nodes:>8}")
    lines.extend(f"    {label:<22}{count:>8}" for label, count in sorted(result.nodes.items()))
    lines.append(f"  {'relationships':<24}{result.total_relationships:>8}")
    lines.extend(f"    {kind:<22}{count:>8}" for kind, count in sorted(result.relationships.items()))
    changed = {k: v for k, v in result.updated.items() if v}
    if changed:
        lines.append("  and changed what stays:" if result.done else "  and would change what stays:")
        lines.extend(f"    {UPDATED.get(k, k):<62}{v:>4}" for k, v in changed.items())
    if result.record is not None:
        r = result.record
        lines.append(
            f"recorded as (:Forgetting {{id: '{r['id']}'}}) — {r['actor']} on {r['host']} at {r['at']}"
        )
    return "\n".join(lines)
