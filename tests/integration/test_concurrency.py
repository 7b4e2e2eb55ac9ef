"""Races the soak found, pinned down: the same commit sent twice at once closes the session once
(one answer "closed", the other "updated", one episode) — the commit takes the session's lock
before its feedback preflight, which also keeps a concurrent recall from slipping in."""

from __future__ import annotations

import asyncio

import pytest

from slowave_graph.app import App
from slowave_graph.audit import audit
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest
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
