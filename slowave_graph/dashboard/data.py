"""What the dashboard pages show, read through the named Cypher catalog (read transactions only).

Values come back as plain Python: Neo4j temporal values become ``datetime``; nothing is formatted
into query text — user input travels as parameters, and the full-text search only ever passes
quoted ``\\w+`` terms to Lucene.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from slowave_graph.graph.database import Database
from slowave_graph.graph.values import native
from slowave_graph.services.text import query_terms, scope_token

PAGE_SIZE = 50
# the index lists this many scopes, the fullest first; a larger store is searched by name
INDEX_SCOPES = 500
STATUSES = ("active", "stale", "suppressed")


async def _read(db: Database, name: str, **params: Any) -> list[dict[str, Any]]:
    return [native(row) for row in await db.run_read(name, **params)]


def search_query(text: str, scope: str) -> str | None:
    """Lucene query for a dashboard search: the scope's token required, the words ranked (BM25)."""
    terms = query_terms(text)
    if not terms:
        return None
    words = " ".join(f'"{term}"' for term in terms)
    return f"+scope_token:{scope_token(scope)}^0 +content:({words})"


async def scopes(
    db: Database, visible: Callable[[str], bool] | None = None, find: str = ""
) -> tuple[list[dict[str, Any]], int]:
    """The scopes the index lists, the fullest first (INDEX_SCOPES at most), and how many there are
    to list. ``visible``: the token's grant check; ``find``: only scope ids that contain it (case
    ignored). Both pick from every scope's id first, so a token granted a few scopes of a large
    store, or a person looking for one small scope among thousands, sees it rather than whichever
    of the fullest happen to match."""
    if visible is None and not find:
        total = (await _read(db, "stats_scope_count"))[0]["scopes"]
        return await _read(db, "stats_scopes", limit=INDEX_SCOPES, scope=None, scopes=None), total
    wanted = find.casefold()
    only = [
        scope
        for scope in (str(r["scope"]) for r in await _read(db, "export_scopes"))
        if (visible is None or visible(scope)) and wanted in scope.casefold()
    ]
    return await _read(db, "stats_scopes", limit=INDEX_SCOPES, scope=None, scopes=only), len(only)


async def memories(
    db: Database, scope: str, status: str | None, query: str, page: int
) -> tuple[list[dict[str, Any]], bool, dict[str, int]]:
    """(rows, more pages?, count per status) for the memories page."""
    counts = {r["status"]: r["count"] for r in await _read(db, "dashboard_memory_status_counts", scope=scope)}
    if query.strip():
        lucene = search_query(query, scope)
        if lucene is None:  # only stopwords or punctuation: nothing to search for
            return [], False, counts
        rows = await _read(
            db, "dashboard_memory_search", scope=scope, status=status, lucene=lucene, limit=200
        )
        return rows, False, counts
    rows = await _read(
        db, "dashboard_memories", scope=scope, status=status, skip=page * PAGE_SIZE, limit=PAGE_SIZE + 1
    )
    return rows[:PAGE_SIZE], len(rows) > PAGE_SIZE, counts


async def memory(db: Database, memory_id: str) -> dict[str, Any] | None:
    found = await _read(db, "dashboard_memory", id=memory_id)
    if not found:
        return None
    graph = (await _read(db, "dashboard_memory_neighbourhood", id=memory_id, limit=12))[0]
    return {
        **found[0],
        "provenance": await _read(db, "dashboard_memory_provenance", id=memory_id),
        "supersession": await _read(db, "dashboard_memory_supersession", id=memory_id),
        "ledger": await _read(db, "dashboard_memory_ledger", id=memory_id, limit=200),
        "concepts": await _read(db, "concepts_of_memory", id=memory_id),
        "corrections": await _read(db, "memory_corrections", id=memory_id),
        "graph": graph,
    }


async def maintenance_runs(db: Database) -> list[dict[str, Any]]:
    """The latest maintenance passes, newest first, with how long each took."""
    rows = await _read(db, "maintenance_runs", limit=50)
    for row in rows:
        started, finished = row.get("started_at"), row.get("finished_at")
        row["seconds"] = (finished - started).total_seconds() if started and finished else None
    return rows


async def memory_scope(db: Database, memory_id: str) -> str | None:
    """The scope of a memory (None: no such memory): a correction checks the token's grants on it."""
    found = await _read(db, "dashboard_memory", id=memory_id)
    return str(found[0]["memory"]["scope"]) if found else None


def _effective(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    accepted = [e for e in events if e.get("status") == "accepted"]
    return accepted[-1] if accepted else None


async def retrievals(db: Database, scope: str, page: int) -> tuple[list[dict[str, Any]], bool]:
    rows = await _read(db, "dashboard_retrievals", scope=scope, skip=page * PAGE_SIZE, limit=PAGE_SIZE + 1)
    return rows[:PAGE_SIZE], len(rows) > PAGE_SIZE


async def retrieval(db: Database, retrieval_id: str) -> dict[str, Any] | None:
    found = await _read(db, "dashboard_retrieval", id=retrieval_id)
    if not found:
        return None
    exposures = await _read(db, "dashboard_retrieval_exposures", id=retrieval_id)
    for item in exposures:
        item["effective"] = _effective(item["events"])
    return {**found[0], "exposures": exposures}


async def procedures(db: Database, scope: str) -> list[dict[str, Any]]:
    listed = await _read(db, "dashboard_procedures", scope=scope, limit=200)
    details = {d["id"]: d for d in await _read(db, "procedure_details", ids=[p["id"] for p in listed])}
    out = []
    for row in listed:
        detail = details.get(row["id"], {})
        context = detail.get("context")
        if isinstance(context, str):
            with contextlib.suppress(ValueError):  # shown as stored when it is not JSON
                context = json.loads(context)
        out.append({**detail, **row, "context": context})
    return out


async def sessions(db: Database, scope: str, page: int) -> tuple[list[dict[str, Any]], bool]:
    rows = await _read(db, "dashboard_sessions", scope=scope, skip=page * PAGE_SIZE, limit=PAGE_SIZE + 1)
    return rows[:PAGE_SIZE], len(rows) > PAGE_SIZE


async def session(db: Database, session_id: str) -> dict[str, Any] | None:
    found = await _read(db, "dashboard_session", id=session_id)
    if not found:
        return None
    timeline = await _read(db, "dashboard_session_timeline", id=session_id, limit=500)
    return {**found[0], "timeline": timeline}
