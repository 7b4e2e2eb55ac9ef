"""Forgetting: a whole scope, or one memory, deleted with everything that belongs only to it.

``plan`` is the dry run: it counts, in a read transaction, what ``forget`` would delete (per label
and relationship type) and, for a memory, what that stays would change. ``forget`` does it: one
statement of ``cypher/admin.cypher`` (forget_scope / forget_memory), so one write transaction —
a failure leaves nothing half-forgotten — which also creates the audit record, a
``(:Forgetting)`` node outside every scope: who, when, what (scope or memory, and its id) and the
counts, never the content. The record is in the database rather than a file beside it so that it
is committed with the deletion or not at all, is queryable from Cypher and travels with the
database's own backups, whichever machine the operator ran the command on.
"""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from slowave_graph import __version__
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.graph.paging import FORGOTTEN
from slowave_graph.services.context import new_id, utcnow

Target = Literal["scope", "memory"]


class UnknownTarget(SlowaveError, LookupError):
    """The scope or memory to forget does not exist (or the memory is not in the given scope)."""


@dataclass
class Forgetting:
    """What forgetting a target removes (a plan) or removed (done)."""

    target: Target
    target_id: str
    scope: str
    nodes: dict[str, int]  # label → nodes deleted
    relationships: dict[str, int]  # type → relationships deleted
    # what stays but changes when a memory goes (memory_references in admin.cypher); empty for a scope
    updated: dict[str, int] = field(default_factory=dict)
    done: bool = False
    record: dict[str, Any] | None = None  # the audit record, once done: id, at, actor, host

    @property
    def total_nodes(self) -> int:
        return sum(self.nodes.values())

    @property
    def total_relationships(self) -> int:
        return sum(self.relationships.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "dry_run": not self.done,
            "total_nodes": self.total_nodes,
            "total_relationships": self.total_relationships,
        }


def actor() -> str:
    """Who forgets: the OS user running the command (a container without a passwd entry for its
    uid has no name to give, so the uid stands in)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return f"uid:{os.getuid()}"


def rfc3339(moment: datetime) -> str:
    """UTC, to the second, with a Z: 2026-03-01T09:30:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check(scope: str | None, memory: str | None) -> None:
    if scope is None and memory is None:
        raise ValueError("name a scope or a memory to forget")


def _counts(row: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    nodes = {str(x["label"]): int(x["count"]) for x in row["node_counts"]}
    relationships = {str(x["type"]): int(x["count"]) for x in row["relationship_counts"]}
    return nodes, relationships


async def plan(db: Database, *, scope: str | None = None, memory: str | None = None) -> Forgetting:
    """The dry run: what forgetting ``scope`` — or ``memory`` (in ``scope``, when both are given)
    — would delete and change. Reads only."""
    _check(scope, memory)
    if memory is None:
        assert scope is not None
        rows = await db.run_read("forget_scope_count", scope=scope)
        if not rows:
            raise UnknownTarget(f"no scope {scope!r}")
        nodes, relationships = _counts(rows[0])
        return Forgetting("scope", scope, scope, nodes, relationships)
    rows = await db.run_read("forget_memory_count", memory_id=memory)
    if not rows:
        raise UnknownTarget(f"no memory {memory!r}")
    row = rows[0]
    if scope is not None and row["scope"] != scope:
        raise UnknownTarget(f"memory {memory!r} is not in scope {scope!r} (it is in {row['scope']!r})")
    nodes, relationships = _counts(row)
    updated = {str(k): int(v) for k, v in row["updated"].items()}
    return Forgetting("memory", memory, str(row["scope"]), nodes, relationships, updated)


async def forget(
    db: Database,
    *,
    scope: str | None = None,
    memory: str | None = None,
    who: str | None = None,
    now: datetime | None = None,
) -> Forgetting:
    """Forget ``scope`` or ``memory`` (in ``scope``, when both are given) and record it, in one
    transaction. ``who``: the actor the record names (default: the OS user)."""
    _check(scope, memory)
    moment = now or utcnow()
    record = {
        "forgetting_id": new_id("fgt"),
        "actor": who or actor(),
        "host": socket.gethostname(),
        "version": __version__,
        "now": moment,
    }
    if memory is None:
        assert scope is not None
        rows = await db.run_write(
            "forget_scope", scope=scope, forgotten=FORGOTTEN, target="scope", target_id=scope, **record
        )
        target: Target = "scope"
    else:
        rows = await db.run_write(
            "forget_memory",
            memory_id=memory,
            scope=scope,
            forgotten=FORGOTTEN,
            target="memory",
            target_id=memory,
            **record,
        )
        target = "memory"
    if not rows:
        await plan(db, scope=scope, memory=memory)  # raises UnknownTarget with the reason
        raise UnknownTarget(f"nothing to forget for {target} {memory or scope!r}")  # gone meanwhile
    row = rows[0]
    nodes, relationships = _counts(row)
    return Forgetting(
        target,
        memory or str(scope),
        str(row["scope"]),
        nodes,
        relationships,
        {str(k): int(v) for k, v in (row["updated"] or {}).items()},
        done=True,
        record={
            "id": row["forgetting_id"],
            "at": rfc3339(moment),
            "actor": record["actor"],
            "host": record["host"],
        },
    )
