"""`slowave-graph audit`: check the graph's invariants; exit 1 on any violation.

Read-only. The checks (ledger, exposures, sessions, commits, provenance, ids, scope isolation) are
described in ``cypher/audit.cypher``; ``slowave_graph.operator.audit`` runs them.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from slowave_graph.commands import Common
from slowave_graph.config import Settings


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "audit",
        help="check the graph's invariants (ledger, exposures, sessions, provenance, ids, scope isolation)",
    )
    parser.add_argument(
        "--scope",
        action="append",
        metavar="KIND:ID",
        help="audit only this scope (repeatable; default: the whole database)",
    )
    parser.add_argument("--limit", type=int, default=50, help="violations listed per check (default 50)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.app import open_database
    from slowave_graph.operator.audit import audit

    async def main() -> int:
        async with open_database(settings) as db:
            report = await audit(db, args.scope, limit=max(1, args.limit))
        print(json.dumps(report.as_dict(), indent=2) if args.json else report.text())
        return 0 if report.ok else 1

    return asyncio.run(main())
