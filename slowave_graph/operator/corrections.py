"""A person's corrections of the memory: show a memory, suppress it, restore it, supersede it.

Agents mark what they were shown stale through feedback; a person who knows a memory is wrong, or
must not be shown, needs more than ``forget`` (permanent). These actions are reversible or
additive and leave a record, each one statement (``cypher/corrections.cypher``) in one write
transaction with its ``(:Correction)`` record — actor, host, time, reason, status before and
after — so an action is either done and recorded or not done at all:

- **suppress** hides a memory from every later retrieval; nothing is deleted;
- **restore** undoes a suppression;
- **supersede** stores the corrected text as a new memory of the same scope (remembered the way
  an import remembers: its own session, event, concepts, near-duplicate links) and retires the old
  one as stale + superseded with ``(:new)-[:SUPERSEDES]->(:old)``, as an agent's feedback would.

They are for people only — the CLI (`slowave-graph memory …`) and the dashboard's memory page
(when SLOWAVE_DASHBOARD_ACTIONS is on) — never MCP tools.
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from neo4j import AsyncManagedTransaction

from slowave_graph import __version__
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.graph.records import rows
from slowave_graph.graph.values import native
from slowave_graph.operator.forget import actor
from slowave_graph.services.context import new_id, utcnow

if TYPE_CHECKING:
    from slowave_graph.app import App

Action = Literal["suppress", "restore", "supersede"]
CLIENT_NAME = "slowave-graph memory"
MAX_REASON = 2000
# What each action applies to (the statement refuses anything else and writes nothing).
APPLIES_TO: dict[Action, tuple[str, ...]] = {
    "suppress": ("active", "stale"),
    "restore": ("suppressed",),
    "supersede": ("active",),
}


class UnknownMemory(SlowaveError, LookupError):
    """No such memory (or it is not in the scope the person named)."""


class CorrectionRefused(SlowaveError, ValueError):
    """The action does not apply to the memory as it is (its status), or the input is invalid."""


@dataclass(frozen=True)
class Correction:
    """What a correction did: the memory, its status before and after, the record's id."""

    action: Action
    memory_id: str
    scope: str
    previous: str
    status: str
    correction_id: str
    actor: str
    at: datetime
    reason: str | None = None
    replacement_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "at": self.at.isoformat()}


def _reason(reason: str | None, *, required: bool) -> str | None:
    text = (reason or "").strip()
    if required and not text:
        raise CorrectionRefused("a reason is required (say why, for whoever reads the record later)")
    if len(text) > MAX_REASON:
        raise CorrectionRefused(f"the reason is longer than {MAX_REASON} characters")
    return text or None


def _refusal(action: Action, memory_id: str, status: str) -> CorrectionRefused:
    allowed = " or ".join(APPLIES_TO[action])
    return CorrectionRefused(f"{memory_id} is {status}: only a memory that is {allowed} can be {action}ed")


def _scope_mismatch(memory_id: str, scope: str | None, found: str) -> UnknownMemory:
    return UnknownMemory(f"memory {memory_id!r} is not in scope {scope!r} (it is in {found!r})")


async def show(db: Database, memory_id: str) -> dict[str, Any] | None:
    """A memory as a person reviews it before correcting it: its own fields, how often it was
    shown, its corrections and its supersession chain. None: no such memory."""
    found = await db.run_read("dashboard_memory", id=memory_id)
    if not found:
        return None
    record = native(found[0])
    return {
        **record["memory"],
        "exposures": record["exposures"],
        "corrections": [native(r) for r in await db.run_read("memory_corrections", id=memory_id)],
        "supersession": [native(r) for r in await db.run_read("dashboard_memory_supersession", id=memory_id)],
    }


def _params(reason: str | None, who: str | None, now: datetime | None) -> dict[str, Any]:
    return {
        "correction_id": new_id("cor"),
        "reason": reason,
        "actor": who or actor(),
        "host": socket.gethostname(),
        "version": __version__,
        "now": now or utcnow(),
    }


def _done(action: Action, row: dict[str, Any], params: dict[str, Any]) -> Correction:
    return Correction(
        action=action,
        memory_id=str(row["memory_id"]),
        scope=str(row["scope"]),
        previous=str(row["previous"]),
        status=str(row["status"]),
        correction_id=str(row["correction_id"]),
        actor=str(params["actor"]),
        at=params["now"],
        reason=params["reason"],
        replacement_id=row.get("replacement_id"),
    )


async def _toggle(
    db: Database,
    action: Literal["suppress", "restore"],
    memory_id: str,
    reason: str | None,
    scope: str | None,
    who: str | None,
    now: datetime | None,
) -> Correction:
    params = _params(_reason(reason, required=action == "suppress"), who, now)
    found = await db.run_write(f"{action}_memory", memory_id=memory_id, scope=scope, **params)
    if not found:
        await _known(db, memory_id, scope)
        raise UnknownMemory(f"no memory {memory_id!r}")
    row = found[0]
    if row["correction_id"] is None:
        raise _refusal(action, memory_id, str(row["previous"]))
    return _done(action, row, params)


async def _known(db: Database, memory_id: str, scope: str | None) -> None:
    """Raises UnknownMemory with the reason a statement found no memory."""
    found = await db.run_read("dashboard_memory", id=memory_id)
    if not found:
        raise UnknownMemory(f"no memory {memory_id!r}")
    home = found[0]["memory"]["scope"]
    if scope is not None and home != scope:
        raise _scope_mismatch(memory_id, scope, home)


async def suppress(
    db: Database,
    memory_id: str,
    *,
    reason: str,
    scope: str | None = None,
    who: str | None = None,
    now: datetime | None = None,
) -> Correction:
    """Hide ``memory_id`` from every later retrieval (reversible with ``restore``). ``scope``:
    insist that the memory is in it. ``who``: the actor the record names (default: the OS user)."""
    return await _toggle(db, "suppress", memory_id, reason, scope, who, now)


async def restore(
    db: Database,
    memory_id: str,
    *,
    reason: str | None = None,
    scope: str | None = None,
    who: str | None = None,
    now: datetime | None = None,
) -> Correction:
    """Undo the suppression of ``memory_id``: it returns to the status it had."""
    return await _toggle(db, "restore", memory_id, reason, scope, who, now)


async def supersede(
    app: App,
    memory_id: str,
    content: str,
    *,
    reason: str | None = None,
    memory_type: str | None = None,
    scope: str | None = None,
    who: str | None = None,
    now: datetime | None = None,
) -> Correction:
    """Store ``content`` as the corrected memory (same scope; ``memory_type`` or the old one's
    type) and retire ``memory_id`` as superseded by it, in one transaction."""
    from slowave_graph.operator.bulk import (
        BulkRecordError,
        open_session,
        parse_record,
        prepare_items,
        write_items,
    )

    params = _params(_reason(reason, required=False), who, now)
    found = await app.db.run_read("dashboard_memory", id=memory_id)
    if not found:
        raise UnknownMemory(f"no memory {memory_id!r}")
    old = found[0]["memory"]
    if scope is not None and old["scope"] != scope:
        raise _scope_mismatch(memory_id, scope, old["scope"])
    if old["status"] != "active":
        raise _refusal("supersede", memory_id, str(old["status"]))
    home = str(old["scope"])
    try:
        record = parse_record({"scope": home, "content": content, "type": memory_type or old["type"]})
    except BulkRecordError as exc:
        raise CorrectionRefused(f"the corrected memory is not valid: {exc}") from None
    vector = (await app.embedder.aembed([record.content]))[0]
    items = await prepare_items(app, [record], [vector], consolidate=app.services.remember.consolidate)
    client = {"client_name": CLIENT_NAME, "client_version": __version__}
    task = f"Correction of {memory_id} by {params['actor']}"

    async def work(tx: AsyncManagedTransaction) -> dict[str, Any]:
        session_id = await open_session(tx, app, home, task, client)
        await write_items(tx, app, items, {home: session_id}, params["correction_id"], client)
        done = await rows(
            tx, app.db.q("supersede_memory"), memory_id=memory_id, scope=home, session_id=session_id,
            summary=f"Superseded {memory_id}", **params,
        )  # fmt: skip
        # a refusal raises, so the transaction rolls back: the replacement is not kept either
        if not done or done[0]["correction_id"] is None:
            if done and done[0]["same"]:
                raise CorrectionRefused(f"the corrected text is {memory_id}'s own text: nothing to supersede")
            raise _refusal("supersede", memory_id, str(done[0]["previous"]) if done else "gone")
        return done[0]

    return _done("supersede", await app.db.write(work), params)
