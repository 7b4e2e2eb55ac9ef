"""`slowave-graph stats`: counts per label, relationship type and scope; index states; store size."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from neo4j.exceptions import Neo4jError

from slowave_graph.graph.database import Database
from slowave_graph.graph.schema import server_info

log = logging.getLogger(__name__)


async def collect_stats(db: Database, scope_limit: int = 200, scope: str | None = None) -> dict[str, Any]:
    """Whole-database counts, and the scopes' (only ``scope``'s when given)."""
    labels = (await db.run_read("stats_labels"))[0]
    relationships = (await db.run_read("stats_relationships"))[0]
    scopes = await db.run_read("stats_scopes", limit=scope_limit, scope=scope, scopes=None)
    info = await server_info(db)
    indexes = await db.run_read("stats_indexes")
    return {
        "neo4j_version": f"{info.version} {info.edition}",
        "database": db.database,
        "labels": labels,
        "relationships": relationships,
        "scopes": scopes,
        "indexes": [
            {k: r[k] for k in ("name", "type", "state", "populated", "labels", "properties")} for r in indexes
        ],
        "store": await store_size(db),
    }


def _bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:  # a file rotated away while we walk
                continue
    return total


async def store_size(db: Database) -> dict[str, Any] | None:
    """Bytes of the database's store and transaction logs, when the server's directories are
    visible from here (a local or managed Neo4j); None for a remote server (or without the
    privilege to read its configuration)."""
    try:
        found = {r["name"]: r["value"] for r in await db.run_read("stats_directories")}
    except Neo4jError as exc:
        log.debug("server directories not readable: %s", exc)
        return None
    store = Path(found.get("server.directories.data", "")) / "databases" / db.database
    logs = Path(found.get("server.directories.transaction.logs.root", "")) / db.database
    if not store.is_dir():
        return None
    store_bytes, log_bytes = _bytes(store), _bytes(logs) if logs.is_dir() else 0
    return {"path": str(store), "store_bytes": store_bytes, "transaction_log_bytes": log_bytes,
            "total_bytes": store_bytes + log_bytes}  # fmt: skip
