"""`slowave-graph maintain --once [--scope S] [--json]`: one maintenance pass now.

The pass a server runs in the background every SLOWAVE_MAINTENANCE_INTERVAL (operator/maintenance.py):
near-duplicates and updates linked among memories never judged, co-use weights decayed, stale
learned marks cleared, recorded as a (:MaintenanceRun). Exit status 0 when it completed, 1 when it
failed, 75 (EX_TEMPFAIL: try again later) when another pass holds the lease and nothing was done.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.operator.maintenance import MaintenanceRun

BUSY = 75  # sysexits.h EX_TEMPFAIL


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "maintain",
        help="run the maintenance pass once (servers run it every SLOWAVE_MAINTENANCE_INTERVAL)",
        description="Runs one maintenance pass: links near-duplicates and updates among memories "
        "stored without that judgement (consolidation off, or an older version), stores co-use "
        "weights decayed by age (SLOWAVE_CO_USE_HALF_LIFE_DAYS), clears learned marks on retrievals "
        "that hold no lesson. Only one pass runs at a time per database: when a server's pass is "
        "running this one does nothing and exits 75. Each pass is recorded as a (:MaintenanceRun) "
        "node with its counts.",
    )
    parser.add_argument("--once", action="store_true", help="run one pass and exit (required)")
    parser.add_argument("--scope", metavar="KIND:ID", help="only this scope (default: the whole database)")
    parser.add_argument("--json", action="store_true", help="print the run as JSON")
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from neo4j.exceptions import Neo4jError

    from slowave_graph.app import open_app
    from slowave_graph.operator.forget import actor
    from slowave_graph.operator.maintenance import LeaseHeld, LeaseLost, run_pass

    if not args.once:
        print(
            "slowave-graph: maintain runs one pass: add --once (servers run it every "
            "SLOWAVE_MAINTENANCE_INTERVAL seconds)",
            file=sys.stderr,
        )
        return 2

    async def main() -> MaintenanceRun:
        async with open_app(settings) as app:
            return await run_pass(app, actor=actor(), scope=args.scope, show_progress=not args.json)

    try:
        result = asyncio.run(main())
    except LeaseHeld as held:
        if args.json:
            until = held.expires_at.isoformat() if held.expires_at else None
            print(json.dumps({"status": "busy", "holder": held.holder, "expires_at": until}, indent=2))
        print(f"slowave-graph: {held}; nothing done, try again later", file=sys.stderr)
        return BUSY
    except (LeaseLost, Neo4jError) as exc:  # the run's record says failed; the connection errors are cli.py's
        print(f"slowave-graph: the maintenance pass failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.as_dict(), indent=2) if args.json else text(result))
    return 0


def text(run: MaintenanceRun) -> str:
    where = f"scope {run.scope}" if run.scope else "the whole database"
    lines = [
        f"maintenance pass over {where}: {run.status} in {run.seconds or 0.0:.1f} s",
        f"  {'memories judged':<34}{run.memories_checked:>8}",
        f"  {'near-duplicates linked':<34}{run.linked_duplicates:>8}",
        f"  {'updates linked':<34}{run.linked_updates:>8}",
        f"  {'co-use weights decayed':<34}{run.associations_decayed:>8}"
        + (f"  (half-life {run.half_life_days:g} days)" if run.half_life_days else "  (no decay)"),
        f"  {'stale learned marks cleared':<34}{run.learned_cleared:>8}",
        f"recorded as (:MaintenanceRun {{id: '{run.id}'}}) — {run.actor} on {run.host}",
    ]
    return "\n".join(lines)
