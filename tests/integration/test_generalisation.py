"""Lessons that travel between scopes, through the tools: a lesson remembered in paraphrase in two
repositories and validated there reaches a third (new) repository, marked with its origin and
stage; a scope-specific fact worded like it stays home; another kind of scope, a token without the
origin's grant and a store with generalisation off see nothing; a later not_used takes the evidence
back and the lesson stops travelling; the audit holds throughout. Real embeddings, real Neo4j."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.mcp.server import build_server
from slowave_graph.operator import corrections, maintenance
from slowave_graph.operator.audit import audit
from slowave_graph.operator.backup import restore
from slowave_graph.operator.export import export_graph
from slowave_graph.operator.forget import forget
from slowave_graph.operator.importer import read_export
from slowave_graph.services import Services, generalisation
from slowave_graph.services.context import ClientInfo
from slowave_graph.services.generalisation import Generaliser
from slowave_graph.workload import driver
from tests.support.mcp_helpers import activate, call, ok, remember
from tests.support.servers import CLIENT_INFO

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


@pytest.fixture
def general(app: App) -> App:
    """The suite's app with generalisation on (the suite runs with it off: tests/support/neo4j.py)."""
    return dataclasses.replace(app, services=Services.build(app.repo, app.embedder, generalise=True))


SPECIFIC = "The test suite of this repository needs PAYMENTS_DB_URL set before running the tests"


@dataclass(frozen=True)
class Texts:
    """A lesson in two wordings and the task that needs it, about a made-up tool of one test: the
    suite's database holds other tests' lessons, and a lesson is one across every scope."""

    a: str
    b: str
    task: str


def texts() -> Texts:
    tool = "qz" + uuid.uuid4().hex[:6]
    return Texts(
        a=f"Run {tool} sync before running the test suite, or the tests import stale packages",
        b=f"Always do a {tool} sync before you run the tests; otherwise stale packages get imported",
        task=f"Run the test suite of the repository with {tool}",
    )


def kind() -> str:
    """A scope kind of this test alone: stages count scopes per kind."""
    return f"r{uuid.uuid4().hex[:10]}"


async def validate(app: App, client: Client, scope: str, lesson: str, task: str) -> dict[str, Any]:
    """A session that is shown the lesson and says it helped (everything else not used), once the
    lesson has been judged again after it; what it was shown."""
    shown = await activate(client, scope, task)
    ids = {m["memory_id"]: m for m in shown["memories"]}
    used = [i for i, m in ids.items() if m["content"] == lesson]
    assert used, shown["memories"]
    feedback = driver.complete_feedback(shown, lambda m: "used" if m["content"] == lesson else "not_used")
    ok(await call(client, "slowave_feedback", feedback))
    await app.services.generaliser.idle()  # feedback answers first; the judging follows it
    return shown


async def learned(app: App, t: Texts, a: str, b: str) -> str:
    """The lesson remembered in a (first) and b, validated once in a and twice in b: stage 1's
    minimum. Returns the id of a's memory, the lesson's origin."""
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        first = await activate(client, a, "Note how the tests run")
        lesson = str((await remember(client, a, first["session_id"], t.a, "lesson"))["memory_id"])
        second = await activate(client, b, "Note how the tests run")
        await remember(client, b, second["session_id"], t.b, "lesson")
        for scope, text in ((a, t.a), (b, t.b), (b, t.b)):
            await validate(app, client, scope, text, t.task)
    return lesson


async def travelled(app: App) -> tuple[tuple[str, str, str], str, Texts]:
    """A lesson learned in two scopes of a new kind (a, b) that travelled to a third (c) and was
    used there, coverage declared complete: c's ledger now names a's memory. Returns the scopes,
    the lesson's id and its texts."""
    t = texts()
    k = kind()
    a, b, c = f"{k}:alpha", f"{k}:beta", f"{k}:gamma"
    lesson = await learned(app, t, a, b)
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        await validate(app, client, c, t.a, t.task)
    return (a, b, c), lesson, t


async def shown_in(client: Client, scope: str, task: str) -> list[dict[str, Any]]:
    return list((await activate(client, scope, task))["memories"])


async def stage(app: App, memory_id: str) -> tuple[int | None, list[tuple[str, int]]]:
    found, _, _ = await app.db.driver.execute_query(
        "MATCH (m:Memory {id: $id}) "
        "RETURN m.stage AS stage, COLLECT { MATCH (m)-[v:VALIDATED_IN]->(s:Scope) "
        "RETURN [s.id, v.sessions] ORDER BY s.id } AS edges",
        id=memory_id,
        database_=app.db.database,
    )
    row = found[0]
    return row["stage"], [(str(e[0]), int(e[1])) for e in row["edges"]]


async def test_a_lesson_validated_in_two_scopes_reaches_a_third_and_is_taken_back(general: App) -> None:
    app = general
    t = texts()
    k, other = kind(), kind()
    a, b, c, d = f"{k}:alpha", f"{k}:beta", f"{k}:gamma", f"{other}:delta"
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        first = await activate(client, a, "Note how the tests run")
        lesson = (await remember(client, a, first["session_id"], t.a, "lesson"))["memory_id"]
        specific = (await remember(client, a, first["session_id"], SPECIFIC))["memory_id"]
        second = await activate(client, b, "Note how the tests run")
        await remember(client, b, second["session_id"], t.b, "lesson")

        await validate(app, client, a, t.a, t.task)
        assert await stage(app, lesson) == (None, [])  # one scope: nothing travels
        await validate(app, client, b, t.b, t.task)
        assert (await stage(app, lesson))[0] is None  # two scopes, two sessions: not yet
        retracted = await validate(app, client, b, t.b, t.task)
        # the oldest member travels, with the evidence of both scopes
        assert await stage(app, lesson) == (1, [(a, 1), (b, 2)])

        fresh = await shown_in(client, c, t.task)
        travelled = [m for m in fresh if m["memory_id"] == lesson]
        assert len(travelled) == 1, fresh
        assert travelled[0]["provenance"]["origin_scope"] == a
        assert travelled[0]["provenance"]["stage"] == 1
        assert specific not in {m["memory_id"] for m in fresh}  # a scope's own fact stays home
        assert lesson not in {m["memory_id"] for m in await shown_in(client, d, t.task)}  # stage 1: own kind

        # resubmitting changes nothing; a later not_used on one validating retrieval takes it back
        again = driver.complete_feedback(retracted, lambda m: "used" if m["content"] == t.b else "not_used")
        ok(await call(client, "slowave_feedback", again))
        await app.services.generaliser.idle()
        assert await stage(app, lesson) == (1, [(a, 1), (b, 2)])
        ok(await call(client, "slowave_feedback", driver.complete_feedback(retracted, "not_used")))
        await app.services.generaliser.idle()
        assert await stage(app, lesson) == (None, [(a, 1), (b, 1)])  # the evidence left: too little
        assert lesson not in {m["memory_id"] for m in await shown_in(client, c, t.task)}
    report = await audit(app.db, [a, b, c, d])
    assert report.ok, report.violations


async def test_a_lesson_is_found_when_the_rule_for_other_tools_is_nearer_than_its_paraphrase(
    general: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rule remembered in other repositories for their own tools can be nearer in
    embedding to one wording than the other wording (naming the same tool) is, and more of them
    than the neighbours a lesson's judgement takes by cosine (here one, so the test needs a few):
    the paraphrase is still found, by the names it shares, from either side."""
    app = general
    monkeypatch.setattr(generalisation, "NEIGHBOURS", 1)
    t = texts()
    wordings = unit(app.embedder.embed([t.a, t.b]))
    paraphrase = float(wordings[0] @ wordings[1])
    crowd: list[str] = []
    while len(crowd) < 3:  # other tools' copies of the rule nearer to a wording than the paraphrase
        candidates = [text for other in (texts() for _ in range(16)) for text in (other.a, other.b)]
        nearness = (unit(app.embedder.embed(candidates)) @ wordings.T).max(axis=1)
        crowd += [text for text, near in zip(candidates, nearness, strict=True) if near > paraphrase]
    place = kind()
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        for n, text in enumerate(crowd):
            started = await activate(client, f"{place}:r{n}", "Note how the tests run")
            await remember(client, f"{place}:r{n}", started["session_id"], text, "lesson")
    k = kind()
    a, b = f"{k}:alpha", f"{k}:beta"
    lesson = await learned(app, t, a, b)
    assert await stage(app, lesson) == (1, [(a, 1), (b, 2)])


def unit(vectors: list[list[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    return np.asarray(array / np.linalg.norm(array, axis=1, keepdims=True))


async def test_grants_setting_and_status_keep_a_lesson_home(general: App) -> None:
    app = general
    t = texts()
    k = kind()
    a, b, c = f"{k}:alpha", f"{k}:beta", f"{k}:gamma"
    lesson = await learned(app, t, a, b)
    assert (await stage(app, lesson))[0] == 1

    def request(scope: str) -> ActivateRequest:
        return ActivateRequest.model_validate(driver.activate_args(scope, t.task))

    async def ids(services: Services, client: ClientInfo) -> set[str]:
        result = await services.activation.activate(request(c), client)
        return {m.memory_id for m in result.memories}

    # a token granted only the new scope never sees the lesson of a scope it may not use
    assert lesson in await ids(app.services, ClientInfo(scopes=(c, a)))
    assert lesson not in await ids(app.services, ClientInfo(scopes=(c,)))
    # generalisation off: nothing travels
    off = Services.build(app.repo, app.embedder, generalise=False)
    assert lesson not in await ids(off, ClientInfo())
    # a suppressed lesson never travels
    await corrections.suppress(app.db, lesson, reason="wrong advice", who="test")
    assert lesson not in await ids(app.services, ClientInfo())
    report = await audit(app.db, [a, b, c])
    assert report.ok, report.violations


async def test_without_the_setting_a_recomputation_clears_the_stage(general: App) -> None:
    app = general
    t = texts()
    k = kind()
    a, b = f"{k}:alpha", f"{k}:beta"
    lesson = await learned(app, t, a, b)
    assert (await stage(app, lesson))[0] == 1
    # judging again with the same ledger changes nothing
    now = app.services.feedback.clock()
    again = await app.services.generaliser.recompute([lesson], now)
    assert [(x.origin, x.stage) for x in again] == [(lesson, 1)]
    assert (await stage(app, lesson))[0] == 1
    await Generaliser(app.db, app.embedder, enabled=False).recompute([lesson], now)
    assert await stage(app, lesson) == (None, [])


async def test_the_maintenance_pass_forms_lessons_validated_before_and_clears_them_when_off(
    app: App, general: App
) -> None:
    t = texts()
    k = kind()
    a, b = f"{k}:alpha", f"{k}:beta"
    lesson = await learned(app, t, a, b)  # the suite's app: generalisation off
    assert await stage(app, lesson) == (None, [])  # validated, but nothing judged it as a lesson

    run = await maintenance.run_pass(general, actor="test", scope=a)
    assert (run.status, run.lessons_travelling) == ("completed", 1) and run.lessons_judged >= 1
    assert await stage(app, lesson) == (1, [(a, 1), (b, 2)])
    again = await maintenance.run_pass(general, actor="test", scope=a)
    assert again.lessons_travelling == 1 and await stage(app, lesson) == (1, [(a, 1), (b, 2)])

    assert await maintenance.judge_lessons(app, scope=a) == (again.lessons_judged, 0)  # off: cleared
    assert await stage(app, lesson) == (None, [])


@pytest.mark.parametrize("what", ["memory", "scope"])
async def test_forgetting_a_lesson_or_its_scope_leaves_the_scopes_it_reached_sound(
    general: App, what: str
) -> None:
    app = general
    (a, b, c), lesson, _ = await travelled(app)
    assert (await audit(app.db, [a, b, c])).ok
    await forget(app.db, **({"memory": lesson} if what == "memory" else {"scope": a}), who="test")
    report = await audit(app.db, [b, c] if what == "scope" else [a, b, c])
    assert report.ok, report.violations


async def test_an_export_of_the_scopes_carries_a_lessons_evidence_and_a_restore_brings_it_back(
    general: App, tmp_path: Path
) -> None:
    app = general
    (a, b, c), lesson, t = await travelled(app)
    k = a.split(":")[0]
    before = await stage(app, lesson)
    assert before[0] == 1 and len(before[1]) == 3, before

    def crossings(path: Path) -> Counter[str]:
        """The file's relationships whose two ends lie in two scopes."""
        owner: dict[str, str] = {}
        rels = []
        for raw in path.read_text().splitlines():
            record = json.loads(raw)
            if "node" in record and "scope" in record["props"]:
                owner[record["props"]["id"]] = record["props"]["scope"]
            elif record.get("node") == "Scope":
                owner[record["props"]["id"]] = record["props"]["id"]
            elif "rel" in record:
                rels.append(record)
        found = Counter()
        for rel in rels:
            ends = {owner.get(rel["from"][1]), owner.get(rel["to"][1])}
            if None not in ends and len(ends) == 2:
                found[rel["rel"]] += 1
        return found

    whole = tmp_path / "whole.jsonl"
    with whole.open("w") as out:
        await export_graph(app.db, out, [a, b, c])
    crossed = crossings(whole)
    assert crossed["VALIDATED_IN"] == 2 and crossed["EXPOSED"] >= 1 and crossed["ASSESSED"] >= 1, crossed
    alone = tmp_path / "alone.jsonl"
    with alone.open("w") as out:
        await export_graph(app.db, out, [a, c])  # b's evidence has nowhere to land
    assert crossings(alone)["VALIDATED_IN"] == 1

    restored = await restore(app.db, read_export(whole), replace=True)  # delete, import, verify
    assert "checksum" in restored["verified"]
    assert await stage(app, lesson) == before
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        assert lesson in {m["memory_id"] for m in await shown_in(client, f"{k}:delta", t.task)}
    report = await audit(app.db, [a, b, c])
    assert report.ok, report.violations
