"""`slowave-graph stats`: counts per label, relationship type and scope; index states; store size."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings


def register(sub: Any, common: Common) -> None:
    stats = sub.add_parser("stats", help="counts per label, relationship type and scope")
    stats.add_argument("--scope", help="only this scope's row (the totals stay whole-database)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    common(stats)
    stats.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    stats = asyncio.run(_stats(settings, args.scope))
    if args.scope and not stats["scopes"]:
        print(f"slowave-graph: no such scope: {args.scope}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        _print_stats(stats)
    return 0


async def _stats(settings: Settings, scope: str | None) -> dict[str, Any]:
    from slowave_graph.app import open_database
    from slowave_graph.graph.stats import collect_stats

    async with open_database(settings) as db:
        return await collect_stats(db, scope=scope)


def _print_stats(stats: dict[str, Any]) -> None:
    """Tables with the numbers in right-aligned columns under their names."""
    print(f"Neo4j {stats['neo4j_version']} — {stats['database']}")
    for title, counts in (("nodes", stats["labels"]), ("relationships", stats["relationships"])):
        print(f"{title}:")
        for name, count in counts.items():
            print(f"  {name:<16}{count:>10,}")
    columns = ("active", "stale", "sessions", "retrievals", "procedures", "concepts")
    print("scopes:")
    if not stats["scopes"]:
        print("  (none)")
    else:
        width = max(32, *(len(row["scope"]) for row in stats["scopes"]))
        print(f"  {'scope':<{width}}" + "".join(f"{c:>12}" for c in columns))
        for row in stats["scopes"]:
            print(f"  {row['scope']:<{width}}" + "".join(f"{row[c]:>12,}" for c in columns))
    indexes = stats.get("indexes", [])
    waiting = [i for i in indexes if i["state"] != "ONLINE"]
    print(f"indexes: {len(indexes)}, {'all online' if not waiting else f'{len(waiting)} not online:'}")
    for index in waiting:
        print(f"  {index['name']:<32} {index['state']} {index['populated']:.0f}%")
    store = stats.get("store")
    if store:
        mib = {k: store[k] / 2**20 for k in ("store_bytes", "transaction_log_bytes")}
        print(
            f"store: {mib['store_bytes']:.1f} MiB + {mib['transaction_log_bytes']:.1f} MiB "
            f"transaction logs ({store['path']})"
        )
