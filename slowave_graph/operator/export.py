"""`slowave-graph export`: the graph (or some scopes of it) as JSON Lines, streamed.

Layout of the file, one JSON object per line::

    {"format": "slowave-graph-export", "version": 1, "embedding": {...}, "neo4j": ..., ...}
    {"counter": "memory", "value": 1234}                       the id counters
    {"node": "Memory", "props": {...}}                          nodes of scope 1, then its
    {"rel": "DERIVED_FROM", "from": [label, id], "to": [label, id], "props": {...}}   relationships
    ...                                                         scope 2, …
    {"rel": "VALIDATED_IN", "from": ["Memory", id], "to": ["Scope", id], ...}   then what joins
                                                                two exported scopes (lessons)
    {"summary": {"nodes": {...}, "relationships": {...}, "checksum": "sha256sum:…"}}

Each scope is read in one read transaction whose rows are written as they arrive, so memory use
does not grow with the database. The checksum covers the node and relationship lines in their
canonical form; an export of a restored database reproduces it exactly.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from neo4j import AsyncManagedTransaction

from slowave_graph import __version__
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.graph.schema import server_info
from slowave_graph.operator.codec import Checksum, encode_props, line
from slowave_graph.operator.model import FORMAT, FORMAT_VERSION, RELATIONSHIP_TYPES, SCOPED_LABELS
from slowave_graph.operator.progress import Progress
from slowave_graph.operator.texts import without_derived

log = logging.getLogger(__name__)


class ExportError(SlowaveError, RuntimeError):
    """The graph holds something the export format cannot carry exactly, or a scope is missing."""


class Sink(Protocol):
    def write(self, text: str, /) -> Any: ...


class NullSink:
    """Counts and checksums without writing (restore verification)."""

    def write(self, text: str, /) -> int:
        return len(text)


@dataclass
class Tally:
    """Counts per label / type and the checksum of what was written."""

    nodes: Counter[str] = field(default_factory=Counter)
    relationships: Counter[str] = field(default_factory=Counter)
    checksum: Checksum = field(default_factory=Checksum)

    def merge(self, other: Tally) -> None:
        self.nodes.update(other.nodes)
        self.relationships.update(other.relationships)
        self.checksum.add_sum(other.checksum)

    def summary(self) -> dict[str, Any]:
        return {
            "nodes": dict(sorted(self.nodes.items())),
            "relationships": dict(sorted(self.relationships.items())),
            "checksum": self.checksum.hexdigest(),
        }


def node_record(labels: list[str], props: dict[str, Any]) -> dict[str, Any]:
    model = [label for label in labels if label in SCOPED_LABELS]
    if len(model) != 1 or len(labels) != 1:
        raise ExportError(
            f"node {props.get('id')!r} has labels {labels}: an export carries nodes with exactly one "
            f"label of the model ({', '.join(SCOPED_LABELS)})"
        )
    return {"node": model[0], "props": encode_props(without_derived(model[0], props))}


def relationship_record(row: dict[str, Any]) -> dict[str, Any]:
    if row["type"] not in RELATIONSHIP_TYPES:
        raise ExportError(
            f"relationship type {row['type']} ({row['from_id']} → {row['to_id']}) is not part of the "
            "model; the export cannot restore it"
        )
    ends = []
    for labels, ident in ((row["from_labels"], row["from_id"]), (row["to_labels"], row["to_id"])):
        if len(labels) != 1 or labels[0] not in SCOPED_LABELS or ident is None:
            raise ExportError(f"{row['type']} relationship between nodes the export cannot name: {labels}")
        ends.append([labels[0], ident])
    return {"rel": row["type"], "from": ends[0], "to": ends[1], "props": encode_props(row["props"])}


async def export_header(db: Database, scopes: list[str] | None) -> dict[str, Any]:
    space = await db.run_read("embedding_space_get")
    info = await server_info(db)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "slowave_graph": __version__,
        "neo4j": {"version": info.version, "edition": info.edition},
        "database": db.database,
        "embedding": ({"model": space[0]["model"], "dimension": space[0]["dimension"]} if space else None),
        "scopes": scopes,
    }


async def _stream_scope(db: Database, scope: str, out: Sink, progress: Progress | None) -> Tally:
    """One scope's nodes, then the relationships among them."""

    async def records(tx: AsyncManagedTransaction, write: Callable[[dict[str, Any]], None]) -> None:
        async for record in await tx.run(db.q("export_scope_nodes"), scope=scope):
            write(node_record(record["labels"], record["props"]))
        async for record in await tx.run(db.q("export_scope_relationships"), scope=scope):
            write(relationship_record(record.data()))

    return await _stream_part(db, out, progress, records)


async def _stream_crossings(
    db: Database, scope: str, scopes: list[str], out: Sink, progress: Progress | None
) -> Tally:
    """The relationships from one scope to the other exported ones (a lesson's evidence and
    ledger)."""

    async def records(tx: AsyncManagedTransaction, write: Callable[[dict[str, Any]], None]) -> None:
        async for record in await tx.run(db.q("export_scope_crossings"), scope=scope, scopes=scopes):
            write(relationship_record(record.data()))

    return await _stream_part(db, out, progress, records)


async def _stream_part(
    db: Database,
    out: Sink,
    progress: Progress | None,
    records: Callable[[AsyncManagedTransaction, Callable[[dict[str, Any]], None]], Awaitable[None]],
) -> Tally:
    """One part of the file, read in one read transaction and written as its rows arrive. A
    retried attempt starts the part again (seekable files) so nothing is written twice."""
    seekable: Any = out if _seekable(out) else None
    start = seekable.tell() if seekable is not None else None

    async def work(tx: AsyncManagedTransaction) -> Tally:
        if seekable is not None:
            seekable.seek(start)
            seekable.truncate()
        tally = Tally()

        def write(record: dict[str, Any]) -> None:
            text = line(record)
            if "node" in record:
                tally.nodes[record["node"]] += 1
            else:
                tally.relationships[record["rel"]] += 1
            tally.checksum.add(text)
            out.write(text + "\n")
            if progress is not None:
                progress.update(1)

        await records(tx, write)
        return tally

    return await db.read(work)


def _seekable(out: Sink) -> bool:
    probe = getattr(out, "seekable", None)
    return bool(callable(probe) and probe())


async def scope_ids(db: Database, scopes: list[str] | None) -> list[str]:
    """The scopes to export: the given ones (each must exist), or all of them."""
    existing = [str(r["scope"]) for r in await db.run_read("export_scopes")]
    if scopes is None:
        return existing
    missing = sorted(set(scopes) - set(existing))
    if missing:
        raise ExportError(f"no such scope: {', '.join(missing)}")
    return list(dict.fromkeys(scopes))


async def export_graph(
    db: Database,
    out: Sink,
    scopes: list[str] | None = None,
    progress: Progress | None = None,
    on_scope: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write an export to ``out``; returns the summary line's content (plus warnings, if any)."""
    chosen = await scope_ids(db, scopes)
    out.write(line(await export_header(db, scopes)) + "\n")
    for row in await db.run_read("export_counters"):
        out.write(line({"counter": row["name"], "value": row["value"]}) + "\n")
    total = Tally()
    for scope in chosen:
        if on_scope is not None:
            on_scope(scope)
        total.merge(await _stream_scope(db, scope, out, progress))
    for scope in chosen:  # after every scope's nodes, so an import finds both ends
        total.merge(await _stream_crossings(db, scope, chosen, out, progress))
    summary = {**total.summary(), "scopes": len(chosen)}
    out.write(line({"summary": summary}) + "\n")
    if scopes is None:
        summary["warnings"] = await _outside_scopes(db, total)
    return summary


async def _outside_scopes(db: Database, tally: Tally) -> list[str]:
    """Nodes a full export could not reach from any scope (the model has none; a partial write by
    other software could leave some). Said out loud rather than dropped silently."""
    totals = (await db.run_read("export_totals"))[0]
    warnings = []
    for label, count in totals.items():
        if int(count) > tally.nodes.get(label, 0):
            warnings.append(
                f"{int(count) - tally.nodes.get(label, 0)} {label} node(s) belong to no scope (or were "
                "written during the export) and are not in the file"
            )
    for warning in warnings:
        log.warning(warning)
    return warnings


async def scope_tally(db: Database, scopes: list[str]) -> Tally:
    """What an export of these scopes would contain (counts and checksum), without a file."""
    total = Tally()
    sink = NullSink()
    for scope in scopes:
        total.merge(await _stream_scope(db, scope, sink, None))
    for scope in scopes:
        total.merge(await _stream_crossings(db, scope, scopes, sink, None))
    return total
