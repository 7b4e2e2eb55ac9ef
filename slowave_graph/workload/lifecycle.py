"""Full tool-call lifecycles over any MCP client (activate → remember → recall → feedback →
commit, with plausible honest feedback): what the JVM's training runs and `bench load` drives."""

from __future__ import annotations

import random
import secrets
from typing import Any

from slowave_graph.workload import driver, synthetic
from slowave_graph.workload.driver import Recorder


async def call(client: Any, rec: Recorder, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    try:
        answer = await rec.call(client, tool, arguments)
    except Exception as exc:  # transport failure: counted, the lifecycle stops
        rec.errors[f"{tool}:{type(exc).__name__}"] += 1
        return None
    try:
        return driver.data_of(tool, answer)
    except driver.Refused as refused:
        rec.errors[f"{tool}:{refused.code}"] += 1
        return None


def honest_feedback(result: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Plausible honest feedback on everything a retrieval exposed."""
    return driver.complete_feedback(result, lambda _: rng.choice(["used", "not_used", "irrelevant"]))


def remember_args(scope: str, session: str, rng: random.Random) -> dict[str, Any]:
    kind, content = synthetic.memory_text(rng)
    # The tag keeps the claim new: remember matches an exact repeat and only reinforces it, which
    # costs Neo4j no index writes. It comes from the OS, not from rng: a seeded tag repeated the
    # previous run's claims on a reused database, whose remembers then ran much faster than new
    # claims do (docs/performance.md, "Measuring").
    return driver.session_args(scope, session, type=kind, content=f"{content} ({secrets.token_hex(5)})")


def commit_args(session: str, goal: str, outcome: str) -> dict[str, Any]:
    unverified = {"status": "unverified", "summary": "synthetic", "evidence_refs": []}
    return driver.commit_args(session, goal, outcome, "load benchmark lifecycle", unverified)


async def lifecycle(client: Any, rec: Recorder, rng: random.Random, scope: str) -> bool:
    task = synthetic.question(rng)
    act = await call(client, rec, "slowave_activate", driver.activate_args(scope, task))
    if act is None:
        return False
    session = act["session_id"]
    remembered = await call(client, rec, "slowave_remember", remember_args(scope, session, rng))
    found = await call(
        client, rec, "slowave_recall", driver.session_args(scope, session, query=synthetic.question(rng))
    )
    ok = remembered is not None and found is not None
    for shown in (act, found):
        # every retrieval gets its feedback, an empty one too (coverage "complete" closes it)
        if shown is not None:
            ok = await call(client, rec, "slowave_feedback", honest_feedback(shown, rng)) is not None and ok
    outcome = rng.choice(["success", "success", "partial", "failure"])
    committed = await call(client, rec, "slowave_commit", commit_args(session, task, outcome))
    return ok and committed is not None


def pick_scope(plans: list[synthetic.ScopePlan], rng: random.Random) -> str:
    """Half the tasks in large scopes, a quarter each in medium and small ones."""
    tier = rng.choices(["large", "medium", "small"], weights=[2, 1, 1])[0]
    candidates = [p.scope for p in plans if f"-{tier}-" in p.scope] or [p.scope for p in plans]
    return rng.choice(candidates)
