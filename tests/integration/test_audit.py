"""`slowave-graph audit` on real histories: a clean one passes, and each kind of damage is found.

The damage is done with plain Cypher in a fresh scope (the test's own; deleted afterwards), the
way a bug or a manual edit would leave it; the audit must name the broken invariant.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from slowave_graph.app import App
from slowave_graph.cli import main
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest, FeedbackResult
from slowave_graph.contract.recall import RecallRequest
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest
from slowave_graph.operator.audit import CHECKS, Acknowledged, audit, audit_acknowledged
from slowave_graph.services.context import ClientInfo
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.neo4j

CLIENT = ClientInfo("audit-test", "1")
CLAIMS = [
    "Atlas authentication credentials expire after 45 minutes",
    "Atlas locks an account after 5 failed login attempts within 10 minutes",
    "Atlas login tokens are signed with RS256 keys that rotate monthly",
]


def commit_request(session_id: str, procedure: bool) -> CommitRequest:
    args: dict[str, Any] = {
        "session_id": session_id, "final_goal": "Fix Atlas logins", "outcome": "success",
        "outcome_summary": "Logins work again.",
        "verification": {"status": "verified", "summary": "Logged in.", "evidence_refs": ["manual"]},
    }  # fmt: skip
    if procedure:
        args["procedure"] = {"summary": "Check token lifetime first", "context": {"service": "atlas"},
                             "steps": [{"summary": "Read the token settings"}], "caveats": []}  # fmt: skip
    return CommitRequest.model_validate(args)


async def history(app: App, scope: str) -> Acknowledged:
    """Two committed tasks: remember, recall with a second page, feedback on everything, commit
    (the first with a procedure the second is shown). Returns what the server acknowledged."""
    sv, acks = app.services, Acknowledged()
    for task in range(2):
        act = await sv.activation.activate(
            ActivateRequest(task="How long do Atlas login tokens stay valid?", initial_goal="Fix logins",
                            scope=scope, page_size=1), CLIENT)  # fmt: skip
        if task == 0:
            stored = await sv.remember.remember(
                RememberRequest.model_validate({"scope": scope, "session_id": act.session_id,
                                                "memories": [{"content": c, "type": "fact"} for c in CLAIMS]}),
                CLIENT,
            )  # fmt: skip
            assert isinstance(stored, RememberBatchResult)
            for row in stored.results:
                assert row.data is not None
                acks.memories.append({"memory_id": row.data.memory_id, "event_id": row.data.source_event_id,
                                      "scope": scope, "content": CLAIMS[row.index]})  # fmt: skip
        found = await sv.recall.recall(
            RecallRequest(session_id=act.session_id, scope=scope, query="How long are Atlas tokens valid?",
                          page_size=1), CLIENT)  # fmt: skip
        assert found.continue_from is not None
        more = await sv.recall.recall(
            RecallRequest(session_id=act.session_id, scope=scope, continue_from=found.continue_from), CLIENT
        )
        pages: dict[str, tuple[list[Any], list[Any]]] = {
            act.retrieval_id: (act.memories, act.procedures),
            found.retrieval_id: (found.memories + more.memories, found.procedures),
        }
        for retrieval_id, (memories, procedures) in pages.items():
            request = FeedbackRequest.model_validate({
                "retrieval_id": retrieval_id, "coverage": "complete",
                "memory_feedback": [{"memory_id": m.memory_id, "assessment": "used"} for m in memories],
                "procedure_feedback": [{"procedure_id": p.procedure_id, "use": "not_used"} for p in procedures],
            })  # fmt: skip
            result = await sv.feedback.feedback(request, CLIENT)
            assert isinstance(result, FeedbackResult) and result.coverage == "complete"
            targets = [m.memory_id for m in memories] + [p.procedure_id for p in procedures]
            acks.feedback.extend({"event_id": e, "retrieval_id": retrieval_id, "targets": targets}
                                 for e in result.accepted_event_ids)  # fmt: skip
        done = await sv.commit.commit(commit_request(act.session_id, procedure=task == 0), CLIENT)
        acks.commits[act.session_id] += 1 if done.operation == "closed" else 0
    return acks


@pytest.fixture
async def recorded(app: App, scope: str) -> AsyncIterator[tuple[str, Acknowledged]]:
    """A scope with a clean history; whatever a test breaks in it is removed afterwards."""
    acks = await history(app, scope)
    yield scope, acks
    await app.db.run_write("delete_scope", scope=scope)
    # what the damage put in a second scope has no Scope node for delete_scope to start from
    await app.db.driver.execute_query(
        "MATCH (n) WHERE n.scope = $other DETACH DELETE n", other=scope + "-b", database_=app.db.database
    )


async def test_a_clean_history_passes_and_nothing_acknowledged_is_lost(
    app: App, recorded: tuple[str, Acknowledged]
) -> None:
    scope, acks = recorded
    report = await audit(app.db, [scope])
    assert report.ok, report.text()
    assert set(report.checks) == set(CHECKS)
    # the checks had something to check: 4 retrievals (the first a cold start), exposures, a ledger
    retrievals = await app.db.run_read("audit_retrieval_pages", scopes=[scope])
    assert len(retrievals) == 4 and sum(bool(r["exposed"]) for r in retrievals) == 3
    assert len(acks.memories) == 3 and len(acks.feedback) >= 4 and len(acks.commits) == 2
    assert await audit_acknowledged(app.db, acks) == []

    lost = Acknowledged(
        memories=[{**acks.memories[0], "content": "something else"},
                  {"memory_id": "sch_0", "event_id": "evt_0", "scope": scope}],
        feedback=[{**acks.feedback[0], "event_id": "fbe_0"}],
    )  # fmt: skip
    lost.commits["sess_0"] += 2
    problems = sorted(v.problem for v in await audit_acknowledged(app.db, lost))
    assert problems == [
        "accepted event found 0 times",
        "acknowledged memory is missing",
        "committed session is not closed once",
        "memory content differs",
        "two commits both reported closing the session",
    ]


# Damage (Cypher with $scope), applied in this order, and the check that must report it.
DAMAGE = {
    "commit_feedback": """
        MATCH (:Session {scope: $scope})-[:RETRIEVED]->(r:Retrieval {kind: 'recall'}) WITH r LIMIT 1
        MATCH (r)-[a:ASSESSED]->() DELETE a""",
    "feedback_event_ids": """
        MATCH (r:Retrieval {scope: $scope})-[a:ASSESSED]->(t) WITH r, a, t LIMIT 1
        CREATE (r)-[b:ASSESSED]->(t) SET b = properties(a)""",
    "feedback_ledger": """
        MATCH (r:Retrieval {scope: $scope, kind: 'activate'}), (m:Memory {scope: $scope})
        WHERE NOT (r)-[:EXPOSED]->(m) WITH r, m LIMIT 1
        CREATE (r)-[:ASSESSED {event_id: 'fbe_-7', seq: -7, status: 'accepted', assessment: 'used'}]->(m)""",
    "exposures": """
        MATCH (r:Retrieval {scope: $scope}) WITH r LIMIT 1
        CREATE (r)-[:EXPOSED {page: 1, rank: 1}]->(:Procedure {id: 'proc_x', scope: $scope + '-b'})""",
    "retrievals": """
        MATCH (r:Retrieval {scope: $scope}) WITH r LIMIT 1
        MATCH (s:Session {scope: $scope}) WHERE NOT (s)-[:RETRIEVED]->(r) WITH r, s LIMIT 1
        CREATE (s)-[:RETRIEVED]->(r)""",
    "sessions": """
        MATCH (s:Session {scope: $scope}) WITH s LIMIT 1
        CREATE (s)-[:FORMED]->(:Episode {id: 'ep_0', scope: $scope, session_id: s.id})""",
    "memories": """
        MATCH (m:Memory {scope: $scope})-[d:DERIVED_FROM]->(:Event) WITH m, d LIMIT 1 DELETE d""",
    "evidence": """
        MATCH (:Session {scope: $scope})-[rec:RECORDED]->(:Event) WITH rec LIMIT 1 DELETE rec""",
    "scope_isolation": """
        MATCH (m:Memory {scope: $scope}) WITH m LIMIT 1
        CREATE (m)-[:NEXT]->(:Memory {id: 'sch_0', scope: $scope + '-b'})""",
    "concepts": """
        MATCH (m:Memory {scope: $scope})-[:MENTIONS]->(c:Concept) WITH c LIMIT 1 SET c.df = c.df + 5""",
    "retrieval_pages": """
        MATCH (r:Retrieval {scope: $scope, kind: 'recall'})-[x:EXPOSED {page: 2}]->() WITH x LIMIT 1 DELETE x""",
}


async def test_every_kind_of_damage_is_found(app: App, recorded: tuple[str, Acknowledged]) -> None:
    scope, _ = recorded
    for statement in DAMAGE.values():
        await app.db.driver.execute_query(statement, scope=scope, database_=app.db.database)
    report = await audit(app.db, [scope])
    assert not report.ok
    missed = [check for check in DAMAGE if report.checks[check] == 0]
    assert missed == [], report.text()
    assert {v.check for v in report.violations} >= set(DAMAGE)


def test_cli_exit_code(
    neo4j: Neo4jTarget, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`slowave-graph audit --scope …` over a scope nobody wrote to: exit 0 and a JSON report."""
    monkeypatch.setenv("NEO4J_USER", neo4j.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j.password)
    code = main(["audit", "--neo4j-uri", neo4j.uri, "--scope", "test:never-written", "--json"])
    assert code == 0
    out = capsys.readouterr().out
    assert '"ok": true' in out and '"scope_isolation": 0' in out
