"""Races the soak found, pinned down: the same commit sent twice at once closes the session once
(one answer "closed", the other "updated", one episode) — the commit takes the session's lock
before its feedback preflight, which also keeps a concurrent recall from slipping in. And
concurrent remembers, which share commits (graph/group_commit.py): each call's claims stored once,
in its session's order, the same claim from two sessions at once stored once."""

from __future__ import annotations

import asyncio

import pytest

from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest
from slowave_graph.contract.remember import RememberRequest, RememberResult
from slowave_graph.operator.audit import audit
from slowave_graph.services.context import ClientInfo

pytestmark = pytest.mark.neo4j

CLIENT = ClientInfo("race-test", "1")


async def test_simultaneous_commits_close_a_session_once(app: App, scope: str) -> None:
    sv = app.services
    sessions = []
    for i in range(8):
        act = await sv.activation.activate(
            ActivateRequest(task=f"task {i}", initial_goal="g", scope=scope), CLIENT
        )
        await sv.feedback.feedback(
            FeedbackRequest(retrieval_id=act.retrieval_id, coverage="complete"), CLIENT
        )
        sessions.append(act.session_id)
    try:
        for session in sessions:
            request = CommitRequest.model_validate({
                "session_id": session, "final_goal": "g", "outcome": "success", "outcome_summary": "done",
                "verification": {"status": "verified", "summary": "ok", "evidence_refs": []},
            })  # fmt: skip
            first, second = await asyncio.gather(
                sv.commit.commit(request, CLIENT), sv.commit.commit(request, CLIENT)
            )
            assert sorted([first.operation, second.operation]) == ["closed", "updated"], session
            assert first.episodes_formed + second.episodes_formed == 1
        report = await audit(app.db, [scope])
        assert report.ok, report.text()
    finally:
        await app.db.run_write("delete_scope", scope=scope)


async def test_concurrent_remembers_share_commits_and_keep_each_sessions_order(app: App, scope: str) -> None:
    sv = app.services
    sessions = [
        (
            await sv.activation.activate(ActivateRequest(task=f"t{i}", initial_goal="g", scope=scope), CLIENT)
        ).session_id
        for i in range(8)
    ]

    async def remember(session: str, content: str) -> RememberResult:
        request = RememberRequest.model_validate(
            {"scope": scope, "session_id": session, "type": "fact", "content": content}
        )
        stored = await sv.remember.remember(request, CLIENT)
        assert isinstance(stored, RememberResult)
        return stored

    async def session_claims(n: int, session: str) -> list[RememberResult]:
        # every session's first claim is the same: remembered at once, it must be stored once
        first = await remember(session, "The shared staging cluster runs Postgres 16.")
        return [first] + [await remember(session, f"Session {n} finding number {k}.") for k in range(3)]

    groups_before = app.db.groups["remember_call"].grouped_calls if "remember_call" in app.db.groups else 0
    try:
        stored = await asyncio.gather(*(session_claims(n, s) for n, s in enumerate(sessions)))
        firsts = [claims[0] for claims in stored]
        assert len({r.memory_id for r in firsts}) == 1
        assert sorted(r.disposition for r in firsts) == ["created"] + ["matched"] * 7
        own = [r.memory_id for claims in stored for r in claims[1:]]
        assert len(set(own)) == len(own) == 24 and all(
            r.disposition == "created" for c in stored for r in c[1:]
        )
        assert app.db.groups["remember_call"].grouped_calls > groups_before  # commits were shared
        for claims in stored:  # NEXT follows each session's calls, whichever commit carried them
            ids = [r.memory_id for r in claims]
            found, _, _ = await app.db.driver.execute_query(
                "UNWIND range(0, size($ids) - 2) AS i "
                "MATCH (:Memory {id: $ids[i]})-[:NEXT]->(b:Memory) RETURN i, collect(b.id) AS next ORDER BY i",
                ids=ids, database_=app.db.database,
            )  # fmt: skip
            nexts = [r["next"] for r in found]
            assert ids[1] in nexts[0]  # the shared claim is linked on in every session
            assert nexts[1:] == [[b] for b in ids[2:]]
        report = await audit(app.db, [scope])
        assert report.ok, report.text()
    finally:
        await app.db.run_write("delete_scope", scope=scope)
