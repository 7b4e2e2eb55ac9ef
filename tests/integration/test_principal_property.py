"""Two principals interleaved at random, each with a named token granted its own scope: neither can
observe or change the other's sessions, retrievals, cursors, continuity lines or memories.

Each step one of them either works normally (activate, remember, recall, continue a page,
feedback, commit) or attacks with what the other holds — as if its ids had leaked: the other's
session (remember, recall, commit), retrieval (feedback, scalar and batch), cursor, continuity
line, memory (feedback on its own retrieval, as a replacement) and scope. Every attack must be
refused, no answer may carry an id of the other's that the caller did not send itself, and
afterwards every session lies in a scope its principal was granted and the audit is clean.

The interleaving is random (seed in the failure message); SLOWAVE_PRINCIPAL_STEPS raises the
number of steps for a deeper run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from slowave_graph.access.tokens import TokensFile
from slowave_graph.app import App
from slowave_graph.commands.serve import site
from slowave_graph.mcp.server import build_server
from slowave_graph.operator.audit import audit
from tests.support.mcp_helpers import call, commit_args
from tests.support.servers import client_as, serve_in_process

pytestmark = [pytest.mark.neo4j]

STEPS = int(os.environ.get("SLOWAVE_PRINCIPAL_STEPS", "60"))
SEED = int(os.environ.get("SLOWAVE_PRINCIPAL_SEED", str(random.randrange(1 << 30))))
FACTS = [
    "The shop deploys on Tuesdays after the release review",
    "Checkout retries payment captures three times before failing",
    "The staging database is refreshed from production every Sunday",
    "Search results are cached for ten minutes in the edge layer",
]


@dataclass
class Agent:
    name: str
    scope: str
    client: Client
    sessions: list[str] = field(default_factory=list)  # open ones
    retrievals: list[dict[str, Any]] = field(default_factory=list)  # unsettled results
    cursors: list[str] = field(default_factory=list)
    continuity: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)

    def ids(self) -> set[str]:
        got = {*self.sessions, *self.cursors, *self.continuity, *self.memories, *self.ended}
        return got | {r["retrieval_id"] for r in self.retrievals}


@dataclass
class Run:
    rng: random.Random
    attacks: int = 0
    refused: int = 0
    leaks: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)


async def work(agent: Agent, run: Run) -> None:
    """One normal step of an agent in its own scope."""
    rng = run.rng
    choice = rng.choice(["activate", "remember", "recall", "page", "feedback", "commit"])
    if choice == "activate" or not agent.sessions:
        args = {"task": "Check the shop notes", "initial_goal": "Find what applies", "scope": agent.scope}
        if agent.continuity and rng.random() < 0.5:
            args["continuity_id"] = rng.choice(agent.continuity)
        data = (await call(agent.client, "slowave_activate", args))["data"]
        agent.sessions.append(data["session_id"])
        agent.continuity.append(data["continuity_id"])
        agent.retrievals.append(data)
        if data.get("continue_from"):
            agent.cursors.append(data["continue_from"])
    elif choice == "remember":
        args = {"scope": agent.scope, "session_id": rng.choice(agent.sessions),
                "content": f"{rng.choice(FACTS)} ({agent.name} {rng.randrange(1000)})", "type": "fact"}  # fmt: skip
        agent.memories.append((await call(agent.client, "slowave_remember", args))["data"]["memory_id"])
    elif choice == "recall":
        args = {"scope": agent.scope, "session_id": rng.choice(agent.sessions),
                "query": "What do the shop notes say?", "page_size": 1}  # fmt: skip
        data = (await call(agent.client, "slowave_recall", args))["data"]
        agent.retrievals.append(data)
        if data.get("continue_from"):
            agent.cursors.append(data["continue_from"])
    elif choice == "page" and agent.cursors:
        cursor = agent.cursors.pop(0)
        owner = next((r for r in agent.retrievals if r.get("continue_from") == cursor), None)
        if owner is not None and owner["session_id"] in agent.sessions:
            args = {"scope": agent.scope, "session_id": owner["session_id"], "continue_from": cursor}
            data = (await call(agent.client, "slowave_recall", args))["data"]
            owner["memories"] = owner["memories"] + data["memories"]
            owner["procedures"] = owner.get("procedures", []) + data["procedures"]
    elif choice in ("feedback", "commit") and agent.retrievals:
        shown = agent.retrievals.pop(0)
        await call(agent.client, "slowave_feedback", {
            "retrieval_id": shown["retrieval_id"], "coverage": "complete",
            "memory_feedback": [{"memory_id": m["memory_id"], "assessment": "not_used"}
                                for m in shown["memories"]],
            "procedure_feedback": [{"procedure_id": p["procedure_id"], "use": "not_used"}
                                   for p in shown.get("procedures", [])],
        })  # fmt: skip
        session = shown.get("session_id")
        pending = [r for r in agent.retrievals if r.get("session_id") == session]
        if (
            choice == "commit"
            and session in agent.sessions
            and not pending
            and not shown.get("continue_from")
        ):
            await call(agent.client, "slowave_commit", commit_args(session))
            agent.sessions.remove(session)
            agent.ended.append(session)


def attacks(me: Agent, other: Agent, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Calls with the other's ids (those it holds now)."""
    pick: Callable[[list[str]], str | None] = lambda ids: rng.choice(ids) if ids else None  # noqa: E731
    out: list[tuple[str, dict[str, Any]]] = []
    session = pick(other.sessions + other.ended)
    if session:
        out += [
            (
                "slowave_remember",
                {"scope": me.scope, "session_id": session, "content": "Planted", "type": "fact"},
            ),
            ("slowave_recall", {"scope": other.scope, "session_id": session, "query": "shop notes"}),
            ("slowave_commit", commit_args(session, outcome="failure")),
        ]
    shown = rng.choice(other.retrievals) if other.retrievals else None
    if shown:
        stale = [{"memory_id": m["memory_id"], "assessment": "stale", "stale_reason": "outdated",
                  "reason": "says who"} for m in shown["memories"]]  # fmt: skip
        out += [
            ("slowave_feedback", {"retrieval_id": shown["retrieval_id"], "coverage": "complete",
                                  "memory_feedback": stale}),
            ("slowave_feedback", {"items": [{"retrieval_id": shown["retrieval_id"], "coverage": "complete"}]}),
        ]  # fmt: skip
    cursor, mine = pick(other.cursors), pick(me.sessions)
    if cursor and mine:
        out.append(("slowave_recall", {"scope": me.scope, "session_id": mine, "continue_from": cursor}))
    line = pick(other.continuity)
    if line:
        out.append(
            ("slowave_activate", {"task": "t", "initial_goal": "g", "scope": me.scope, "continuity_id": line})
        )
    out.append(("slowave_activate", {"task": "Read their notes", "initial_goal": "g", "scope": other.scope}))
    memory, own = pick(other.memories), (rng.choice(me.retrievals) if me.retrievals else None)
    if memory and own:
        out.append(("slowave_feedback", {"retrieval_id": own["retrieval_id"], "memory_feedback": [
            {"memory_id": memory, "assessment": "used"}]}))  # fmt: skip
    if memory and own and own["memories"]:
        out.append(("slowave_feedback", {"retrieval_id": own["retrieval_id"], "memory_feedback": [
            {"memory_id": own["memories"][0]["memory_id"], "assessment": "stale", "stale_reason": "superseded",
             "reason": "replaced", "replacement_memory_id": memory}]}))  # fmt: skip
    return out


def refused(tool: str, envelope: dict[str, Any]) -> bool:
    if envelope["ok"] is False:
        return True
    data = envelope["data"]
    if "results" in data:  # batch feedback: its one item failed
        return all(r["ok"] is False for r in data["results"])
    # feedback on own retrieval naming the other's memory: rejected entry, nothing accepted
    return tool == "slowave_feedback" and data["accepted_event_ids"] == [] and bool(data["rejected"])


async def test_two_principals_cannot_touch_each_others_work(app: App, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    tokens_file = TokensFile(tmp_path / "tokens.json")
    names = {"alice": f"prop:{tag}-alice", "mallory": f"prop:{tag}-mallory"}
    tokens = {name: tokens_file.add(name, [scope]) for name, scope in names.items()}
    settings = app.settings.model_copy(update={"tokens_file": tokens_file.path})
    served = dataclasses.replace(app, settings=settings)
    run = Run(random.Random(SEED))
    async with (
        serve_in_process(site(served, build_server(served))) as base,
        client_as(base, tokens["alice"]) as alice_client,
        client_as(base, tokens["mallory"]) as mallory_client,
    ):
        agents = [
            Agent("alice", names["alice"], alice_client),
            Agent("mallory", names["mallory"], mallory_client),
        ]
        for agent in agents:  # something to steal from the start
            await work(agent, run)
        for step in range(STEPS):
            me, other = run.rng.sample(agents, 2)
            if run.rng.random() < 0.5:
                await work(me, run)
                continue
            theirs = other.ids()
            for tool, args in attacks(me, other, run.rng):
                envelope = await call(me.client, tool, args)
                run.attacks += 1
                sent = json.dumps(args)
                answer = json.dumps(envelope)
                seen = [i for i in theirs if i in answer and i not in sent]
                if seen:
                    run.leaks.append(f"step {step} {tool}: {seen}")
                if refused(tool, envelope):
                    run.refused += 1
                else:
                    run.accepted.append(f"step {step} {tool} {sent[:200]} -> {answer[:300]}")
    assert run.leaks == [], f"seed {SEED}: {run.leaks[:5]}"
    assert run.accepted == [], f"seed {SEED}: {run.accepted[:5]}"
    assert run.attacks > 0 and run.refused == run.attacks
    # every session lies in a scope its principal was granted; nothing crossed
    rows = await app.db.driver.execute_query(
        "MATCH (s:Session) WHERE s.scope IN $scopes RETURN s.principal AS principal, s.scope AS scope",
        scopes=list(names.values()),
        database_=app.db.database,
    )
    principal = {name: tokens_file.identify(token.encode()) for name, token in tokens.items()}
    granted = {(principal[n].principal, s) for n, s in names.items() if principal[n] is not None}
    assert {(r["principal"], r["scope"]) for r in rows.records} <= granted
    report = await audit(app.db, list(names.values()))
    assert report.violations == [], report.violations[:5]
