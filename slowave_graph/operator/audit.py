"""Invariants of the memory graph: the checks behind `slowave-graph audit`.

Each check is a named statement in ``cypher/audit.cypher`` that returns one row per violation;
two checks need a little Python on top — the pages a retrieval must have exposed (recomputed with
the same pure ``paginate`` the service uses) and the id counters (compared with the highest ids).
``audit_acknowledged`` verifies, from a client's point of view, that nothing acknowledged was lost:
the soak, fault and fuzz tests record what the server confirmed and pass it here.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from slowave_graph.graph.database import Database
from slowave_graph.graph.paging import FORGOTTEN, PROCEDURES_PER_PAGE, paginate
from slowave_graph.graph.values import jsonable

# check name → Cypher statement; each returns rows (subject, problem, detail)
ROW_CHECKS: dict[str, str] = {
    "feedback_event_ids": "audit_feedback_event_ids",
    "feedback_ledger": "audit_feedback_ledger",
    "exposures": "audit_exposures",
    "retrievals": "audit_retrievals",
    "sessions": "audit_sessions",
    "commit_feedback": "audit_commit_feedback",
    "memories": "audit_memories",
    "evidence": "audit_evidence",
    "scope_isolation": "audit_scope_isolation",
    "concepts": "audit_concepts",
}
CHECKS: tuple[str, ...] = (*ROW_CHECKS, "retrieval_pages", "id_counters")


@dataclass(frozen=True)
class Violation:
    check: str
    subject: str
    problem: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class AuditReport:
    scopes: list[str] | None
    checks: dict[str, int]  # check → violations found (0: holds)
    violations: list[Violation]  # up to ``limit`` per check
    seconds: float

    @property
    def ok(self) -> bool:
        return not any(self.checks.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "scopes": self.scopes,
            "checks": self.checks,
            "violations": [asdict(v) for v in self.violations],
            "seconds": round(self.seconds, 3),
        }

    def text(self) -> str:
        where = "the whole database" if self.scopes is None else f"{len(self.scopes)} scope(s)"
        lines = [f"audit of {where}: {'OK' if self.ok else 'VIOLATIONS FOUND'} ({self.seconds:.2f}s)"]
        for name, count in self.checks.items():
            lines.append(f"  {name:<20} {'ok' if count == 0 else f'{count} violation(s)'}")
        for v in self.violations:
            lines.append(f"  - [{v.check}] {v.subject}: {v.problem} {v.detail or ''}".rstrip())
        return "\n".join(lines)


async def audit(db: Database, scopes: list[str] | None = None, limit: int = 50) -> AuditReport:
    """Run every check over ``scopes`` (None: the whole database)."""
    started = time.perf_counter()
    counts: dict[str, int] = {}
    found: list[Violation] = []
    for name, statement in ROW_CHECKS.items():
        rows = await db.run_read(statement, scopes=scopes, limit=limit)
        counts[name] = len(rows)
        found.extend(
            Violation(name, str(r["subject"]), str(r["problem"]), jsonable(r.get("detail") or {}))
            for r in rows
        )
    pages = page_violations(await db.run_read("audit_retrieval_pages", scopes=scopes))
    counts["retrieval_pages"] = len(pages)
    found.extend(pages[:limit])
    counters = counter_violations(
        await db.run_read("audit_id_sequences"), await db.run_read("audit_counter_values")
    )
    counts["id_counters"] = len(counters)
    found.extend(counters)
    return AuditReport(scopes, counts, found, time.perf_counter() - started)


def page_violations(retrievals: list[dict[str, Any]]) -> list[Violation]:
    """Exactly the items of the served pages are exposed, each on its page at its catalog rank —
    but a forgotten memory's place (``FORGOTTEN``), which has nothing left to expose."""
    out: list[Violation] = []
    for r in retrievals:
        ids, pathways = list(r["catalog_ids"] or []), list(r["pathways"] or [])
        if len(ids) != len(pathways) or not r["page_size"]:
            out.append(Violation("retrieval_pages", r["id"], "frozen catalog is malformed"))
            continue
        procedures = r["catalog_procedures"]
        pages = paginate(pathways, int(r["page_size"]), len(procedures or []))
        served = int(r["pages_served"])
        expected = {
            ids[i]: (number, i + 1)
            for number, page in enumerate(pages[:served], start=1)
            for i in page.memories
            if ids[i] != FORGOTTEN
        }
        out.extend(_exposure_violations(r["id"], expected, r["exposed"], "memory"))
        if procedures is None:  # frozen before procedures were paged: all on page 1
            if len(r["exposed_procedures"]) > PROCEDURES_PER_PAGE:
                count = len(r["exposed_procedures"])
                out.append(Violation("retrieval_pages", r["id"], f"{count} procedures exposed"))
        else:
            expected_procedures = {
                procedures[i]: (number, i + 1)
                for number, page in enumerate(pages[:served], start=1)
                for i in page.procedures
            }
            out.extend(
                _exposure_violations(r["id"], expected_procedures, r["exposed_procedures"], "procedure")
            )
        if served > max(len(pages), 1):
            out.append(Violation("retrieval_pages", r["id"], "more pages served than the catalog has"))
    return out


def _exposure_violations(
    retrieval_id: str, expected: dict[str, tuple[int, int]], exposures: list[dict[str, Any]], what: str
) -> list[Violation]:
    whats = "memories" if what == "memory" else f"{what}s"
    out: list[Violation] = []
    exposed = {e["id"]: (e["page"], e["rank"]) for e in exposures}
    if len(exposed) != len(exposures):
        out.append(Violation("retrieval_pages", retrieval_id, f"a {what} is exposed twice"))
    missing = sorted(set(expected) - set(exposed))
    extra = sorted(set(exposed) - set(expected))
    moved = sorted(i for i in set(expected) & set(exposed) if expected[i] != exposed[i])
    if missing:
        out.append(
            Violation("retrieval_pages", retrieval_id, f"served page {whats} never exposed", {"ids": missing})
        )
    if extra:
        out.append(
            Violation(
                "retrieval_pages", retrieval_id, f"{whats} exposed beyond the served pages", {"ids": extra}
            )
        )
    if moved:
        out.append(
            Violation(
                "retrieval_pages", retrieval_id, f"{what} exposed on the wrong page or rank", {"ids": moved}
            )
        )
    return out


def counter_violations(sequences: list[dict[str, Any]], counters: list[dict[str, Any]]) -> list[Violation]:
    """No id handed out twice; no counter behind the ids it has handed out."""
    values = {str(c["counter"]): c["value"] for c in counters}
    out: list[Violation] = []
    for row in sequences:
        name, top = str(row["counter"]), row["top"]
        if row["ids"] != row["distinct_ids"]:
            duplicates = int(row["ids"]) - int(row["distinct_ids"])
            out.append(Violation("id_counters", name, f"{duplicates} duplicate id(s) from this counter"))
        if top is not None and (values.get(name) is None or int(values[name]) < int(top)):
            out.append(
                Violation(
                    "id_counters",
                    name,
                    "counter is behind the ids it handed out",
                    {"counter": values.get(name), "highest_id": top},
                )
            )
    return out


# --------------------------------------------------------------------------- acknowledged writes


@dataclass
class Acknowledged:
    """What the server confirmed to clients, to be found in the graph afterwards."""

    memories: list[dict[str, Any]] = field(default_factory=list)  # memory_id, event_id, scope, content?
    feedback: list[dict[str, Any]] = field(default_factory=list)  # event_id, retrieval_id, targets
    commits: Counter[str] = field(default_factory=Counter)  # session_id → commits acknowledged "closed"

    def merge(self, other: Acknowledged) -> None:
        self.memories.extend(other.memories)
        self.feedback.extend(other.feedback)
        self.commits.update(other.commits)


async def audit_acknowledged(db: Database, acks: Acknowledged, batch: int = 2_000) -> list[Violation]:
    """Everything acknowledged is in the graph, exactly as acknowledged."""
    out: list[Violation] = []
    for start in range(0, len(acks.memories), batch):
        items = acks.memories[start : start + batch]
        rows = await db.run_read(
            "audit_acknowledged_memories",
            items=[{"memory_id": m["memory_id"], "event_id": m["event_id"]} for m in items],
        )
        for item, row in zip(items, rows, strict=True):
            if not row["found"]:
                out.append(Violation("acknowledged", item["memory_id"], "acknowledged memory is missing"))
            elif row["scope"] != item["scope"]:
                out.append(Violation("acknowledged", item["memory_id"], "memory is in another scope"))
            elif item.get("content") is not None and row["content"] != item["content"]:
                out.append(Violation("acknowledged", item["memory_id"], "memory content differs"))
            elif not row["from_event"]:
                out.append(Violation("acknowledged", item["memory_id"], "memory lost its reported event"))
    for start in range(0, len(acks.feedback), batch):
        items = acks.feedback[start : start + batch]
        rows = await db.run_read(
            "audit_acknowledged_feedback",
            items=[{"event_id": f["event_id"], "retrieval_id": f["retrieval_id"]} for f in items],
        )
        for item, row in zip(items, rows, strict=True):
            if row["copies"] != 1:
                out.append(
                    Violation("acknowledged", item["event_id"], f"accepted event found {row['copies']} times")
                )
            elif row["statuses"] != ["accepted"] or row["targets"][0] not in item["targets"]:
                out.append(
                    Violation("acknowledged", item["event_id"], "event differs from what was accepted")
                )
    twice = sorted(sid for sid, n in acks.commits.items() if n > 1)
    out.extend(
        Violation("acknowledged", sid, "two commits both reported closing the session") for sid in twice
    )
    sessions = sorted(acks.commits)
    for start in range(0, len(sessions), batch):
        rows = await db.run_read("audit_acknowledged_sessions", session_ids=sessions[start : start + batch])
        for row in rows:
            if not (row["found"] and row["status"] == "ended" and row["committed"] and row["episodes"] == 1):
                out.append(
                    Violation(
                        "acknowledged",
                        row["session_id"],
                        "committed session is not closed once",
                        jsonable(row),
                    )
                )
    return out
