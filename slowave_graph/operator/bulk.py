"""Bulk import of memories from outside: many claims, embedded in batches, written the way
slowave_remember writes them.

Each record is what one remember item is — ``{"scope": …, "content": …, "type": …,
"occurred_at": …}`` with the contract's field names and rules. Per scope the import opens one
session (as slowave_activate would: scope node, continuity line, random ``sess_`` id), and every batch
runs ``bulk_remember_memories`` — remember's statement (``remember_call``) for a whole batch
across its scopes: an Event per record, a Memory with its embedding, DERIVED_FROM/IN_SCOPE, NEXT in
record order, ids from the counters, duplicates of an active claim reinforced rather than stored
twice. Retrieval cannot tell the two apart.
The session is closed at the end (outcome success, end_reason import).

Throughput: one write transaction and one statement per batch (all of its scopes), the counters
bumped once per batch, counts returned instead of a row per record, and the next batch embedded
and prepared while the previous one is written.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterable, Iterable, Iterator, Sized
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from neo4j import AsyncManagedTransaction
from pydantic import TypeAdapter, ValidationError

from slowave_graph import __version__
from slowave_graph.app import App
from slowave_graph.contract.common import ScopeStr
from slowave_graph.contract.remember import RememberItem
from slowave_graph.embedding.embedder import aembed_bulk
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.records import rows
from slowave_graph.operator.progress import Progress, bar
from slowave_graph.services import text
from slowave_graph.services.concepts import EXTRACTOR_VERSION, concept_links
from slowave_graph.services.consolidation import Link
from slowave_graph.services.context import LOCAL_PRINCIPAL, new_id, utcnow
from slowave_graph.services.remember import judge, memory_row

CLIENT_NAME = "slowave-graph import"
RECORD_KEYS = frozenset({"scope", "content", "type", "occurred_at"})
_SCOPE = TypeAdapter(ScopeStr)


class BulkRecordError(SlowaveError, ValueError):
    """A record that is not a valid remember item (the message names the field)."""


@dataclass(frozen=True)
class BulkRecord:
    scope: str
    content: str
    type: str
    occurred_at: str | None = None
    # Python callers that already hold vectors of the database's model may pass them (benchmarks);
    # otherwise the content is embedded like remember does.
    embedding: list[float] | None = None


@dataclass
class BulkResult:
    records: int = 0
    created: int = 0
    matched: int = 0
    sessions: dict[str, str] = field(default_factory=dict)  # scope → session id
    seconds: float = 0.0
    # the batches' write transactions alone, without embedding or reading the input: the rate the
    # database side sustains when vectors come with the records
    write_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def write_rate(self) -> float:
        return self.records / self.write_seconds if self.write_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "created": self.created,
            "matched": self.matched,
            "sessions": self.sessions,
            "seconds": round(self.seconds, 3),
            "memories_per_second": round(self.rate, 1),
            "write_seconds": round(self.write_seconds, 3),
            "written_per_second": round(self.write_rate, 1),
        }


def parse_record(obj: Any, default_scope: str | None = None, default_type: str | None = None) -> BulkRecord:
    """A bulk line as a validated record (the remember contract's rules: content 1–8000 chars,
    a known type, an RFC 3339 occurred_at with offset, a kind:id scope)."""
    if not isinstance(obj, dict):
        raise BulkRecordError("a record must be a JSON object")
    unknown = sorted(set(obj) - RECORD_KEYS)
    if unknown:
        raise BulkRecordError(
            f"unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(RECORD_KEYS))})"
        )
    scope = obj.get("scope", default_scope)
    if scope is None:
        raise BulkRecordError("scope is required (in the record, or --scope for all records)")
    try:
        scope = _SCOPE.validate_python(scope, strict=True)
        item = RememberItem.model_validate(
            {k: v for k, v in {"content": obj.get("content"), "type": obj.get("type", default_type),
                               "occurred_at": obj.get("occurred_at")}.items() if v is not None}
        )  # fmt: skip
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "scope"
        raise BulkRecordError(f"{where}: {first['msg']}") from None
    return BulkRecord(scope=scope, content=item.content, type=item.type, occurred_at=item.occurred_at)


def read_bulk_file(
    path: Path, default_scope: str | None = None, default_type: str | None = None
) -> Iterator[BulkRecord]:
    """Records of a JSON Lines file, validated one by one; errors name the line."""
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield parse_record(json.loads(raw), default_scope, default_type)
            except json.JSONDecodeError as exc:
                raise BulkRecordError(f"{path}:{number}: not JSON ({exc.msg})") from None
            except BulkRecordError as exc:
                raise BulkRecordError(f"{path}:{number}: {exc}") from None


def check_bulk_file(path: Path, default_scope: str | None = None, default_type: str | None = None) -> int:
    """Validate a whole file before anything is written; returns its number of records."""
    return sum(1 for _ in read_bulk_file(path, default_scope, default_type))


IMPORT_TASK = "Bulk import of memories"


async def open_session(
    tx: AsyncManagedTransaction, app: App, scope: str, task: str, client: dict[str, str]
) -> str:
    """A session of the local user in ``scope``, opened exactly as activate opens one (same
    statement): the session outside writers (an import, a person's correction) record under."""
    kind, name = text.split_scope(scope)
    opened = await rows(
        tx, app.db.q("open_session"), scope=scope, scope_kind=kind, scope_name=name,
        norm_key=text.scope_norm_key(scope), session_id=new_id("sess"), principal=LOCAL_PRINCIPAL,
        continuity_id=None, new_continuity_id=new_id("cont"),
        task=task, initial_goal=task, task_context=None, semantic_context=None, now=utcnow(),
        **client,
    )  # fmt: skip
    return str(opened[0]["session_id"])


async def prepare_items(
    app: App, batch: list[BulkRecord], vectors: list[list[float]], *, consolidate: bool
) -> list[dict[str, Any]]:
    """A batch's statement items, grouped by scope (in order of first appearance), each item's
    index its position among them, with the near-duplicates and updates of each claim among its
    scope's memories and the batch's earlier claims (as remember finds them); the session ids are
    filled in by ``write_items``."""
    groups: dict[str, list[tuple[BulkRecord, list[float]]]] = {}
    for record, vector in zip(batch, vectors, strict=True):
        groups.setdefault(record.scope, []).append((record, vector))
    items: list[dict[str, Any]] = []
    for scope, group in groups.items():
        contents = [record.content for record, _ in group]
        vectors_of = [vector for _, vector in group]
        links = [[] for _ in group] if not consolidate else await judge(
            app.repo, app.embedder, scope, contents, vectors_of
        )  # fmt: skip
        offset = len(items)
        for (record, vector), found in zip(group, links, strict=True):
            moved = [_shifted(x, offset) for x in found]
            items.append({
                "scope": scope, "scope_token": text.scope_token(scope),
                **memory_row(
                    scope, record.content, record.type, record.occurred_at, vector, moved, judged=consolidate
                ),
            })  # fmt: skip
    for index, item in enumerate(items):
        item["index"] = index
    return items


async def write_items(
    tx: AsyncManagedTransaction,
    app: App,
    items: list[dict[str, Any]],
    sessions: dict[str, str],
    call_id: str,
    client: dict[str, str],
) -> dict[str, Any]:
    """bulk_remember_memories for prepared items, each recorded by its scope's session
    (``sessions``: scope → session id). Returns the counts (written, created)."""
    for item in items:
        item["session_id"] = sessions[item["scope"]]
    scopes = list(dict.fromkeys(item["scope"] for item in items))
    [counts] = await rows(
        tx, app.db.q("bulk_remember_memories"), items=items,
        sessions=[sessions[scope] for scope in scopes], now=utcnow(), call_id=call_id,
        concept_links=concept_links([(item["scope"], item["content"]) for item in items]),
        concepts_version=EXTRACTOR_VERSION, **client,
    )  # fmt: skip
    return dict(counts)


class _Importer:
    def __init__(self, app: App, client_name: str, client_version: str) -> None:
        self.app = app
        self.client = {"client_name": client_name, "client_version": client_version}
        self.result = BulkResult()
        self.pending = 0  # records of the batch being written
        self.consolidate = app.services.remember.consolidate

    async def prepare(self, batch: list[BulkRecord], vectors: list[list[float]]) -> list[dict[str, Any]]:
        return await prepare_items(self.app, batch, vectors, consolidate=self.consolidate)

    async def write(self, items: list[dict[str, Any]]) -> None:
        """One transaction: new sessions for new scopes, then bulk_remember_memories."""
        sessions = dict(self.result.sessions)
        scopes = list(dict.fromkeys(item["scope"] for item in items))
        call_id = new_id("imp")

        async def work(tx: AsyncManagedTransaction) -> dict[str, Any]:
            opened = dict(sessions)
            for scope in scopes:
                if scope not in opened:
                    opened[scope] = await open_session(tx, self.app, scope, IMPORT_TASK, self.client)
            counts = await write_items(tx, self.app, items, opened, call_id, self.client)
            sessions.update(opened)
            return counts

        started = time.perf_counter()
        counts = await self.app.db.write(work)
        self.result.write_seconds += time.perf_counter() - started
        if counts["written"] != len(items):
            raise RuntimeError(f"bulk import wrote {counts['written']} of {len(items)} records of a batch")
        self.result.sessions = sessions
        self.result.records += len(items)
        self.result.created += counts["created"]
        self.result.matched += counts["written"] - counts["created"]

    async def close(self) -> None:
        for scope, session_id in self.result.sessions.items():
            await self.app.db.run_write(
                "bulk_close_session",
                session_id=session_id,
                now=utcnow(),
                summary=f"Imported memories into {scope} ({self.result.records} records in this run)",
            )


def _shifted(link: Link, offset: int) -> Link:
    """A link to an earlier claim of a scope's group, named by its position in the whole batch."""
    return replace(link, target=f"#{offset + int(link.target[1:])}") if link.target.startswith("#") else link


async def _batches(records: Iterable[Any] | AsyncIterable[Any], size: int) -> AsyncIterable[list[BulkRecord]]:
    batch: list[BulkRecord] = []
    if isinstance(records, AsyncIterable):
        async for record in records:
            batch.append(record if isinstance(record, BulkRecord) else parse_record(record))
            if len(batch) >= size:
                yield batch
                batch = []
    else:
        for record in records:
            batch.append(record if isinstance(record, BulkRecord) else parse_record(record))
            if len(batch) >= size:
                yield batch
                batch = []
    if batch:
        yield batch


async def import_memories(
    app: App,
    records: Iterable[BulkRecord | dict[str, Any]] | AsyncIterable[BulkRecord | dict[str, Any]],
    *,
    batch_size: int = 500,
    client_name: str = CLIENT_NAME,
    client_version: str = __version__,
    progress: Progress | bool | None = None,
) -> BulkResult:
    """Remember many records at once (see the module doc). ``records`` are BulkRecords or dicts in
    the bulk line format; a dict that fails the remember contract raises BulkRecordError before
    its batch is written (batches before it stay written: validate a file with check_bulk_file
    first when all-or-nothing matters). ``progress``: a bar to advance, or True for one on stderr.
    Returns counts, the sessions used and the rate."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    if isinstance(progress, bool):
        total = len(records) if isinstance(records, Sized) else None
        with bar(total, "import", unit="memories", enabled=progress) as shown:
            return await import_memories(
                app, records, batch_size=batch_size, client_name=client_name,
                client_version=client_version, progress=shown,
            )  # fmt: skip
    importer = _Importer(app, client_name, client_version)
    started = time.perf_counter()
    writing: asyncio.Task[None] | None = None
    try:
        async for batch in _batches(records, batch_size):
            missing = [r.content for r in batch if r.embedding is None]
            computed = iter(await aembed_bulk(app.embedder, missing) if missing else [])
            vectors = [r.embedding if r.embedding is not None else next(computed) for r in batch]
            if any(len(v) != app.embedder.dimension for v in vectors):
                raise BulkRecordError(
                    f"an embedding is not {app.embedder.dimension}-d ({app.embedder.model_name})"
                )
            # embedded while the previous batch is written; compared with the store once it is
            if writing is not None:  # batches are written in order: NEXT follows record order
                await writing
                if progress is not None:
                    progress.update(importer.pending)
            items = await importer.prepare(batch, vectors)
            importer.pending = len(batch)
            writing = asyncio.create_task(importer.write(items))
        if writing is not None:
            await writing
            writing = None
            if progress is not None:
                progress.update(importer.pending)
    finally:
        if writing is not None:  # an embedding or validation error: let the write in flight finish
            await asyncio.gather(writing, return_exceptions=True)
        await importer.close()
    importer.result.seconds = time.perf_counter() - started
    return importer.result
