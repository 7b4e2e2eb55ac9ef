"""`slowave-graph import` of an export file: checked whole first, then restored in batches.

The file is read twice. The first pass proves it intact — header, known labels and types, a
summary line whose counts and checksum match the content — before anything is written, so a
damaged or truncated file changes nothing. The second pass restores it: counters (raised, never
lowered), then each scope's nodes and relationships, one transaction per batch, MERGE on ids
(running the same import twice changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import AsyncManagedTransaction
from neo4j.exceptions import ConstraintError

from slowave_graph.embedding.embedder import Embedder, aembed_bulk
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.graph.records import rows
from slowave_graph.operator.codec import decode_props
from slowave_graph.operator.export import Tally
from slowave_graph.operator.model import (
    FORMAT_VERSION,
    RELATIONSHIP_TYPES,
    SCOPED_LABELS,
    FormatError,
    is_header,
)
from slowave_graph.operator.progress import Progress
from slowave_graph.operator.texts import STORED_VECTORS, VECTOR_PROPERTY, node_text, with_derived
from slowave_graph.services.concept_upkeep import backfill as link_concepts


class ImportRefused(SlowaveError, RuntimeError):
    """The import would mix embedding spaces or overwrite another scope's data; nothing (more)
    was written."""


@dataclass
class ExportFile:
    path: Path
    header: dict[str, Any]
    summary: dict[str, Any]
    counters: dict[str, int]
    scopes: list[str] = field(default_factory=list)

    @property
    def records(self) -> int:
        return sum(self.summary["nodes"].values()) + sum(self.summary["relationships"].values())


def _lines(path: Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, the line as written, its object) for every non-blank line."""
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.rstrip("\n")
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise FormatError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise FormatError(f"{path}:{number}: a line must be a JSON object")
            yield number, text, record


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, _, record in _lines(path):
        yield number, record


def peek_header(path: Path) -> dict[str, Any] | None:
    """The export header if the file starts with one (else it is a bulk memory file)."""
    for _, record in _records(path):
        return record if is_header(record) else None
    return None


def _check_node(where: str, record: dict[str, Any]) -> None:
    props = record.get("props")
    if record["node"] not in SCOPED_LABELS:
        raise FormatError(f"{where}: unknown node label {record['node']!r}")
    if not isinstance(props, dict) or not isinstance(props.get("id"), str):
        raise FormatError(f"{where}: a node needs props with a string id")


def _check_rel(where: str, record: dict[str, Any]) -> None:
    if record["rel"] not in RELATIONSHIP_TYPES:
        raise FormatError(f"{where}: unknown relationship type {record['rel']!r}")
    for end in ("from", "to"):
        value = record.get(end)
        if not (isinstance(value, list) and len(value) == 2 and value[0] in SCOPED_LABELS):
            raise FormatError(f"{where}: {end} must be [label, id] with a label of the model")
    if not isinstance(record.get("props"), dict):
        raise FormatError(f"{where}: a relationship needs props")
    if record["rel"] == "ASSESSED" and not isinstance(record["props"].get("event_id"), str):
        raise FormatError(f"{where}: an ASSESSED relationship needs its event_id")


def read_export(path: Path) -> ExportFile:
    """First pass: the whole file checked, nothing written. The checksum is over the lines as
    written (export writes them in canonical form), so any change to a record shows."""
    records = _lines(path)
    first = next(records, None)
    if first is None or not is_header(first[2]):
        raise FormatError(f"{path} does not start with a slowave-graph export header")
    header = first[2]
    if header.get("version") != FORMAT_VERSION:
        raise FormatError(f"{path}: export format version {header.get('version')} is not supported")
    tally = Tally()
    counters: dict[str, int] = {}
    scopes: list[str] = []
    summary: dict[str, Any] | None = None
    for number, text, record in records:
        where = f"{path}:{number}"
        if summary is not None:
            raise FormatError(f"{where}: content after the summary line")
        if "node" in record:
            _check_node(where, record)
            tally.nodes[record["node"]] += 1
            tally.checksum.add(text)
            if record["node"] == "Scope":
                scopes.append(record["props"]["id"])
        elif "rel" in record:
            _check_rel(where, record)
            tally.relationships[record["rel"]] += 1
            tally.checksum.add(text)
        elif "counter" in record:
            if not isinstance(record.get("value"), int):
                raise FormatError(f"{where}: a counter needs an integer value")
            counters[str(record["counter"])] = record["value"]
        elif "summary" in record:
            summary = record["summary"]
        else:
            raise FormatError(f"{where}: unknown record {sorted(record)}")
    if summary is None:
        raise FormatError(f"{path} has no summary line: the file is truncated")
    mine = tally.summary()
    for key in ("nodes", "relationships", "checksum"):
        if summary.get(key) != mine[key]:
            raise FormatError(
                f"{path}: the content does not match its summary ({key}: file says "
                f"{summary.get(key)}, content has {mine[key]}) — the file was altered or damaged"
            )
    return ExportFile(path, header, summary, counters, scopes)


async def check_embedding_space(db: Database, file: ExportFile, embedder: Embedder | None) -> bool:
    """Whether the file's vectors can be used as they are. Differing model or dimension: refused,
    unless an embedder for the database's model is given to recompute them (returns False)."""
    theirs = file.header.get("embedding")
    found = await db.run_read("embedding_space_get")
    ours = {"model": found[0]["model"], "dimension": found[0]["dimension"]} if found else None
    if theirs is None or ours is None or theirs == ours:
        return True
    if embedder is None:
        raise ImportRefused(
            f"the file's vectors come from {theirs['model']} ({theirs['dimension']}-d) but this "
            f"database uses {ours['model']} ({ours['dimension']}-d); pass --reembed to recompute "
            "them with the database's model while importing"
        )
    if (embedder.model_name, embedder.dimension) != (ours["model"], ours["dimension"]):
        raise ImportRefused(
            f"--reembed needs the database's model {ours['model']} but {embedder.model_name} is loaded"
        )
    return False


class _Writer:
    """Batches of one record kind, each written in its own transaction."""

    def __init__(
        self, db: Database, batch_size: int, embedder: Embedder | None, progress: Progress | None
    ) -> None:
        self.db = db
        self.batch_size = batch_size
        self.embedder = embedder
        self.progress = progress
        self.nodes: list[dict[str, Any]] = []
        self.rels: list[dict[str, Any]] = []
        self.written = {"nodes": 0, "relationships": 0}

    async def add_node(self, record: dict[str, Any]) -> None:
        if self.rels:
            await self.flush()
        props = decode_props(record["props"])
        self.nodes.append({"label": record["node"], "id": props["id"], "props": props})
        if len(self.nodes) >= self.batch_size:
            await self.flush()

    async def add_rel(self, record: dict[str, Any]) -> None:
        if self.nodes:  # a scope's relationships come after all of its nodes
            await self.flush()
        self.rels.append({
            "type": record["rel"], "from_label": record["from"][0], "from_id": record["from"][1],
            "to_label": record["to"][0], "to_id": record["to"][1], "props": decode_props(record["props"]),
        })  # fmt: skip
        if len(self.rels) >= self.batch_size:
            await self.flush()

    async def _reembed(self, batch: list[dict[str, Any]]) -> None:
        assert self.embedder is not None
        targets = [
            (row, text) for row in batch if (text := node_text(row["label"], row["props"])) is not None
        ]
        vectors = await aembed_bulk(self.embedder, [text for _, text in targets])
        for (row, _), vector in zip(targets, vectors, strict=True):
            row["props"][VECTOR_PROPERTY[row["label"]]] = vector

    async def flush(self) -> None:
        if self.nodes:
            batch, self.nodes = self.nodes, []
            if self.embedder is not None:
                await self._reembed(batch)
            for row in batch:
                props = with_derived(row["label"], row["props"])
                # vectors go apart: import_nodes writes them once, as float32 (schema.cypher)
                vector_keys = STORED_VECTORS.get(row["label"], [])
                row["vectors"] = {k: props[k] for k in vector_keys if props.get(k) is not None}
                row["props"] = {k: v for k, v in props.items() if k not in vector_keys}
            await self.db.write(self._nodes_work(batch))
            self.written["nodes"] += len(batch)
            done = len(batch)
        elif self.rels:
            batch, self.rels = self.rels, []
            await self.db.write(self._rels_work(batch))
            self.written["relationships"] += len(batch)
            done = len(batch)
        else:
            return
        if self.progress is not None:
            self.progress.update(done)

    def _nodes_work(self, batch: list[dict[str, Any]]) -> Any:
        async def work(tx: AsyncManagedTransaction) -> None:
            try:
                found = (await rows(tx, self.db.q("import_nodes"), rows=batch))[0]
            except ConstraintError as exc:
                raise ImportRefused(
                    f"the database already holds an active memory with the same text in the same scope "
                    f"under another id ({exc.message}); nothing of this batch was written"
                ) from None
            if found["conflicts"]:
                raise ImportRefused(
                    "these ids already belong to nodes of another scope in this database: "
                    + ", ".join(found["conflicts"])
                    + " — the file comes from another database whose ids overlap; nothing of this "
                    "batch was written"
                )

        return work

    def _rels_work(self, batch: list[dict[str, Any]]) -> Any:
        async def work(tx: AsyncManagedTransaction) -> None:
            found = (await rows(tx, self.db.q("import_relationships"), rows=batch))[0]
            if int(found["relationships"]) != len(batch):
                raise ImportRefused(
                    f"{len(batch) - int(found['relationships'])} relationship(s) of a batch name nodes "
                    "that are neither in the file nor in the database; nothing of this batch was written"
                )

        return work


async def import_export(
    db: Database,
    file: ExportFile,
    *,
    batch_size: int = 500,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Second pass: restore a checked export file. ``embedder`` (the database's model) recomputes
    the vectors when the file's model differs; otherwise the file's vectors are kept."""
    reuse = await check_embedding_space(db, file, embedder)
    writer = _Writer(db, batch_size, None if reuse else embedder, progress)
    if file.counters:
        await db.run_write(
            "import_counters", rows=[{"name": k, "value": v} for k, v in sorted(file.counters.items())]
        )
    for _, record in _records(file.path):
        if "node" in record:
            await writer.add_node(record)
        elif "rel" in record:
            await writer.add_rel(record)
    await writer.flush()
    # the concept layer is derived from the memories' text, not carried by the file
    linked = await link_concepts(db)
    return {
        **writer.written,
        "scopes": file.scopes,
        "counters": len(file.counters),
        "reembedded": not reuse,
        "concepts_linked": linked.memories,
    }
