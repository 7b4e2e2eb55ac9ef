"""`slowave-graph bench transfer`: do lessons learned in some scopes reach the next scope, earned,
and does nothing else cross?

A scenario (transfer_scenario.json) of 16 scopes of two kinds (repositories and services) and six
general engineering lessons. Each scope first remembers its own facts, one per lesson topic and
worded like the lesson but naming the scope's own things. Each lesson is remembered in two
wordings in the first two repositories. Then tasks that need the lessons run scope after scope
(the schedule), every one through the MCP tools (activate, feedback) with honest feedback: the
lesson, in any wording, and the scope's own fact on the topic are `used` (helped), everything else
`not_used`. So a lesson earns its stages the way it would in use: validated in two repositories it
reaches the other repositories, is used there, and so on.

Reported, per stage the lesson had when a task in a *new* scope (one that never held nor was shown
the lesson) began: the share of those tasks whose first page showed it, over scopes the stage
reaches (target ≥ 0.90 from stage 1) and over scopes it does not (must be 0); leaks — a memory of
another scope shown that is not a promoted lesson (a scope-specific fact: target 0); and leaks
across grants — each task asked again for a token granted only its own scope (at the service, as
the MCP adapter calls it with the token's grants): any memory of another scope is a leak (target 0).
The scenario's scope kinds are new on every run (the breadth of a stage is measured against the
scopes in use) and deleted afterwards unless ``keep``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from mcp import Client
from mcp.types import Implementation

from slowave_graph import __version__
from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.mcp.server import build_server
from slowave_graph.services.context import ClientInfo, utcnow
from slowave_graph.workload import driver

TARGET_SHARE = 0.90
CLIENT = Implementation(name="slowave-bench-transfer", version=__version__)


@dataclass
class Lesson:
    topic: str
    wordings: list[str]
    task: str
    specific: str


@dataclass
class Scenario:
    lessons: list[Lesson]
    scopes: dict[str, list[str]]  # kind → names
    schedule: list[tuple[str, int]]  # (kind, index into its names)


def load_scenario() -> Scenario:
    raw = json.loads((resources.files("slowave_graph_lab.bench") / "transfer_scenario.json").read_text())
    return Scenario(
        [Lesson(**x) for x in raw["lessons"]],
        {k: list(v) for k, v in raw["scopes"].items()},
        [(str(k), int(i)) for k, i in raw["schedule"]],
    )


@dataclass
class Tally:
    """Tasks in new scopes at one stage: how many, and in how many the lesson was on page 1."""

    tasks: int = 0
    shown: int = 0

    @property
    def share(self) -> float | None:
        return self.shown / self.tasks if self.tasks else None


@dataclass
class TransferResult:
    scopes: int
    kinds: list[str]
    lessons: int
    tasks: int = 0
    # stage → tally, for new scopes the stage reaches and for new scopes it does not
    reached: dict[int, Tally] = field(default_factory=lambda: defaultdict(Tally))
    not_reached: dict[int, Tally] = field(default_factory=lambda: defaultdict(Tally))
    # tasks in scopes that remembered the lesson themselves: the retrieval's own part, no travel
    home: Tally = field(default_factory=Tally)
    # tasks in new scopes of the lesson's kind once the scenario's own record says it was validated
    # in stage 1's minimum (2 scopes, 3 sessions): the target as the issue states it, whether or not
    # the service recognised the wordings as one lesson
    earned: Tally = field(default_factory=Tally)
    active_scopes: dict[str, int] = field(default_factory=dict)
    final_stages: dict[str, int] = field(default_factory=dict)
    leaks: list[dict[str, str]] = field(default_factory=list)
    grant_leaks: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        def tallies(found: dict[int, Tally]) -> dict[str, Any]:
            return {
                str(s): {"tasks": t.tasks, "shown": t.shown, "share": t.share}
                for s, t in sorted(found.items())
            }

        return {
            "scopes": self.scopes,
            "kinds": self.kinds,
            "lessons": self.lessons,
            "tasks": self.tasks,
            "new_scope_tasks_reached": tallies(self.reached),
            "new_scope_tasks_not_reached": tallies(self.not_reached),
            "home_tasks": {"tasks": self.home.tasks, "shown": self.home.shown, "share": self.home.share},
            "earned_stage1_tasks": {
                "tasks": self.earned.tasks,
                "shown": self.earned.shown,
                "share": self.earned.share,
            },
            "active_scopes": self.active_scopes,
            "final_stages": self.final_stages,
            "leaks": len(self.leaks),
            "grant_leaks": len(self.grant_leaks),
            "leak_examples": (self.leaks + self.grant_leaks)[:10],
            "seconds": round(self.seconds, 1),
            "target_share": TARGET_SHARE,
            "targets_met": self.targets_met(),
        }

    def targets_met(self) -> bool:
        """≥ TARGET_SHARE of new-scope tasks get a lesson once it is validated in stage 1's minimum
        (by the scenario's record, and once the service gave it a stage), nothing beyond a stage's
        reach, no leak."""
        shares = [t.share for s, t in self.reached.items() if s >= 1 and t.share is not None]
        if self.earned.share is not None:
            shares.append(self.earned.share)
        kept = all(t.shown == 0 for t in self.not_reached.values())
        return bool(shares) and min(shares) >= TARGET_SHARE and kept and not (self.leaks or self.grant_leaks)


async def _stage(app: App, memory_ids: list[str]) -> int:
    """The lesson's stage now: the highest of its remembered wordings (the origin holds it)."""
    rows = await app.db.run_read("bench_lesson_stage", ids=memory_ids)
    return int(rows[0]["stage"] or 0) if rows else 0


async def run(app: App, keep: bool = False) -> TransferResult:
    scenario = load_scenario()
    tag = uuid.uuid4().hex[:6]
    kinds = {kind: f"{kind}{tag}" for kind in scenario.scopes}
    scope_of = {
        (k, i): f"{kinds[k]}:{name}" for k, names in scenario.scopes.items() for i, name in enumerate(names)
    }
    result = TransferResult(len(scope_of), sorted(kinds.values()), len(scenario.lessons))
    started = time.perf_counter()
    lesson_ids: dict[str, list[str]] = defaultdict(list)  # topic → its remembered wordings' ids
    records: dict[str, dict[str, int]] = defaultdict(dict)  # topic → scope → validating sessions
    specific_ids: dict[str, str] = {}  # memory id → its scope
    seen: dict[str, set[str]] = defaultdict(set)  # topic → scopes that held or were shown it
    try:
        async with Client(build_server(app), client_info=CLIENT) as client:
            for (kind, index), scope in scope_of.items():  # every scope's own facts
                session = await _call(
                    client, "slowave_activate", driver.activate_args(scope, "Note the setup")
                )
                items = [{"content": x.specific.format(name=scope.split(":")[1]), "type": "fact"}
                         for x in scenario.lessons]  # fmt: skip
                stored = await _call(client, "slowave_remember", driver.session_args(
                    scope, session["session_id"], memories=items))  # fmt: skip
                for row in stored["results"]:
                    specific_ids[row["data"]["memory_id"]] = scope
                if (kind, index) not in (("repo", 0), ("repo", 1)):
                    continue
                for lesson in scenario.lessons:  # the lessons, in the first two repositories
                    args = driver.session_args(
                        scope, session["session_id"], content=lesson.wordings[index], type="lesson"
                    )
                    lesson_ids[lesson.topic].append(
                        (await _call(client, "slowave_remember", args))["memory_id"]
                    )
                    seen[lesson.topic].add(scope)
            for kind, index in scenario.schedule:
                scope = scope_of[(kind, index)]
                for lesson in scenario.lessons:
                    home = {scope_of[("repo", 0)], scope_of[("repo", 1)]}
                    known = Known(
                        lesson_ids[lesson.topic], specific_ids, seen[lesson.topic], kinds["repo"], home,
                        records[lesson.topic],
                    )  # fmt: skip
                    await _task(app, client, scope, lesson, known, result)
        for lesson in scenario.lessons:
            result.final_stages[lesson.topic] = await _stage(app, lesson_ids[lesson.topic])
        result.active_scopes = await app.services.generaliser.active_scopes(utcnow())
    finally:
        if not keep:
            for scope in scope_of.values():
                await app.db.run_write("delete_scope", scope=scope)
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class Known:
    """What the scenario knows of one lesson while it runs."""

    ids: list[str]  # its remembered wordings
    specific: dict[str, str]  # every scope-specific fact → its scope
    seen: set[str]  # scopes that held or were shown it
    origin_kind: str  # the kind of the scopes that remembered it
    home: set[str]  # the scopes that remembered it
    # the scenario's record: per scope, the sessions whose honest feedback found it helpful
    validated: dict[str, int] = field(default_factory=dict)

    def earned_stage1(self) -> bool:
        mine = {s: n for s, n in self.validated.items() if s.split(":")[0] == self.origin_kind}
        return len(mine) >= 2 and sum(mine.values()) >= 3


async def _task(
    app: App, client: Client, scope: str, lesson: Lesson, known: Known, result: TransferResult
) -> None:
    """One task of the schedule: activate, count, honest feedback; and the same task for a token
    granted only this scope."""
    stage = await _stage(app, known.ids)
    shown = await _call(client, "slowave_activate", driver.activate_args(scope, lesson.task))
    result.tasks += 1
    memories = shown["memories"]
    got = any(m["content"] in lesson.wordings for m in memories)
    if scope in known.home:
        result.home.tasks += 1
        result.home.shown += int(got)
    if scope not in known.seen and scope.split(":")[0] == known.origin_kind and known.earned_stage1():
        result.earned.tasks += 1
        result.earned.shown += int(got)
    if scope not in known.seen:
        reaches = stage >= 2 or (stage == 1 and scope.split(":")[0] == known.origin_kind)
        tally = (result.reached if reaches else result.not_reached)[stage]
        tally.tasks += 1
        tally.shown += int(got)
    for m in memories:
        home = known.specific.get(m["memory_id"])
        origin = m["provenance"].get("origin_scope")
        if home is not None and home != scope:
            result.leaks.append({"scope": scope, "memory_id": m["memory_id"], "from": home})
        elif origin is not None and not _a_lesson(m["content"]):
            result.leaks.append({"scope": scope, "memory_id": m["memory_id"], "from": str(origin)})
    if got:
        known.seen.add(scope)
        known.validated[scope] = known.validated.get(scope, 0) + 1

    def assess(m: dict[str, Any]) -> str:
        mine = known.specific.get(m["memory_id"]) == scope and _topic_of(m["content"], lesson)
        return "used" if m["content"] in lesson.wordings or mine else "not_used"

    await _call(client, "slowave_feedback", driver.complete_feedback(shown, assess))
    await app.services.generaliser.idle()  # the lesson judged again, as before the agent's next task
    granted = ClientInfo(name="bench-transfer-granted", scopes=(scope,))
    request = ActivateRequest.model_validate(driver.activate_args(scope, lesson.task))
    alone = await app.services.activation.activate(request, granted)
    for item in alone.memories:
        away = item.provenance.origin_scope if item.provenance is not None else None
        if away is not None and away != scope:
            result.grant_leaks.append({"scope": scope, "memory_id": item.memory_id, "from": away})


_LESSON_TEXTS: set[str] = set()


def _a_lesson(content: str) -> bool:
    """Whether a text is one of the scenario's lessons (any topic): those may travel."""
    if not _LESSON_TEXTS:
        _LESSON_TEXTS.update(w for x in load_scenario().lessons for w in x.wordings)
    return content in _LESSON_TEXTS


def _topic_of(content: str, lesson: Lesson) -> bool:
    """Whether a scope-specific fact is the one on this lesson's topic (same template)."""
    head = lesson.specific.split("{name}")[-1].strip()
    return content.endswith(head)


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    envelope = driver.checked_envelope(await client.call_tool(tool, arguments))
    if envelope is None or not envelope.get("ok"):
        raise RuntimeError(f"{tool} failed: {envelope}")
    data = envelope["data"]
    assert isinstance(data, dict)
    return data


def markdown(result: TransferResult) -> str:
    lines = [
        "# bench transfer",
        "",
        f"{result.scopes} scopes of {len(result.kinds)} kinds, {result.lessons} lessons, "
        f"{result.tasks} tasks through MCP with honest feedback ({result.seconds:.0f} s).",
        "",
        "| lesson's stage when the task began | new-scope tasks it reaches | shown | share "
        "| tasks it does not reach | shown |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for stage in sorted(set(result.reached) | set(result.not_reached)):
        r, n = result.reached.get(stage, Tally()), result.not_reached.get(stage, Tally())
        share = f"{r.share:.2f}" if r.share is not None else "–"
        lines.append(f"| {stage} | {r.tasks} | {r.shown} | {share} | {n.tasks} | {n.shown} |")
    lines += [
        "",
        "Tasks in new scopes of the lesson's kind after the scenario's honest feedback had validated it "
        "in stage 1's minimum (2 scopes, 3 sessions), whether or not the service saw the wordings as one "
        "lesson: "
        f"{result.earned.tasks}, shown in {result.earned.shown}"
        + (
            f" ({result.earned.share:.2f}; target {TARGET_SHARE})."
            if result.earned.share is not None
            else "."
        ),
        f"Tasks in the scopes that remembered the lesson: {result.home.tasks}, shown in {result.home.shown} "
        "(the retrieval's own part: a lesson never shown at home is never validated).",
        f"Leaks of scope-specific facts into other scopes: {len(result.leaks)} (target 0).",
        f"Leaks across token grants: {len(result.grant_leaks)} (target 0).",
        f"Final stages: {', '.join(f'{t} {s}' for t, s in result.final_stages.items())}.",
        f"Active scopes of the database (a stage's breadth is measured against them): "
        f"{sum(result.active_scopes.values())}.",
        f"Targets met (share ≥ {TARGET_SHARE} once validated, nothing beyond a stage's reach, no leak): "
        f"{'yes' if result.targets_met() else 'no'}.",
    ]
    return "\n".join(lines) + "\n"
