"""Lessons that travel between scopes, earned from the feedback ledger.

An agent that learned "run `uv sync` before the tests" in three repositories should get it in the
fourth. A memory's *lesson* is the memory together with its near-duplicates remembered in other
scopes (the same rule in other words: services/consolidation.py ``same_lesson``); its *origin* is
the oldest member that was validated somewhere, the one that travels. A scope *validates* the
lesson when, over its sessions, the members' effective assessments by that scope's retrievals —
used with effect helped (+1), used with effect harmed or stale (−1); neutral marks count nothing —
add up to more helped than not. The stage follows from how many scopes and sessions validated it,
and how broad that is against the scopes in use (those with a session in the last ``ACTIVE_DAYS``):

====== ============================ ==================================================================
stage  shown in                     earned by (all of)
====== ============================ ==================================================================
0      its own scope                —
1      scopes of its own kind       2 scopes of its kind, 3 sessions
2      every scope, ranked × 0.70   3 scopes, 5 sessions, a quarter of its kind's active scopes
3      every scope, ranked as local 5 scopes of 2 kinds, 8 sessions, 40 % of all active scopes
====== ============================ ==================================================================

Why these: the minimum counts keep one enthusiastic session or a pair of look-alike repositories
from promoting anything (two scopes are the least that can say "not specific to one place", and
sessions must outnumber scopes so each scope's vote rests on more than one task); the breadth
terms make the bar grow with the installation, so in a store of two hundred active repositories
three of them cannot make a lesson global — the shape of the reference's promotion (distinct
validating scopes and sessions relative to the scopes active in the last 90 days). Below stage 3 a
travelling lesson ranks below local memories (score × ``FOREIGN_WEIGHT``), as the reference's
contextual memories do.

Trust. A memory of scope A is shown in scope B only to a token whose grants cover A (the caller
filters promoted hits by ``ClientInfo.may_use``). And a lesson earns a stage only on evidence
from a principal that may use every scope (the local user, the master token) or from two
principals at least (``trusted``): a token limited to a few scopes cannot, with its own feedback
in two of them, send its text into every scope of the kind. Stale, suppressed and superseded
memories never travel.

A function of the ledger and the store: recomputing changes nothing, resubmitting feedback changes
nothing, and a later not_used, harmed or stale takes the evidence back (a lesson can lose its
stage). Its limits: a lesson's members are found among the origin's ``NEIGHBOURS`` nearest
other-scope memories (an approximate index search) and as many best full-text matches of its
names and values, so a lesson remembered in more scopes counts 65 copies at most, and two
recomputations racing each other leave the later writer's view until the next one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from slowave_graph.embedding.embedder import Embedder
from slowave_graph.graph.database import Database
from slowave_graph.services import consolidation
from slowave_graph.services.calibration import scale_for
from slowave_graph.services.context import LOCAL_PRINCIPAL, UNRESTRICTED_PRINCIPALS
from slowave_graph.services.text import lucene_query, scope_token, split_scope

log = logging.getLogger(__name__)

ACTIVE_DAYS = 90
FOREIGN_WEIGHT = 0.70
# Other scopes' memories judged per member, nearest by cosine and as many best by BM25: more than
# remember's 8, since near-copies of a rule that name other things ("run X sync …" for another X,
# in scope after scope) can be nearer than a true paraphrase and are only told apart by the judge,
# which is cheap next to the search.
NEIGHBOURS = 32
FETCH = 96  # vector index over-fetch before the other-scope filter
ACTIVE_TTL = 600.0  # seconds the active-scope counts are reused
UNRESTRICTED = "*"  # the principals that may use every scope, as one (the local user, the master token)


@dataclass(frozen=True)
class Stage:
    """The thresholds of one stage (see the module table)."""

    number: int
    scopes: int
    sessions: int
    kinds: int = 1
    kind_breadth: float = 0.0  # validated scopes of its kind / active scopes of its kind
    breadth: float = 0.0  # validated scopes / all active scopes
    same_kind: bool = False  # count only scopes of the origin's kind


STAGES = (
    Stage(1, scopes=2, sessions=3, same_kind=True),
    Stage(2, scopes=3, sessions=5, kind_breadth=0.25),
    Stage(3, scopes=5, sessions=8, kinds=2, breadth=0.40),
)


@dataclass(frozen=True)
class ScopeEvidence:
    """What one scope says of a lesson: its sessions that validated it, which members, and whose
    sessions they were."""

    scope: str
    sessions: int
    via: tuple[str, ...]
    principals: tuple[str, ...] = (UNRESTRICTED,)

    @property
    def kind(self) -> str:
        return split_scope(self.scope)[0]


def validations(members: Iterable[dict[str, Any]]) -> list[ScopeEvidence]:
    """The scopes that validate a lesson, from its members' evidence rows (lesson_evidence): per
    scope and session the signs add up (a session that used it helpfully and later found it
    harmful counts nothing); a scope validates when its sessions' net is positive, counting the
    sessions that came out positive."""
    per_session: dict[tuple[str, str], int] = defaultdict(int)
    via: dict[str, set[str]] = defaultdict(set)
    owner: dict[tuple[str, str], str] = {}
    for member in members:
        for row in member["evidence"]:
            if row["scope"] is None:
                continue
            key = (row["scope"], str(row["session_id"]))
            per_session[key] += int(row["sign"])
            owner[key] = _principal(row.get("principal"))
            if row["sign"] > 0:
                via[row["scope"]].add(member["id"])
    net: dict[str, int] = defaultdict(int)
    positive: dict[str, int] = defaultdict(int)
    principals: dict[str, set[str]] = defaultdict(set)
    for key, total in per_session.items():
        scope = key[0]
        net[scope] += 1 if total > 0 else (-1 if total < 0 else 0)
        positive[scope] += 1 if total > 0 else 0
        if total > 0:
            principals[scope].add(owner[key])
    return [
        ScopeEvidence(scope, positive[scope], tuple(sorted(via[scope])), tuple(sorted(principals[scope])))
        for scope in sorted(net)
        if net[scope] > 0
    ]


def _principal(principal: object) -> str:
    """Whose session validated: the local user and the master token may use every scope (one
    name for both); a named token is itself."""
    name = str(principal or LOCAL_PRINCIPAL)
    return UNRESTRICTED if name in UNRESTRICTED_PRINCIPALS else name


def trusted(evidence: Sequence[ScopeEvidence]) -> bool:
    """Whether a lesson's evidence may make it travel: validated by a principal that may use every
    scope, or by two principals at least. A token limited to a few scopes cannot, on its own
    feedback, send its text into scopes it could never write to."""
    found = {p for e in evidence for p in e.principals}
    return UNRESTRICTED in found or len(found) >= 2


def stage_of(kind: str, evidence: Sequence[ScopeEvidence], active: dict[str, int]) -> int:
    """The highest stage whose every threshold the evidence meets (0 when none, and when the
    evidence is not ``trusted``)."""
    if not trusted(evidence):
        return 0
    reached = 0
    all_active = max(sum(active.values()), 1)
    for stage in STAGES:
        counted = [e for e in evidence if e.kind == kind] if stage.same_kind else list(evidence)
        of_kind = sum(1 for e in evidence if e.kind == kind)
        if (
            len(counted) >= stage.scopes
            and sum(e.sessions for e in counted) >= stage.sessions
            and len({e.kind for e in counted}) >= stage.kinds
            and of_kind / max(active.get(kind, 0), 1) >= stage.kind_breadth
            and len(evidence) / all_active >= stage.breadth
        ):
            reached = stage.number
    return reached


@dataclass
class Lesson:
    """A lesson as written by set_lessons."""

    origin: str
    kind: str
    stage: int
    scopes: list[ScopeEvidence]
    members: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "kind": self.kind,
            "stage": self.stage,
            "sessions": sum(e.sessions for e in self.scopes),
            "scopes": [
                {"scope": e.scope, "sessions": e.sessions, "weight": float(e.sessions), "via": list(e.via)}
                for e in self.scopes
            ],
            "members": self.members,
        }


class Generaliser:
    """Recomputes the lessons a set of memories belongs to (after feedback on them, or in the
    maintenance pass). ``enabled`` False (SLOWAVE_GENERALISATION): nothing is promoted, and a
    recomputation clears what was."""

    def __init__(self, db: Database, embedder: Embedder, enabled: bool = True) -> None:
        self.db = db
        self.embedder = embedder
        self.enabled = enabled
        self._active: tuple[float, dict[str, int]] | None = None
        self._waiting: set[str] = set()
        self._worker: asyncio.Task[None] | None = None

    def judge_soon(self, memory_ids: Iterable[str], clock: Callable[[], datetime]) -> None:
        """Judge these memories' lessons again, after the caller has answered. Feedback does not
        wait for it: the judging searches other scopes and runs the same-lesson judge, about ten
        times the rest of a feedback call at 10k memories. One worker judges what has gathered, so calls
        that come close together are judged together, in order; what a crash loses, the
        maintenance pass judges again."""
        self._waiting.update(memory_ids)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._judge_waiting(clock))

    async def _judge_waiting(self, clock: Callable[[], datetime]) -> None:
        while self._waiting:
            ids = sorted(self._waiting)
            self._waiting.clear()
            try:
                await self.recompute(ids, clock())
            except Exception:  # the feedback is committed; the maintenance pass judges again
                log.warning("lessons of %s not judged again (the maintenance pass will)", ids, exc_info=True)

    async def idle(self) -> None:
        """Returns once every judging asked for so far is done (a server closing, a test)."""
        while self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)

    async def active_scopes(self, now: datetime) -> dict[str, int]:
        cached = self._active
        if cached is not None and time.monotonic() - cached[0] < ACTIVE_TTL:
            return cached[1]
        rows = await self.db.run_read("active_scopes", since=now - timedelta(days=ACTIVE_DAYS))
        counts = {str(r["kind"]): int(r["scopes"]) for r in rows}
        self._active = (time.monotonic(), counts)
        return counts

    async def _evidence(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        return {str(r["id"]): r for r in await self.db.run_read("lesson_evidence", ids=wanted)}

    async def _duplicates(self, ids: list[str]) -> dict[str, list[str]]:
        """Per memory, the active memories of other scopes that are the same lesson
        (consolidation.same_lesson)."""
        if not ids:
            return {}
        evidence = await self._evidence(ids)
        memories = [
            {"id": i, "lucene": _elsewhere(str(r["content"]), str(r["scope"]))} for i, r in evidence.items()
        ]
        rows = await self.db.run_read("lesson_neighbours", memories=memories, fetch=FETCH, k=NEIGHBOURS)
        scale = await scale_for(self.embedder)
        out: dict[str, list[str]] = {}
        for row in rows:
            mine = evidence[row["id"]]
            out[str(row["id"])] = [
                str(n["id"]) for n in row["near"] if _same_lesson(mine, n, scale.statement_z)
            ]
        return out

    async def recompute(self, memory_ids: Iterable[str], now: datetime) -> list[Lesson]:
        """The lessons these memories belong to, judged again and written. Returns them."""
        seen = await self._evidence(memory_ids)
        # lessons they already count for, and the lessons of those validated anywhere
        pending: set[str] = {str(o) for row in seen.values() for o in row["origins"]}
        candidates = [i for i, row in seen.items() if self.enabled and _active_and_validated(row)]
        duplicates = await self._duplicates(candidates)
        if duplicates:
            rows = await self._evidence({d for found in duplicates.values() for d in found})
            for member, found in duplicates.items():
                cluster = [seen[member], *(rows[d] for d in found if d in rows)]
                if len({str(r["scope"]) for r in cluster}) > 1 or _validated_elsewhere(seen[member]):
                    pending.add(_oldest(r for r in cluster if _active_and_validated(r)))
        lessons: dict[str, Lesson] = {}
        while pending:  # an origin that finds an older validated member hands the lesson on to it
            origin = pending.pop()
            if origin in lessons:
                continue
            lesson, older = await self._lesson(origin, now)
            lessons[origin] = lesson
            if older is not None and older not in lessons:
                pending.add(older)
        judged = [lessons[o] for o in sorted(lessons)]
        if judged:
            await self.db.run_write("set_lessons", lessons=[lesson.row() for lesson in judged], now=now)
        return judged

    async def _lesson(self, origin: str, now: datetime) -> tuple[Lesson, str | None]:
        """One lesson judged from its origin: the members (origin and its other-scope duplicates),
        the scopes that validate it, its stage; and the member that is the lesson's true origin
        when that is not this one (an older validated member: this one then holds nothing). An
        inactive origin or generalisation turned off: no evidence, stage 0 (what it held is
        cleared)."""
        found = (await self._evidence([origin])).get(origin)
        if found is None or found["status"] != "active" or not self.enabled:
            kind = split_scope(str(found["scope"]))[0] if found else ""
            return Lesson(origin, kind, 0, [], []), None
        duplicates = (await self._duplicates([origin])).get(origin, [])
        members = [found, *(await self._evidence(duplicates)).values()]
        members = [m for m in members if m["status"] == "active"]
        kind = split_scope(str(found["scope"]))[0]
        validated = [m for m in members if _active_and_validated(m)]
        true_origin = _oldest(validated) if validated else origin
        if true_origin != origin:
            return Lesson(origin, kind, 0, [], []), true_origin
        evidence = validations(members)
        if len(evidence) < 2:  # validated in one scope at most: nothing travels, no edges kept
            return Lesson(origin, kind, 0, [], [str(m["id"]) for m in members]), None
        stage = stage_of(kind, evidence, await self.active_scopes(now))
        return Lesson(origin, kind, stage, evidence, [str(m["id"]) for m in members]), None


def _elsewhere(content: str, scope: str) -> str | None:
    """A full-text query for other scopes' memories that mention a memory's names and values (None
    when it has none): its other wordings must (consolidation.same_lesson), and a rule repeated
    for other tools does not."""
    names = " ".join(consolidation.names_and_values(content))
    return lucene_query(names, scope_token(scope), other_scopes=True)


def _same_lesson(mine: dict[str, Any], near: dict[str, Any], statement_z: Callable[[float], float]) -> bool:
    """consolidation.same_lesson with the later-written of the two as the new claim, the order in
    which remember judges a paraphrase (the judgement is not symmetric)."""
    z = statement_z(float(near["cosine"]))
    if _age(near) > _age(mine):
        return consolidation.same_lesson(str(near["content"]), str(mine["content"]), z)
    return consolidation.same_lesson(str(mine["content"]), str(near["content"]), z)


def _age(row: dict[str, Any]) -> tuple[int, int]:
    """When a memory was written, for ordering (ties: its id number)."""
    return int(row["created_at"] or 0), int(str(row["id"]).split("_")[1])


def _active_and_validated(row: dict[str, Any]) -> bool:
    return row["status"] == "active" and any(e["sign"] > 0 for e in row["evidence"])


def _validated_elsewhere(row: dict[str, Any]) -> bool:
    """Whether a memory was validated by a retrieval of another scope (it travelled there)."""
    return any(e["sign"] > 0 and e["scope"] != row["scope"] for e in row["evidence"])


def _oldest(rows: Iterable[dict[str, Any]]) -> str:
    """The origin of a lesson: its oldest validated member (ties: the smaller id number). A copy
    nobody found useful does not carry the lesson."""
    return str(min(rows, key=_age)["id"])
