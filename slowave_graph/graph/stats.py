"""`slowave-graph stats`: counts per label, relationship type and scope."""

from __future__ import annotations

from typing import Any

from slowave_graph.graph.database import Database
from slowave_graph.graph.schema import server_info


async def collect_stats(db: Database, scope_limit: int = 200) -> dict[str, Any]:
    labels = (await db.run_read("stats_labels"))[0]
    relationships = (await db.run_read("stats_relationships"))[0]
    scopes = await db.run_read("stats_scopes", limit=scope_limit)
    info = await server_info(db)
    return {
        "neo4j_version": f"{info.version} {info.edition}",
        "database": db.database,
        "labels": labels,
        "relationships": relationships,
        "scopes": scopes,
    }
