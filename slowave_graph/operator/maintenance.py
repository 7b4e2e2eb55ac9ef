"""The maintenance pass: what is derived from the memories and their feedback, kept current on
stores that already exist and as time passes (cypher/maintenance.cypher).

- **Near-duplicates and updates** (``backfill_similar``). Remember judges each new claim against
  the memories before it and marks the memory (``similar_version``); memories stored with
  SLOWAVE_CONSOLIDATION off, or before the mark existed, were never judged. The pass walks them,
  a page per transaction, and judges each against the older memories of its scope — the same
  neighbour search and rules as remember (services/consolidation.py) — so links go newest → older
  and every pair is judged once, by its newer memory: a newer unmarked memory is judged in its
  turn, a newer marked one judged the pair when it was stored. Idempotent and restartable: a page
  writes its links and marks together, so a second pass finds nothing to do.
- **Co-use decay** (``decay_co_use``). An ASSOCIATED edge's weight, 1 - 0.5^co-uses when feedback
  last changed it, is stored decayed by its age (half-life SLOWAVE_CO_USE_HALF_LIFE_DAYS), always
  recomputed from the co-uses, so passes never compound. Retrieval computes the same strength at
  query time (co_use_strength), so ranking does not wait for a pass; the stored weight is what
  the explore catalog, the dashboard and notebooks read.
- **Stale learned marks** (``clear_stale_learned``). A retrieval is learned only when it holds a
  lesson; older versions marked every retrieval with feedback, which kept lessonless retrievals
  among the similar questions experience compares. The pass takes the mark and the index copy off.
- **Lessons** (``judge_lessons``). Each lesson origin and each memory some feedback found helpful
  has its lesson judged again (services/generalisation.py): a stage's breadth follows the scopes
  in use as they come and go, lessons validated before generalisation existed form, and with
  SLOWAVE_GENERALISATION off whatever travelled is cleared.

One pass at a time per database: a lease in the graph (``take_lease``), taken by whoever runs a
pass — a server's background task (app.py) or ``slowave-graph maintain --once`` — and renewed as
the pass goes, so a holder that dies mid-pass frees it within ``LEASE_SECONDS``. Each pass leaves a
``(:MaintenanceRun)`` record with its counts, outside every scope (``latest_runs`` lists them).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from neo4j.time import DateTime

from slowave_graph import __version__
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.database import Database
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.operator.progress import Progress, bar
from slowave_graph.services import consolidation
from slowave_graph.services.calibration import scale_for
from slowave_graph.services.context import new_id, utcnow

if TYPE_CHECKING:
    from slowave_graph.app import App

log = logging.getLogger(__name__)

LEASE = "maintenance"
# How long a lease lasts unless renewed: a pass renews it between its steps and pages once a third
# of it has passed, so only a holder that died lets it run out.
LEASE_SECONDS = 600.0
PAGE = 200
# The backfill's neighbour search finds a memory's nearest in its scope, newer ones included, and
# keeps the NEIGHBOURS nearest older ones (what remember compared it with when it was stored). A
# memory with fewer older ones among FETCH is searched again, FETCH_GROWTH times wider, up to
# FETCH_MAX: the oldest memories of a large scope have few older neighbours among many newer.
FETCH = 4 * consolidation.NEIGHBOURS
FETCH_GROWTH = 4
FETCH_MAX = 512
SERVER_ACTOR = "server"
LESSON_PAGE = 50  # memories whose lessons are judged per round (each a few vector searches)


class LeaseHeld(SlowaveError, RuntimeError):
    """Another pass holds the lease: this one did nothing."""

    def __init__(self, holder: str, expires_at: datetime | None) -> None:
        until = f" until {rfc3339(expires_at)}" if expires_at is not None else ""
        super().__init__(f"another maintenance pass is running ({holder}{until})")
        self.holder = holder
        self.expires_at = expires_at


class LeaseLost(SlowaveError, RuntimeError):
    """The lease expired mid-pass and another pass took it: this one stops."""


def rfc3339(moment: datetime) -> str:
    """UTC, to the second, with a Z: 2026-03-01T09:30:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _native(value: object) -> datetime | None:
    """A time as the driver returns it (neo4j.time.DateTime) as a datetime; None for none."""
    if isinstance(value, DateTime):
        return value.to_native()
    return value if isinstance(value, datetime) else None


@dataclass
class Lease:
    """A lease this process holds: renewed while the pass runs, released when it ends."""

    db: Database
    holder: str
    seconds: float = LEASE_SECONDS
    renewed_at: float = field(default_factory=time.monotonic)

    async def keep(self) -> None:
        """Renew the lease once a third of its time has passed (a write per few minutes, not per
        page); raise LeaseLost when another pass took it meanwhile."""
        if time.monotonic() - self.renewed_at < self.seconds / 3:
            return
        now = utcnow()
        renewed = await self.db.run_write(
            "maintenance_lease_renew",
            lease=LEASE,
            holder=self.holder,
            expires_at=now + timedelta(seconds=self.seconds),
        )
        if not renewed:
            raise LeaseLost(f"the maintenance lease of {self.holder} expired and was taken by another pass")
        self.renewed_at = time.monotonic()

    async def release(self) -> None:
        await self.db.run_write("maintenance_lease_release", lease=LEASE, holder=self.holder, now=utcnow())


async def take_lease(
    db: Database, holder: str, *, seconds: float = LEASE_SECONDS, now: datetime | None = None
) -> Lease:
    """The lease for ``holder``, or LeaseHeld when another pass holds it."""
    moment = now or utcnow()
    rows = await db.run_write(
        "maintenance_lease_take",
        lease=LEASE,
        holder=holder,
        now=moment,
        expires_at=moment + timedelta(seconds=seconds),
    )
    lease = rows[0]
    if lease["holder"] != holder:
        raise LeaseHeld(str(lease["holder"]), _native(lease["expires_at"]))
    return Lease(db, holder, seconds)


# ------------------------------------------------------------------ near-duplicates and updates
@dataclass
class Backfill:
    memories_checked: int = 0  # memories judged and marked
    linked_duplicates: int = 0
    linked_updates: int = 0


def memory_number(memory_id: str) -> int | None:
    """A memory's number (sch_12: 12). Numbers come from one counter in creation order, so a
    smaller number is an older memory; None for an id of another form (compared with nothing)."""
    digits = memory_id.rpartition("_")[2]
    return int(digits) if digits.isdigit() else None


def older_neighbours(
    memory_id: str, hits: Sequence[consolidation.Neighbour], k: int = consolidation.NEIGHBOURS
) -> list[consolidation.Neighbour]:
    """The ``k`` nearest of ``hits`` stored before ``memory_id`` (numbered below it), nearest
    first: what the memory is judged against, as remember judged a claim against the memories
    already there."""
    own = memory_number(memory_id)
    if own is None:
        return []
    older = [h for h in hits if (n := memory_number(h.id)) is not None and n < own]
    return sorted(older, key=lambda h: (-h.cosine, h.id))[:k]


async def _older_in_scope(
    repo: GraphRepository, scope: str, ids: list[str], vectors: list[list[float]]
) -> list[list[consolidation.Neighbour]]:
    """Per memory of one scope, its nearest older active memories (``older_neighbours``), through
    the vector search remember uses; widened for the memories it found too few older ones for."""
    out: list[list[consolidation.Neighbour]] = [[] for _ in ids]
    pending = list(range(len(ids)))
    fetch = FETCH
    while pending:
        found = await repo.nearest_memories(scope=scope, embeddings=[vectors[i] for i in pending], k=fetch)
        wider = []
        for i, hits in zip(pending, found, strict=True):
            near = [consolidation.Neighbour(h["id"], h["content"], h["cosine"]) for h in hits]
            out[i] = older_neighbours(ids[i], near)
            # a full answer may hide older neighbours behind newer ones
            if len(out[i]) < consolidation.NEIGHBOURS and len(hits) >= fetch and fetch < FETCH_MAX:
                wider.append(i)
        pending, fetch = wider, min(FETCH_MAX, fetch * FETCH_GROWTH)
    return out


async def judge_page(app: App, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The statement items of a page: each memory with its links to older memories of its scope."""
    scale = await scale_for(app.embedder)
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_scope.setdefault(str(row["scope"]), []).append(row)
    items = []
    for scope, group in by_scope.items():
        ids = [str(r["id"]) for r in group]
        vectors = [list(r["embedding"]) for r in group]
        neighbours = await _older_in_scope(app.repo, scope, ids, vectors)
        # the rules cost a few ms per memory on claims with many close neighbours: a page's worth
        # off the event loop, so a server's tool calls do not wait for it
        items.extend(await asyncio.to_thread(_judged, group, neighbours, scale.statement_z))
    return items


def _judged(
    rows: list[dict[str, Any]],
    neighbours: list[list[consolidation.Neighbour]],
    statement_z: Callable[[float], float],
) -> list[dict[str, Any]]:
    items = []
    for row, near in zip(rows, neighbours, strict=True):
        links = consolidation.links_for(str(row["content"] or ""), near, statement_z)
        items.append({
            "memory_id": row["id"],
            "links": [{"target_id": x.target, "kind": x.kind, "score": x.score} for x in links],
        })  # fmt: skip
    return items


async def unjudged(db: Database, *, scope: str | None = None) -> int:
    """Active memories the judgement has not reached (the backfill's total)."""
    rows = await db.run_read(
        "maintenance_unjudged_count", similar_version=consolidation.SIMILAR_VERSION, scope=scope
    )
    return int(rows[0]["unjudged"])


async def backfill_similar(
    app: App,
    *,
    scope: str | None = None,
    now: datetime | None = None,
    page: int = PAGE,
    progress: Progress | None = None,
    keep_lease: Callable[[], Awaitable[None]] | None = None,
) -> Backfill:
    """Judge every active memory without the current mark against the older memories of its
    scope, link what it repeats or updates and mark it: a page of ``page`` memories per write
    transaction, in id order. ``keep_lease`` runs after each page."""
    done = Backfill()
    after = ""
    while True:
        found = await app.db.run_read(
            "maintenance_unjudged_page",
            after=after,
            limit=page,
            similar_version=consolidation.SIMILAR_VERSION,
            scope=scope,
        )
        if not found:
            return done
        items = await judge_page(app, found)
        written = await app.db.run_write(
            "maintenance_judged_page",
            items=items,
            similar_version=consolidation.SIMILAR_VERSION,
            now=now or utcnow(),
        )
        done.memories_checked += int(written[0]["judged"])
        done.linked_duplicates += int(written[0]["duplicates"])
        done.linked_updates += int(written[0]["updates"])
        after = str(found[-1]["id"])
        if progress is not None:
            progress.update(len(found))
        if keep_lease is not None:
            await keep_lease()


# ------------------------------------------------------------------ co-use and learned marks
async def decay_co_use(
    db: Database, *, half_life_days: float, now: datetime | None = None, scope: str | None = None
) -> int:
    """Store every co-use edge's weight decayed to ``now``; how many edges changed."""
    rows = await db.run_idempotent_write(
        "maintenance_decay_co_use", half_life_days=float(half_life_days), now=now or utcnow(), scope=scope
    )
    return int(rows[0]["decayed"])


async def clear_stale_learned(db: Database, *, scope: str | None = None) -> int:
    """Take learned off retrievals that hold no lesson; how many."""
    rows = await db.run_idempotent_write("maintenance_clear_learned", scope=scope)
    return int(rows[0]["cleared"])


# ------------------------------------------------------------------ the pass
@dataclass
class MaintenanceRun:
    """One pass, as its (:MaintenanceRun) record holds it."""

    id: str
    started_at: datetime
    host: str
    actor: str
    version: str
    half_life_days: float
    scope: str | None = None  # the only scope it worked on; None: the whole database
    status: str = "running"  # running, then completed, failed or cancelled
    finished_at: datetime | None = None
    memories_checked: int = 0
    linked_duplicates: int = 0
    linked_updates: int = 0
    associations_decayed: int = 0
    learned_cleared: int = 0
    lessons_judged: int = 0  # memories whose lessons were judged again (generalisation)
    lessons_travelling: int = 0  # lessons with a stage after the pass
    error: str | None = None

    def counts(self) -> dict[str, int]:
        return {
            "memories_checked": self.memories_checked,
            "linked_duplicates": self.linked_duplicates,
            "linked_updates": self.linked_updates,
            "associations_decayed": self.associations_decayed,
            "learned_cleared": self.learned_cleared,
            "lessons_judged": self.lessons_judged,
            "lessons_travelling": self.lessons_travelling,
        }

    @property
    def seconds(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "started_at": rfc3339(self.started_at),
            "finished_at": rfc3339(self.finished_at) if self.finished_at else None,
            "seconds": round(self.seconds, 2) if self.seconds is not None else None,
            "host": self.host,
            "actor": self.actor,
            "version": self.version,
            "scope": self.scope,
            "half_life_days": self.half_life_days,
            **self.counts(),
            "error": self.error,
        }


async def run_pass(
    app: App,
    *,
    actor: str = SERVER_ACTOR,
    half_life_days: float | None = None,
    scope: str | None = None,
    now: datetime | None = None,
    show_progress: bool = False,
) -> MaintenanceRun:
    """One maintenance pass under the lease (LeaseHeld when another pass holds it), recorded
    with its counts: backfill, co-use decay, learned marks. ``half_life_days``: default
    SLOWAVE_CO_USE_HALF_LIFE_DAYS; ``scope``: only that scope; ``now``: the time the pass decays
    to and dates its links by (default: the clock); ``show_progress``: a progress bar on a
    terminal. A failure is recorded (status failed) and raised."""
    run = MaintenanceRun(
        id=new_id("mnt"),
        started_at=utcnow(),
        host=socket.gethostname(),
        actor=actor,
        version=__version__,
        half_life_days=float(
            app.settings.co_use_half_life_days if half_life_days is None else half_life_days
        ),
        scope=scope,
    )
    lease = await take_lease(app.db, f"{run.host}:{os.getpid()}:{run.id}")
    try:
        await app.db.run_write(
            "maintenance_run_start", run_id=run.id, now=run.started_at, host=run.host, actor=run.actor,
            version=run.version, scope=scope, half_life_days=run.half_life_days,
        )  # fmt: skip
        try:
            await _steps(app, run, lease, now, show_progress)
            run.status = "completed"
        except BaseException as exc:  # cancelled too (a server stopping): the record says so
            run.status = "cancelled" if isinstance(exc, asyncio.CancelledError) else "failed"
            run.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            run.finished_at = utcnow()
            await _record_end(app.db, run)
    finally:
        await _release(lease)
    return run


async def _steps(
    app: App, run: MaintenanceRun, lease: Lease, now: datetime | None, show_progress: bool
) -> None:
    total = await unjudged(app.db, scope=run.scope) if show_progress else None
    with bar(
        total, "judging memories", unit="memories", enabled=None if show_progress else False
    ) as progress:
        done = await backfill_similar(app, scope=run.scope, now=now, progress=progress, keep_lease=lease.keep)
    run.memories_checked = done.memories_checked
    run.linked_duplicates = done.linked_duplicates
    run.linked_updates = done.linked_updates
    await lease.keep()
    run.associations_decayed = await decay_co_use(
        app.db, half_life_days=run.half_life_days, now=now, scope=run.scope
    )
    await lease.keep()
    run.learned_cleared = await clear_stale_learned(app.db, scope=run.scope)
    await lease.keep()
    run.lessons_judged, run.lessons_travelling = await judge_lessons(
        app, scope=run.scope, keep_lease=lease.keep
    )


async def judge_lessons(
    app: App, *, scope: str | None = None, keep_lease: Callable[[], Awaitable[None]] | None = None
) -> tuple[int, int]:
    """Every lesson judged again from the ledger (services/generalisation.py): stages follow the
    scopes in use as they come and go, lessons validated before generalisation existed form, and
    with SLOWAVE_GENERALISATION off what travelled is cleared. Returns (memories judged, lessons
    with a stage)."""
    judged = travelling = 0
    after = -1
    while True:
        rows = await app.db.run_read("maintenance_lesson_page", scope=scope, after=after, limit=LESSON_PAGE)
        if not rows:
            return judged, travelling
        lessons = await app.services.generaliser.recompute([str(r["id"]) for r in rows], utcnow())
        judged += len(rows)
        travelling += sum(1 for lesson in lessons if lesson.stage > 0)
        after = int(rows[-1]["number"])
        if keep_lease is not None:
            await keep_lease()


async def _record_end(db: Database, run: MaintenanceRun) -> None:
    """The record's end; a failure to write it is logged, never raised over the pass's own outcome."""
    try:
        await db.run_write(
            "maintenance_run_finish", run_id=run.id, now=run.finished_at, status=run.status,
            error=run.error, **run.counts(),
        )  # fmt: skip
    except Exception as exc:
        log.warning("maintenance run %s: recording its end failed: %s", run.id, exc)


async def _release(lease: Lease) -> None:
    try:
        await lease.release()
    except Exception as exc:  # it expires on its own
        log.warning("maintenance: releasing the lease failed (it expires on its own): %s", exc)


async def latest_runs(db: Database, limit: int = 20) -> list[dict[str, Any]]:
    """The latest passes, newest first, as their records hold them."""
    return await db.run_read("maintenance_runs", limit=limit)


async def seconds_until_due(db: Database, interval: float, now: datetime | None = None) -> float:
    """How long until the next pass over the whole database is due: an ``interval`` after the last
    completed one, whichever server or CLI ran it (0: due now)."""
    rows = await db.run_read("maintenance_last_completed")
    last = _native(rows[0]["finished_at"]) if rows else None
    if last is None:
        return 0.0
    return max(0.0, (last + timedelta(seconds=interval) - (now or utcnow())).total_seconds())


async def keep_current(
    app: App,
    interval: float,
    first_delay: float,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """A server's background task: a pass whenever one is due (``seconds_until_due``), checked
    again when the next one will be, so servers sharing a database run one pass per interval
    between them. Never raises: a failed pass is logged (and recorded), and tried again an
    interval later; a pass another server runs is waited for."""
    await sleep(first_delay)
    while True:
        wait = interval
        try:
            due = await seconds_until_due(app.db, interval)
            if due > 0:
                wait = due
            else:
                run = await run_pass(app)
                log.info("maintenance pass %s in %.1f s: %s", run.id, run.seconds or 0.0, run.counts())
        except asyncio.CancelledError:
            raise
        except LeaseHeld as held:
            log.info("maintenance: %s; checking again later", held)
            wait = min(interval, LEASE_SECONDS)
        except Exception as exc:  # the database may be restarting
            log.warning("maintenance pass failed: %s (next try in %.0f s)", exc, interval)
        await sleep(max(1.0, wait))
