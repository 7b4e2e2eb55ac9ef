"""`slowave-graph demo seed`: a realistic memory built by simulated agents through the real services.

Every step is a tool call's service (activate, remember, recall, feedback, commit — the code the
MCP tools run), so what ends up in the graph — the ASSESSED ledger, salience, ASSOCIATED co-use
edges, procedures with helped/harmed tallies, sessions, episodes, supersessions — is exactly what
real use would leave. The agent's knowledge is scripted in `slowave_graph_lab.demo.data`; what it is
shown is whatever retrieval returns, and it only gives feedback on that. The schedule (task order,
variants, failures, noise in the feedback) is a pure function of the seed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slowave_graph import __version__
from slowave_graph.app import App, open_app, open_database
from slowave_graph.config import Settings
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest, FeedbackResult
from slowave_graph.contract.recall import RecallRequest
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest
from slowave_graph.contract.retrieval import MemoryItem
from slowave_graph.graph.database import Database
from slowave_graph.services.context import ClientInfo
from slowave_graph_lab.demo.data import CLAIMS, EVENTS, ONBOARDING, ROUTINE, Claim, ProcedureSpec, Task

DEFAULT_SCOPE = "demo:harbor"
DEFAULT_TASKS = 30
MIN_TASKS = len(ONBOARDING) + len(EVENTS)
DEMO_CLIENT = ClientInfo(name="slowave-graph-demo-seed", version=__version__)
# Where the one-off events fall among the tasks after onboarding (as a fraction of them).
EVENT_AT = {"ci_migration": 0.35, "pg_upgrade": 0.5, "refund_root_cause": 0.6, "oncall_change": 0.8}

Printer = Callable[[str], None]


class DemoScopeInUse(RuntimeError):
    """The scope holds memories that are not the demo's: seeding would mix them."""


class DemoScopeInvalid(DemoScopeInUse):
    """The scope is not of the form kind:id."""


@dataclass(frozen=True)
class Step:
    number: int
    task: Task
    text: str
    fails: bool  # a failure the task's own fail_rate drew (independent of what it was shown)
    keep_procedure: bool  # record the procedure even when one with the same key exists
    noise: int  # seeds the per-step feedback noise


def schedule(seed: int = 42, tasks: int = DEFAULT_TASKS) -> list[Step]:
    """The tasks in order: onboarding first, routine work with the one-off events at fixed points,
    stuck-refund tasks before and after their root cause is found."""
    if tasks < MIN_TASKS:
        raise ValueError(f"the demo needs at least {MIN_TASKS} tasks")
    rng = random.Random(seed)
    onboarding = list(ONBOARDING)
    rng.shuffle(onboarding)
    rest = tasks - len(onboarding)
    slots: list[Task | None] = [None] * rest
    index = -1
    for number, event in enumerate(EVENTS):
        # in order, each after the previous one, leaving room for the ones still to come
        index = min(max(round(EVENT_AT[event.name] * rest), index + 1), rest - len(EVENTS) + number)
        slots[index] = event
    refund = next(t for t in ROUTINE if t.name == "refunds")
    root = slots.index(next(e for e in EVENTS if e.name == "refund_root_cause"))
    # two tasks misled before the root cause is found (nearest first), one helped a little after
    before = [i for i in range(root - 1, -1, -1) if slots[i] is None][:2]
    free_after = [i for i in range(root + 1, rest) if slots[i] is None]
    for index in before + (free_after[1:2] or free_after[:1]):
        slots[index] = refund
    # Routine work is dealt from a shuffled deck: every kind comes up before the deck is dealt again.
    deck: list[Task] = []
    for index, slot in enumerate(slots):
        if slot is None:
            if not deck:
                # kinds of work with a method (a procedure) come up twice as often: they repeat
                deck = [t for t in ROUTINE if t is not refund]
                deck += [t for t in deck if t.procedure is not None]
                rng.shuffle(deck)
            slots[index] = deck.pop()
    steps = []
    release = 3  # release texts name the current version: 2.3, 2.4 after the next release …
    for number, task in enumerate([*onboarding, *slots], start=1):
        assert task is not None
        if task.name == "release":
            release += 1
        text = rng.choice(task.variants).format(n=release)
        steps.append(
            Step(number, task, text, rng.random() < task.fail_rate, rng.random() < 0.2, rng.randrange(2**32))
        )
    return steps


@dataclass
class SeedState:
    """What the simulated agents know across tasks: memory ids, retirements, procedures."""

    ids: dict[str, str] = field(default_factory=dict)  # claim key → sch_ id
    replaced_by: dict[str, str] = field(default_factory=dict)  # retired key → replacement key
    procedures: dict[str, ProcedureSpec] = field(default_factory=dict)  # proc_ id → its method
    latest: dict[str, ProcedureSpec] = field(default_factory=dict)  # deduplication key → newest method
    counts: Counter[str] = field(default_factory=Counter)
    missed: list[tuple[str, str]] = field(default_factory=list)  # (task, claim) used if shown, not shown

    def key_of(self, memory_id: str) -> str | None:
        return next((k for k, v in self.ids.items() if v == memory_id), None)

    def current(self, key: str) -> str:
        while key in self.replaced_by:
            key = self.replaced_by[key]
        return key


KEY_OF_CONTENT = {claim.content: key for key, claim in CLAIMS.items()}


def _memory_entry(
    key: str | None, memory_id: str, step: Step, state: SeedState, fresh: set[str]
) -> dict[str, Any]:
    """How an honest agent assesses one memory it was shown. The noise is drawn per (step, claim),
    so one memory shown more or less does not change the decisions about the others."""
    task = step.task
    rng = random.Random(f"{step.noise}:{key}")
    if key is None:
        return {"memory_id": memory_id, "assessment": "irrelevant", "relevance": "irrelevant"}
    replacement = task.retires.get(key)
    if replacement is not None and replacement in state.ids:
        return {"memory_id": memory_id, "assessment": "stale", "stale_reason": "superseded",
                "replacement_memory_id": state.ids[replacement],
                "reason": f"{CLAIMS[replacement].content} (found while: {step.text})"}  # fmt: skip
    if key in {state.current(k) for k in task.uses}:
        effect = "harmed" if key in task.harms else "no_effect" if rng.random() < 0.08 else "helped"
        return {"memory_id": memory_id, "assessment": "used", "effect": effect}
    claim: Claim = CLAIMS[key]
    if key in fresh or (claim.topic == task.topic and rng.random() < 0.2):
        return {"memory_id": memory_id, "assessment": "already_known"}
    if claim.topic == task.topic:
        return {"memory_id": memory_id, "assessment": "not_used", "relevance": "relevant"}
    return {"memory_id": memory_id, "assessment": "irrelevant", "relevance": "irrelevant"}


PARTIAL = "Could not find the cause; worked around it by hand."


def _outcome(step: Step, harmed: bool, state: SeedState) -> str:
    """Failure when a memory misled the agent or the task's own risk struck; partial when the
    misleading claim is still current but was not shown (nothing better was known either)."""
    if harmed or step.fails:
        return "failure"
    if any(state.current(h) == h for h in step.task.harms):
        return "partial"
    return "success"


Shown = list[tuple[str, list[MemoryItem], list[str]]]  # (retrieval id, memories, procedure ids)


async def _work(app: App, scope: str, step: Step, state: SeedState) -> tuple[str, Shown, set[str]]:
    """activate, remember what the task learns, recall: the session and what the agent was shown."""
    services = app.services
    task = step.task
    act = await services.activation.activate(
        ActivateRequest(
            task=step.text,
            initial_goal=task.goal,
            scope=scope,
            task_context={"project": "harbor", "area": task.topic},
        ),
        DEMO_CLIENT,
    )
    learn = [k for k in (*task.remembers, *task.retires.values()) if k not in state.ids]
    if learn:
        stored = await services.remember.remember(
            RememberRequest.model_validate(
                {"scope": scope, "session_id": act.session_id,
                 "memories": [{"content": CLAIMS[k].content, "type": CLAIMS[k].type} for k in learn]}
            ),
            DEMO_CLIENT,
        )  # fmt: skip
        assert isinstance(stored, RememberBatchResult)
        for learned, item in zip(learn, stored.results, strict=True):
            assert item.ok and item.data is not None, item.error
            state.ids[learned] = item.data.memory_id
        state.counts["remembered"] += len(learn)
    shown: Shown = [(act.retrieval_id, act.memories, [p.procedure_id for p in act.procedures])]
    for query in task.queries:
        rec = await services.recall.recall(
            RecallRequest(session_id=act.session_id, scope=scope, query=query, page_size=8), DEMO_CLIENT
        )
        shown.append((rec.retrieval_id, rec.memories, [p.procedure_id for p in rec.procedures]))
    return act.session_id, shown, set(learn)


def _procedure_entry(
    pid: str, follows: ProcedureSpec | None, outcome: str, step: Step, state: SeedState
) -> dict[str, Any]:
    """The agent used a procedure it was shown when it is the method the task follows."""
    if follows is None or state.procedures.get(pid) != follows:
        return {"procedure_id": pid, "use": "not_used"}
    effect = {"success": "helped", "partial": "no_effect", "failure": "harmed"}[outcome]
    return {"procedure_id": pid, "use": "used", "effect": effect,
            "contribution": f"Followed its steps for: {step.text}"}  # fmt: skip


async def _give_feedback(
    app: App, step: Step, state: SeedState, shown: Shown, fresh: set[str], follows: ProcedureSpec | None
) -> str:
    """Assess everything shown (coverage complete per retrieval); returns the task's outcome."""
    task = step.task
    planned = {state.current(k) for k in task.uses}
    judged = []
    exposed: set[str] = set()
    for retrieval_id, memories, procedures in shown:
        keys = [KEY_OF_CONTENT.get(m.content) for m in memories]
        entries = [
            _memory_entry(k, m.memory_id, step, state, fresh) for k, m in zip(keys, memories, strict=True)
        ]
        judged.append((retrieval_id, entries, procedures))
        exposed.update(k for k in keys if k is not None)
    state.counts["planned_uses"] += len(planned)
    state.counts["exposed_uses"] += len(planned & exposed)
    state.missed.extend((task.name, k) for k in sorted(planned - exposed))
    harmed = any(e.get("effect") == "harmed" for _, entries, _ in judged for e in entries)
    outcome = _outcome(step, harmed, state)
    for retrieval_id, entries, procedures in judged:
        procedure_entries = [_procedure_entry(pid, follows, outcome, step, state) for pid in procedures]
        result = await app.services.feedback.feedback(
            FeedbackRequest.model_validate(
                {"retrieval_id": retrieval_id, "memory_feedback": entries,
                 "procedure_feedback": procedure_entries, "coverage": "complete"}
            ),
            DEMO_CLIENT,
        )  # fmt: skip
        assert isinstance(result, FeedbackResult) and not result.rejected, result
        state.counts.update(e["assessment"] for e in entries)
        state.counts.update("procedure_" + e.get("effect", e["use"]) for e in procedure_entries)
        for old in result.applied.stale:
            retired = state.key_of(old)
            if retired is not None and retired not in state.replaced_by:
                state.replaced_by[retired] = task.retires[retired]
                state.counts["superseded"] += 1
    return outcome


async def _commit(
    app: App, session: str, step: Step, state: SeedState, outcome: str, follows: ProcedureSpec | None
) -> None:
    """Close the task; record its method as a procedure the first time, after a failure (so
    later tasks see the caution), for one-off events, and now and then otherwise."""
    task = step.task
    procedure = None
    if follows is not None and (
        follows.key not in state.latest or outcome == "failure" or step.keep_procedure or task in EVENTS
    ):
        procedure = {"summary": follows.summary, "context": {"project": "harbor", "area": task.topic},
                     "steps": [{"summary": s} for s in follows.steps], "caveats": list(follows.caveats),
                     "deduplication_key": follows.key}  # fmt: skip
    summary = {"success": task.success, "failure": task.failure}.get(outcome, PARTIAL)
    verified = outcome == "success"
    committed = await app.services.commit.commit(
        CommitRequest.model_validate(
            {
                "session_id": session,
                "final_goal": task.goal,
                "outcome": outcome,
                "outcome_summary": summary,
                "verification": {
                    "status": "verified" if verified else "unverified",
                    "summary": "Checked in staging and production metrics" if verified else "Not confirmed",
                    "evidence_refs": [f"harbor-task-{step.number}"] if verified else [],
                },
                "procedure": procedure,
                "trajectory": [
                    {"kind": "action", "summary": f"Worked on: {task.goal}",
                     "status": "succeeded" if outcome == "success" else "failed"},
                    {"kind": "observation", "summary": summary, "status": "succeeded"},
                ],
            }
        ),
        DEMO_CLIENT,
    )  # fmt: skip
    if committed.procedure_id and follows is not None:
        state.procedures[committed.procedure_id] = follows
        state.latest[follows.key] = follows
        state.counts["procedures"] += 1
    state.counts[outcome] += 1


async def _run_step(app: App, scope: str, step: Step, state: SeedState) -> str:
    task = step.task
    # The method the task follows: an event brings its own; routine work follows the latest
    # recorded method of its kind (after the refund root cause: the replay, not the restart).
    follows = task.procedure
    if task.procedure is not None and task not in EVENTS:
        follows = state.latest.get(task.procedure.key, task.procedure)
    session, shown, fresh = await _work(app, scope, step, state)
    outcome = await _give_feedback(app, step, state, shown, fresh, follows)
    await _commit(app, session, step, state, outcome, follows)
    return outcome


DEMO_CONTENTS = [claim.content for claim in CLAIMS.values()]


async def census(db: Database, scope: str) -> dict[str, Any]:
    """What the scope holds now (see demo_scope_census)."""
    rows = await db.run_read("demo_scope_census", scope=scope, contents=DEMO_CONTENTS)
    return rows[0]


async def existing_demo(db: Database, scope: str, force: bool = False) -> dict[str, Any] | None:
    """The result to report when the scope holds the demo already (None: seed it). A scope with
    memories that are not the demo's is never touched: DemoScopeInUse."""
    counts = await census(db, scope)
    if is_empty(counts):
        return None
    if not holds_demo(counts):
        raise DemoScopeInUse(
            f"scope {scope} holds {counts['foreign']} memories that are not the demo's; choose another scope"
        )
    if force:
        return None
    return {"status": "present", "scope": scope, "graph": await summary(db, scope)}


def holds_demo(counts: dict[str, Any]) -> bool:
    return bool(counts["memories"] or counts["sessions"]) and not counts["foreign"]


def is_empty(counts: dict[str, Any]) -> bool:
    return not (counts["memories"] or counts["sessions"] or counts["procedures"])


async def summary(db: Database, scope: str) -> dict[str, Any]:
    rows = await db.run_read("demo_scope_summary", scope=scope)
    return rows[0] if rows else {}


async def seed_demo(
    app: App, scope: str = DEFAULT_SCOPE, tasks: int = DEFAULT_TASKS, seed: int = 42, say: Printer = print
) -> dict[str, Any]:
    """Play the schedule into a scope (meant to be empty); counts from the run and from the graph."""
    steps = schedule(seed, tasks)
    state = SeedState()
    started = time.perf_counter()
    for step in steps:
        outcome = await _run_step(app, scope, step, state)
        say(f"  task {step.number:>2}/{len(steps)}  {outcome:<8} {step.text}")
    return {
        "status": "seeded",
        "scope": scope,
        "tasks": len(steps),
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 1),
        "run": dict(sorted(state.counts.items())),
        "graph": await summary(app.db, scope),
    }


async def ensure_demo(
    app: App,
    scope: str = DEFAULT_SCOPE,
    tasks: int = DEFAULT_TASKS,
    seed: int = 42,
    force: bool = False,
    say: Printer = print,
) -> dict[str, Any]:
    """Seed the demo unless the scope holds it already (``force``: delete it and seed again).

    A scope with memories that are not the demo's is never touched: DemoScopeInUse.
    """
    present = await existing_demo(app.db, scope, force)
    if present is not None:
        return present
    if not is_empty(await census(app.db, scope)):
        await app.db.run_write("delete_scope", scope=scope)
        say(f"deleted the earlier demo in {scope}")
    say(f"seeding {tasks} demo tasks into {scope} (seed {seed})")
    return await seed_demo(app, scope, tasks, seed, say)


def check_scope(scope: str) -> str:
    """The scope as the tools would accept it, else DemoScopeInvalid."""
    from pydantic import TypeAdapter, ValidationError

    from slowave_graph.contract.common import ScopeStr

    try:
        return TypeAdapter(ScopeStr).validate_python(scope)
    except ValidationError as exc:
        raise DemoScopeInvalid(f"bad scope {scope!r}: {exc.errors()[0]['msg']}") from None


async def seed_scope(
    settings: Settings,
    scope: str = DEFAULT_SCOPE,
    tasks: int = DEFAULT_TASKS,
    seed: int = 42,
    force: bool = False,
    say: Printer = print,
) -> dict[str, Any]:
    """`slowave-graph demo seed`: open the app (embedder, database, schema) and ensure the demo."""
    check_scope(scope)
    schedule(seed, tasks)  # a bad task count fails before minutes of start-up
    async with open_database(settings) as db:  # no embedder needed to find the demo in place
        present = await existing_demo(db, scope, force)
    if present is not None:
        return present
    async with open_app(settings) as app:
        return await ensure_demo(app, scope, tasks, seed, force, say)


def describe(result: dict[str, Any]) -> str:
    """A few lines for people: what the scope holds now."""
    g = result.get("graph") or {}
    head = {
        "seeded": f"seeded the demo into {result['scope']}: {result.get('tasks')} tasks in "
        f"{result.get('seconds')} s (seed {result.get('seed')})",
        "present": f"{result['scope']} already holds the demo; nothing done (--force seeds it again)",
    }[result["status"]]
    if not g:
        return head
    weight = g["mean_weight"] or 0.0
    return "\n".join(
        [
            head,
            f"  memories      {g['memories']} ({g['active']} active, {g['stale']} stale, "
            f"{g['supersessions']} superseded by a newer one)",
            f"  tasks         {g['sessions']} sessions: {g['succeeded']} succeeded, {g['partial']} partial, "
            f"{g['failed']} failed; {g['episodes']} episodes",
            f"  feedback      {g['accepted']} accepted assessments on {g['retrievals']} retrievals",
            f"  associations  {g['associations']} co-use edges, mean weight {weight:.2f}",
            f"  procedures    {g['procedures']} ({g['active_procedures']} current), "
            f"helped {g['procedure_helped']} / harmed {g['procedure_harmed']} times",
        ]
    )
