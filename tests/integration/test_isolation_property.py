"""Scope isolation as a property: random, interleaved work in several scopes — including twins whose
names differ only by case or -/_ — while every answer is checked for anything of another scope.

Each scope's texts carry its tag, so a memory, procedure or evidence record from elsewhere is
recognised wherever it shows up (direct or associated pathway, procedures, full evidence). Agents
also try to cross scopes on purpose: feedback on another scope's memory, a replacement from
another scope, its session, cursor and continuity line. None of that may be accepted, and the
audit's scope-isolation check must find no relationship between scopes afterwards.

The interleaving is random (seed printed on failure); SLOWAVE_ISOLATION_STEPS raises the number
of steps per agent for a deeper run.
"""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph.operator.audit import audit
from slowave_graph_lab.bench.soak import scope_tag, tag_of, tagged
from tests.support.mcp_helpers import call, commit_args, ok
from tests.support.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j

STEPS = int(os.environ.get("SLOWAVE_ISOLATION_STEPS", "3"))
SEED = int(os.environ.get("SLOWAVE_ISOLATION_SEED", str(random.randrange(1 << 30))))
FACTS = [
    ("auth", "Atlas authentication credentials expire after 45 minutes"),
    ("auth", "Atlas locks an account after 5 failed login attempts"),
    ("deploy", "Deploys go out through the release pipeline on weekdays"),
    ("deploy", "A deploy needs a green CI run and one approving review"),
]
QUESTIONS = ["How long do Atlas login tokens stay valid?", "How do deploys to production work?"]


@dataclass
class Ledger:
    """What each scope's agents hold: ids to try from other scopes."""

    memories: dict[str, list[str]] = field(default_factory=dict)
    sessions: dict[str, list[str]] = field(default_factory=dict)
    cursors: dict[str, list[str]] = field(default_factory=dict)
    continuity: dict[str, list[str]] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)
    crossings: list[str] = field(default_factory=list)  # scope-crossing attempts that were refused
    checked: int = 0

    def foreign(self, kind: dict[str, list[str]], scope: str, rng: random.Random) -> str | None:
        pool = [i for s, ids in kind.items() if s != scope for i in ids]
        return rng.choice(pool) if pool else None


def check(ledger: Ledger, scope: str, data: dict[str, Any]) -> None:
    """Everything an answer shows must carry this scope's tag."""
    tag = scope_tag(scope)
    shown = [("memory", m["memory_id"], m["content"]) for m in data.get("memories", [])]
    shown += [
        ("procedure", p["procedure_id"], p["goal"] + " " + p["summary"]) for p in data.get("procedures", [])
    ]
    shown += [
        ("evidence", e["evidence_id"], e["content"]) for e in data.get("evidence", []) if "content" in e
    ]
    for kind, ident, text in shown:
        ledger.checked += 1
        found = tag_of(text)
        if found is None or found[0] != tag:
            ledger.leaks.append(f"{kind} {ident} shown in {scope}: {text[:60]!r}")


async def agent(client: Client, scope: str, rng: random.Random, ledger: Ledger) -> None:
    for _ in range(STEPS):
        topic_fact = rng.choice(FACTS)
        act = ok(await call(client, "slowave_activate", {
            "task": tagged(rng.choice(QUESTIONS), scope, topic_fact[0], None), "initial_goal": "Answer it",
            "scope": scope, "page_size": 2,
        }))  # fmt: skip
        check(ledger, scope, act)
        session = act["session_id"]
        ledger.sessions.setdefault(scope, []).append(session)
        ledger.continuity.setdefault(scope, []).append(act["continuity_id"])
        topic, claim = topic_fact
        stored = ok(await call(client, "slowave_remember", {
            "scope": scope, "session_id": session, "type": "fact",
            "content": tagged(claim, scope, topic, f"{rng.getrandbits(20):05x}"),
        }))  # fmt: skip
        ledger.memories.setdefault(scope, []).append(stored["memory_id"])
        found = ok(await call(client, "slowave_recall", {
            "scope": scope, "session_id": session, "query": rng.choice(QUESTIONS), "page_size": 1,
            "evidence": "full",
        }))  # fmt: skip
        check(ledger, scope, found)
        if found.get("continue_from"):
            ledger.cursors.setdefault(scope, []).append(found["continue_from"])
        await cross(client, scope, session, act, found, stored["memory_id"], rng, ledger)
        for result in (act, found):
            data = ok(await call(client, "slowave_feedback", {
                "retrieval_id": result["retrieval_id"], "coverage": "complete",
                "memory_feedback": [{"memory_id": m["memory_id"], "assessment": "used"} for m in result["memories"]],
                "procedure_feedback": [{"procedure_id": p["procedure_id"], "use": "used", "effect": "helped",
                                        "contribution": "followed"} for p in result["procedures"]],
            }))  # fmt: skip
            assert data["rejected"] == [], data["rejected"]
        procedure = {"summary": tagged("Answer from memory", scope, topic, None), "context": {"topic": topic},
                     "steps": [{"summary": "recall, then check"}], "caveats": []}  # fmt: skip
        args = commit_args(session, final_goal=tagged("Answer it", scope, topic, None), procedure=procedure)
        ok(await call(client, "slowave_commit", args))


async def cross(
    client: Client, scope: str, session: str, act: dict[str, Any], found: dict[str, Any], mine: str,
    rng: random.Random, ledger: Ledger,
) -> None:  # fmt: skip
    """Try to reach into another scope; every attempt must be refused."""
    other_memory = ledger.foreign(ledger.memories, scope, rng)
    if other_memory is not None:
        data = ok(await call(client, "slowave_feedback", {
            "retrieval_id": act["retrieval_id"],
            "memory_feedback": [{"memory_id": other_memory, "assessment": "used"}],
        }))  # fmt: skip
        assert data["accepted_event_ids"] == [] and [r["reason"] for r in data["rejected"]] == [
            "target_not_exposed"
        ], data
        ledger.crossings.append("feedback on a foreign memory")
        if found["memories"]:
            data = ok(await call(client, "slowave_feedback", {
                "retrieval_id": found["retrieval_id"],
                "memory_feedback": [{"memory_id": found["memories"][0]["memory_id"], "assessment": "stale",
                                     "stale_reason": "superseded", "reason": "r",
                                     "replacement_memory_id": other_memory}],
            }))  # fmt: skip
            assert data["applied"]["stale"] == [] and [r["reason"] for r in data["rejected"]] == [
                "replacement_scope_mismatch"
            ], data
            ledger.crossings.append("replacement from a foreign scope")
    attempts: list[tuple[str, dict[str, Any]]] = []
    other_session = ledger.foreign(ledger.sessions, scope, rng)
    if other_session is not None:
        attempts.append(("slowave_remember", {"scope": scope, "session_id": other_session,
                                              "content": "x", "type": "fact"}))  # fmt: skip
        attempts.append(("slowave_recall", {"scope": scope, "session_id": other_session, "query": "x"}))
    other_cursor = ledger.foreign(ledger.cursors, scope, rng)
    if other_cursor is not None:
        attempts.append(
            ("slowave_recall", {"scope": scope, "session_id": session, "continue_from": other_cursor})
        )
    other_line = ledger.foreign(ledger.continuity, scope, rng)
    if other_line is not None:
        attempts.append(("slowave_activate", {"task": "t", "initial_goal": "g", "scope": scope,
                                              "continuity_id": other_line}))  # fmt: skip
    for tool, args in attempts:
        envelope = await call(client, tool, args)
        assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_input", (tool, envelope)
        ledger.crossings.append(tool)
    assert mine  # the agent's own memory stays usable for its own scope


async def test_no_call_ever_crosses_a_scope(app: App) -> None:
    run = uuid.uuid4().hex[:8]
    scopes = [f"iso-{run}:shop", f"iso-{run}:Shop", f"iso-{run}:sh-op", f"iso-{run}:a:b"]
    rngs = [random.Random(f"{SEED}:{i}") for i in range(len(scopes))]
    ledger = Ledger()
    try:
        async with Client(build_server(app), client_info=CLIENT_INFO) as client:
            await asyncio.gather(*(agent(client, s, r, ledger) for s, r in zip(scopes, rngs, strict=True)))
        report = await audit(app.db, scopes)
    finally:
        for scope in scopes:
            await app.db.run_write("delete_scope", scope=scope)
    assert ledger.leaks == [], f"seed {SEED}: {ledger.leaks[:5]}"
    assert report.ok, f"seed {SEED}: {report.text()}"
    # the property was exercised: answers with content, and refused crossings of every kind
    assert ledger.checked >= len(scopes) * STEPS, ledger.checked
    assert {"feedback on a foreign memory", "slowave_remember", "slowave_recall", "slowave_activate"} <= set(
        ledger.crossings
    ), set(ledger.crossings)
