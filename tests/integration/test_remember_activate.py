"""remember + activate end to end: a real MCP client, the in-process server, the real Neo4j."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.graph.errors import SessionEnded, SessionScopeMismatch, UnknownSession
from slowave_graph.mcp.server import build_server
from slowave_graph.services import text
from slowave_graph.services.context import LOCAL_PRINCIPAL, new_id, utcnow
from tests.support.mcp_helpers import activate, call, error, ok, paths, recall, remember

pytestmark = pytest.mark.neo4j

ATLAS_AUTH = [
    "Atlas authentication credentials expire after 45 minutes",
    "Atlas login tokens are signed with RS256 keys that rotate monthly",
    "Atlas authentication uses OAuth 2.0 with PKCE for the web client",
    "Atlas locks an account after 5 failed login attempts within 10 minutes",
    "Atlas login session cookies are HttpOnly and SameSite=Strict",
    "Atlas service accounts authenticate with mTLS client certificates",
    "Atlas login requires two-factor authentication for administrators",
]
DISTRACTORS = [
    "The shop frontend is written in TypeScript with React",
    "Customer refunds over 500 EUR need manager approval",
    "Never force-push to the main branch",
    "The user prefers concise answers without emojis",
    "Deploy windows are Tuesdays 10:00 to 12:00 UTC",
    "PostgreSQL backups run nightly at 02:00 and are kept for 14 days",
    "The CI pipeline uses GitHub Actions with a 30-minute timeout",
    "The Atlas data warehouse is refreshed every 6 hours",
]
AUTH_QUESTION = "How do authentication and login work in Atlas?"


async def node_count(app: App, scope: str) -> dict[str, int]:
    """Everything a call could have written for a scope, plus global counters."""
    rows = await app.db.driver.execute_query(
        """
        RETURN COUNT { (m:Memory {scope: $scope}) } AS memories,
               COUNT { (e:Event {scope: $scope}) } AS events,
               COUNT { (s:Session {scope: $scope}) } AS sessions,
               COUNT { (r:Retrieval {scope: $scope}) } AS retrievals,
               COUNT { (s:Scope {id: $scope}) } AS scopes,
               COUNT { (c:Continuity {scope: $scope}) } AS continuities,
               COLLECT { MATCH (c:Counter) RETURN c.name + '=' + toString(c.value) } AS counters
        """,
        scope=scope,
        database_=app.db.database,
    )
    return rows.records[0].data()


async def seed(client: Client, scope: str, contents: list[str]) -> str:
    """Open a session in scope and remember contents; returns the session id."""
    session = (await activate(client, scope, "Record project knowledge"))["session_id"]
    envelope = await call(
        client,
        "slowave_remember",
        {
            "scope": scope,
            "session_id": session,
            "memories": [{"content": c, "type": "fact"} for c in contents],
        },
    )
    results = ok(envelope)["results"]
    assert [r["ok"] for r in results] == [True] * len(contents)
    return str(session)


async def test_cold_start_then_remember_then_paraphrase_finds_it(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        first = await activate(client, scope, "Fix the Atlas login bug")
        assert first["memory_state"] == "cold_start"
        assert first["memories"] == [] and first["procedures"] == []
        assert first["retrieval_id"].startswith("ctx_")
        assert first["continuity_state"] == "started" and first["continuity_id"].startswith("cont_")
        assert first["more_available"] is False and first["accessible_field"] == {}

        stored = await remember(
            client, scope, first["session_id"], "Atlas authentication credentials expire after 45 minutes"
        )
        assert stored["stored"] is True and stored["disposition"] == "created"
        assert stored["memory_id"].startswith("sch_") and stored["source_event_id"].startswith("evt_")
        assert stored["type"] == "fact" and stored["scope"] == scope

        again = await activate(client, scope, "How long do Atlas login tokens remain valid?")
        assert again["memory_state"] == "available"
        assert [m["memory_id"] for m in again["memories"]] == [stored["memory_id"]]
        memory = again["memories"][0]
        assert memory["pathway"] == "direct"
        assert memory["content"] == "Atlas authentication credentials expire after 45 minutes"
        # provenance names the MCP client from the handshake, not from any argument
        assert memory["provenance"]["source_kind"] == "event"
        assert memory["provenance"]["integration"] == "mcp"
        assert again["session_id"] != first["session_id"], "every activation opens a new session"


async def test_memory_is_searchable_in_the_same_session(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Set up billing"))["session_id"]
        await remember(client, scope, session, "Billing invoices are generated on the first day of the month")
        found = await activate(client, scope, "When are billing invoices created?")
        assert [m["content"] for m in found["memories"]] == [
            "Billing invoices are generated on the first day of the month"
        ]


async def test_other_scopes_never_see_it(app: App, scope: str) -> None:
    twin = scope.replace("test:", "test:twin-")
    async with Client(build_server(app)) as client:
        await seed(client, scope, ["Atlas authentication credentials expire after 45 minutes"])
        for other in (twin, scope.upper(), scope + "-2"):
            seen = await activate(client, other, "How long do Atlas login tokens remain valid?")
            assert seen["memories"] == [], other
            assert seen["memory_state"] == "cold_start", other


async def test_off_topic_task_returns_empty_list(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        await seed(client, scope, ATLAS_AUTH + DISTRACTORS)
        for task in ("What is the capital of Australia?", "Bake a chocolate cake for the party"):
            result = await activate(client, scope, task)
            assert result["memory_state"] == "available"
            assert result["memories"] == [], (task, result["memories"])
            assert result["relevant_total"] == 0 and result["more_available"] is False


@pytest.mark.parametrize("relevant", [0, 2, 4, 7])
async def test_returns_exactly_the_relevant_memories(app: App, scope: str, relevant: int) -> None:
    async with Client(build_server(app)) as client:
        await seed(client, scope, ATLAS_AUTH[:relevant] + DISTRACTORS)
        result = await activate(client, scope, AUTH_QUESTION, page_size=10)
        assert sorted(m["content"] for m in result["memories"]) == sorted(ATLAS_AUTH[:relevant])
        assert result["relevant_total"] == relevant


async def test_exact_duplicate_is_matched_and_reinforced(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Note conventions"))["session_id"]
        first = await remember(client, scope, session, "Use uv to install Python packages.", "instruction")
        before = await node_count(app, scope)
        second = await remember(
            client, scope, session, "  use UV to install   python packages ", "instruction"
        )
        assert second["disposition"] == "matched"
        assert second["memory_id"] == first["memory_id"]
        assert second["source_event_id"] != first["source_event_id"]
        after = await node_count(app, scope)
        assert after["memories"] == before["memories"]
        assert after["events"] == before["events"] + 1
    record = await app.db.driver.execute_query(
        "MATCH (m:Memory {id: $id}) "
        "RETURN m.reinforced_count AS n, COUNT { (m)-[:DERIVED_FROM]->(:Event) } AS ev",
        id=first["memory_id"],
        database_=app.db.database,
    )
    assert record.records[0].data() == {"n": 1, "ev": 2}


async def test_batch_remember_reports_each_item(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record decisions"))["session_id"]
        envelope = await call(
            client,
            "slowave_remember",
            {
                "scope": scope,
                "session_id": session,
                "memories": [
                    {"content": "We chose PostgreSQL 16 for the ledger", "type": "decision"},
                    {"content": "Ledger writes must be idempotent", "type": "constraint",
                     "occurred_at": "2026-03-01T09:30:00+01:00"},
                    {"content": "we chose postgresql 16 for the ledger.", "type": "decision"},
                ],
            },
        )  # fmt: skip
        results = ok(envelope)["results"]
        assert [r["index"] for r in results] == [0, 1, 2]
        assert [r["data"]["disposition"] for r in results] == ["created", "created", "matched"]
        assert results[2]["data"]["memory_id"] == results[0]["data"]["memory_id"]
        assert len({r["data"]["source_event_id"] for r in results}) == 3
    event = await app.db.driver.execute_query(
        "MATCH (e:Event {id: $id}) RETURN e.occurred_at.epochSeconds AS t, e.occurred_at.offset AS o",
        id=results[1]["data"]["source_event_id"],
        database_=app.db.database,
    )
    assert event.records[0]["t"] == 1772353800  # 2026-03-01T08:30:00Z
    assert event.records[0]["o"] == "+01:00"


async def test_graph_shape_of_a_remember_and_an_activation(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        act = await activate(client, scope, "Document the release process")
        stored = await remember(
            client, scope, act["session_id"], "Releases are cut from the release/* branches"
        )
        shown = await activate(client, scope, "How do we cut a release?")
    shape = await app.db.driver.execute_query(
        """
        MATCH (m:Memory {id: $memory_id})-[:DERIVED_FROM]->(e:Event {id: $event_id})
        MATCH (m)-[:IN_SCOPE]->(s:Scope {id: $scope})
        MATCH (:Session {id: $session_id})-[:RECORDED]->(e)
        MATCH (r:Retrieval {id: $retrieval_id})-[x:EXPOSED]->(m)
        MATCH (:Session {id: r.session_id})-[:CONTINUES]->(c:Continuity)
        RETURN m.status AS status, m.type AS type, size(m.embedding) AS dims, s.kind AS kind,
               x.rank AS rank, x.pathway AS pathway, x.page AS page, r.kind AS retrieval_kind,
               c.id AS continuity
        """,
        memory_id=stored["memory_id"],
        event_id=stored["source_event_id"],
        scope=scope,
        session_id=act["session_id"],
        retrieval_id=shown["retrieval_id"],
        database_=app.db.database,
    )
    assert shape.records[0].data() == {
        "status": "active", "type": "fact", "dims": 384, "kind": "test", "rank": 1,
        "pathway": "direct", "page": 1, "retrieval_kind": "activate", "continuity": shown["continuity_id"],
    }  # fmt: skip


async def test_paging_freezes_the_catalog(app: App, scope: str) -> None:
    facts = [f"Atlas login rule {i}: password resets require a verified email ({i})" for i in range(12)]
    async with Client(build_server(app)) as client:
        await seed(client, scope, facts)
        result = await activate(
            client, scope, "What are the Atlas login and password reset rules?", page_size=10
        )
        assert len(result["memories"]) == 10
        assert result["relevant_total"] == 12
        assert result["more_available"] is True and result["continue_from"].startswith("cur_")
        assert result["accessible_field"]["extra_candidates"] == 2
        assert result["accessible_field"]["kinds"] == ["direct"]
        assert result["accessible_field"]["approx_extra_tokens"] > 0
    exposed = await app.db.driver.execute_query(
        "MATCH (r:Retrieval {id: $id}) "
        "RETURN size(r.catalog_ids) AS catalog, COUNT { (r)-[:EXPOSED]->() } AS shown",
        id=result["retrieval_id"],
        database_=app.db.database,
    )
    assert exposed.records[0].data() == {"catalog": 12, "shown": 10}


async def test_continuity_lines(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        first = await activate(client, scope, "Start the migration")
        second = await activate(client, scope, "Continue the migration", continuity_id=first["continuity_id"])
        assert second["continuity_state"] == "continued"
        assert second["continuity_id"] == first["continuity_id"]
        unknown = await call(
            client,
            "slowave_activate",
            {"task": "t", "initial_goal": "g", "scope": scope, "continuity_id": "cont_doesnotexist"},
        )
        assert paths(error(unknown, "invalid_input")) == {"continuity_id"}
        other = await call(
            client,
            "slowave_activate",
            {"task": "t", "initial_goal": "g", "scope": scope + "x", "continuity_id": first["continuity_id"]},
        )
        assert "another scope" in error(other, "invalid_input")["message"]
        refused = await node_count(app, scope + "x")
        assert {k: v for k, v in refused.items() if k != "counters"} == dict.fromkeys(
            ("memories", "events", "sessions", "retrievals", "scopes", "continuities"), 0
        )


async def test_activate_write_replayed_after_a_lost_commit_opens_one_session(app: App, scope: str) -> None:
    """activate's write is one auto-commit statement that the retry loop may replay when the
    connection broke mid-commit: the replay finds its retrieval and writes nothing more."""
    kind, name = scope.split(":", 1) if ":" in scope else ("", scope)
    params = {
        "scope": scope, "scope_kind": kind, "scope_name": name, "norm_key": scope, "continuity_id": None,
        "session_id": new_id("sess"), "principal": LOCAL_PRINCIPAL,
        "new_continuity_id": new_id("cont"), "task": "t", "initial_goal": "g", "task_context": None,
        "semantic_context": None, "client_name": "test", "client_version": "1", "now": utcnow(),
        "retrieval_id": new_id("ctx"), "kind": "activate", "query": "t", "query_embedding": None,
        "policy_version": "p", "page_size": 5, "catalog_ids": [], "catalog_pathways": [],
        "catalog_associations": [], "catalog_links": None, "catalog_procedures": [],
        "relevant_total": 0, "catalog_truncated": False, "page_memories": [], "page_procedures": [],
        "cursor_id": None,
    }  # fmt: skip
    first = await app.db.run_idempotent_write("activate_session", **params)
    replay = await app.db.run_idempotent_write("activate_session", **params)
    assert first == replay and first[0]["session_id"].startswith("sess_")
    assert first[0]["continuity_id"] == params["new_continuity_id"]
    counts = await node_count(app, scope)
    assert (counts["sessions"], counts["retrievals"], counts["continuities"]) == (1, 1, 1)


async def test_scope_fragmentation_warning(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        await activate(client, scope + "_shop", "Start")
        variant = await activate(client, scope.upper() + "-SHOP", "Start")
        assert [w["code"] for w in variant["warnings"]] == ["scope_fragmentation"]
        assert (scope + "_shop") in variant["warnings"][0]["message"]
        same = await activate(client, scope + "_shop", "Again")
        assert [w["code"] for w in same["warnings"]] == ["scope_fragmentation"]
        fresh = await activate(client, scope + "_unrelated", "Start")
        assert fresh["warnings"] == []


BAD_ACTIVATE: list[tuple[dict[str, Any], set[str]]] = [
    ({"initial_goal": "g", "scope": "p:x"}, {"task"}),
    ({"task": "t", "initial_goal": "g", "scope": "p:x", "surprise": 1}, {"surprise"}),
    ({"task": "t", "initial_goal": "g", "scope": "nocolon"}, {"scope"}),
    ({"task": "t", "initial_goal": "g", "scope": "p: "}, {"scope"}),
    ({"task": "t", "initial_goal": "g", "scope": ":x"}, {"scope"}),
    ({"task": "   ", "initial_goal": "g", "scope": "p:x"}, {"task"}),
    ({"task": "t", "initial_goal": "g", "scope": "p:x", "page_size": 0}, {"page_size"}),
    ({"task": "t", "initial_goal": "g", "scope": "p:x", "page_size": 11}, {"page_size"}),
    ({"task": "t", "initial_goal": "g", "scope": "p:x", "page_size": "5"}, {"page_size"}),
    ({"task": "t", "initial_goal": "g", "scope": "p:x", "page_size": True}, {"page_size"}),
    (
        {"task": "t", "initial_goal": "g", "scope": "p:x", "task_context": {"Repo": "x"}},
        {"task_context.Repo"},
    ),
    (
        {"task": "t", "initial_goal": "g", "scope": "p:x", "task_context": {"a": [{"b": 1}]}},
        {"task_context.a[0]"},
    ),
    ({"task": 5, "initial_goal": "g", "scope": "p:x"}, {"task"}),
]


@pytest.mark.parametrize(("arguments", "expected_paths"), BAD_ACTIVATE)
async def test_bad_activate_input_is_rejected_and_writes_nothing(
    app: App, scope: str, arguments: dict[str, Any], expected_paths: set[str]
) -> None:
    if arguments.get("scope") == "p:x":
        arguments = {**arguments, "scope": scope}
    before = await node_count(app, scope)
    async with Client(build_server(app)) as client:
        err = error(await call(client, "slowave_activate", arguments), "invalid_input")
    assert err["retryable"] is False
    assert paths(err) == expected_paths
    assert await node_count(app, scope) == before


async def test_bad_remember_input_is_rejected_and_writes_nothing(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        other_scope_session = (await activate(client, scope + "-other", "Elsewhere"))["session_id"]
        cases: list[tuple[dict[str, Any], set[str], str | None]] = [
            ({"session_id": session, "content": "c", "type": "fact"}, {"scope"}, None),
            ({"scope": scope, "content": "c", "type": "fact"}, {"session_id"}, None),
            ({"scope": scope, "session_id": session, "content": "c"}, {"type"}, None),
            ({"scope": scope, "session_id": session, "type": "fact"}, {"content"}, None),
            ({"scope": scope, "session_id": session, "content": "c", "type": "rumour"}, {"type"}, None),
            ({"scope": scope, "session_id": session, "content": "c", "type": "fact", "x": 1}, {"x"}, None),
            ({"scope": scope, "session_id": session, "content": "c", "type": "fact",
              "occurred_at": "2026-03-01T09:30:00"}, {"occurred_at"}, None),
            ({"scope": scope, "session_id": session, "content": "c", "type": "fact",
              "occurred_at": "yesterday"}, {"occurred_at"}, None),
            ({"scope": scope, "session_id": session, "content": "c", "type": "fact",
              "memories": [{"content": "d", "type": "fact"}]}, {"memories"}, None),
            ({"scope": scope, "session_id": session,
              "memories": [{"content": "d", "type": "fact"}, {"content": "", "type": "fact"}]},
             {"memories[1].content"}, None),
            ({"scope": scope, "session_id": other_scope_session, "content": "c", "type": "fact"},
             {"scope"}, "session_id and scope do not match"),
            ({"scope": scope, "session_id": "sess_999999999", "content": "c", "type": "fact"},
             {"session_id"}, "unknown session_id"),
        ]  # fmt: skip
        before = await node_count(app, scope)
        for arguments, expected_paths, message in cases:
            err = error(await call(client, "slowave_remember", arguments), "invalid_input")
            assert paths(err) == expected_paths, (arguments, err)
            if message:
                assert message in err["message"]
        assert await node_count(app, scope) == before


async def test_a_question_that_names_a_date_ranks_what_happened_then_first(app: App, scope: str) -> None:
    # the same words but the team's colour, so only a date can reorder them: amber (March) is the
    # least like the question in meaning (cosine ~0.04 below the others with the bundled model)
    happened = {
        "2026-01-14T10:00:00Z": "Release retrospective: deploys were slow, team blue owns the fix",
        "2026-03-11T10:00:00Z": "Release retrospective: deploys were slow, team amber owns the fix",
        "2026-05-13T10:00:00Z": "Release retrospective: deploys were slow, team red owns the fix",
    }
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        ids = {}
        for when, content in happened.items():
            ids[when] = (await remember(client, scope, session, content, "decision", occurred_at=when))[
                "memory_id"
            ]
        asked = await recall(
            client,
            scope,
            session,
            "Who owns the fix for slow deploys found in the March 2026 release retrospective?",
        )
        undated = await recall(
            client, scope, session, "Who owns the fix for slow deploys found in the release retrospective?"
        )
    march = ids["2026-03-11T10:00:00Z"]
    assert asked["memories"][0]["memory_id"] == march
    assert {m["memory_id"] for m in asked["memories"]} == set(ids.values())  # lifted, nothing hidden
    assert [m["memory_id"] for m in undated["memories"]][-1] == march
    assert {m["memory_id"] for m in undated["memories"]} == set(ids.values())


async def test_occurred_at_with_z_is_stored(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        stored = await remember(
            client,
            scope,
            session,
            "The outage began at 09:30 UTC",
            "fact",
            occurred_at="2026-03-01T09:30:00Z",
        )
    found = await app.db.driver.execute_query(
        "MATCH (m:Memory {id: $id})-[:DERIVED_FROM]->(e:Event) "
        "RETURN m.occurred_at.epochSeconds AS m, e.occurred_at.epochSeconds AS e",
        id=stored["memory_id"],
        database_=app.db.database,
    )
    assert found.records[0].data() == {"m": 1772357400, "e": 1772357400}


async def test_recall_write_replayed_after_a_lost_commit_stores_one_retrieval(app: App, scope: str) -> None:
    """A recall without a task_context stores its retrieval in one idempotent auto-commit
    statement; a refused session stores nothing."""
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Start the migration"))["session_id"]
    frozen = {
        "retrieval_id": new_id("rec"), "kind": "recall", "query": "q", "query_embedding": None,
        "policy_version": "p", "page_size": 5, "catalog_ids": [], "catalog_pathways": [],
        "catalog_associations": [], "catalog_links": None, "catalog_procedures": [],
        "relevant_total": 0, "catalog_truncated": False, "page_memories": [], "page_procedures": [],
        "cursor_id": None,
    }  # fmt: skip
    for _ in range(2):  # the second is the retry loop's replay
        await app.repo.create_retrieval(
            session_id=session, scope=scope, now=utcnow(), principal=LOCAL_PRINCIPAL, **frozen
        )
    assert (await node_count(app, scope))["retrievals"] == 2  # activate's and this recall's
    refused = [(session, scope + "x", SessionScopeMismatch), ("sess_999999999", scope, UnknownSession)]
    for session_id, in_scope, refusal in refused:
        with pytest.raises(refusal):
            await app.repo.create_retrieval(
                session_id=session_id,
                scope=in_scope,
                now=utcnow(),
                principal=LOCAL_PRINCIPAL,
                **{**frozen, "retrieval_id": new_id("rec")},
            )
    assert (await node_count(app, scope))["retrievals"] == 2


async def test_remember_write_replayed_after_a_lost_commit_stores_once(app: App, scope: str) -> None:
    """remember's guard and write are one auto-commit statement that the retry loop may replay
    when the connection broke mid-commit: the replay of a call id returns what the first attempt
    stored and writes nothing more. Refused calls (another scope, unknown or ended session)
    write nothing, and a lone item keeps consecutive event ids whatever its batch index was."""
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record deploy facts"))["session_id"]
    vector = (await app.embedder.aembed(["x"]))[0]

    def item(content: str, index: int = 0) -> dict[str, Any]:
        return {
            "index": index, "content": content, "type": "fact", "occurred_at": None,
            "active_key": text.active_key(scope, content), "content_hash": text.content_hash(content),
            "embedding": vector, "links": [],
        }  # fmt: skip

    def store(items: list[dict[str, Any]], call_id: str, **over: str) -> Any:
        return app.repo.remember(**{
            "call_id": call_id, "session_id": session, "scope": scope,
            "scope_token": text.scope_token(scope), "items": items, "client_name": "t",
            "client_version": "1", "principal": LOCAL_PRINCIPAL, "concept_links": [], "concepts_version": 1, "now": utcnow(),
            **over,
        })  # fmt: skip

    batch = [item("Deploys run on Tuesdays"), item("Deploys need two approvals", 1)]
    call_id = new_id("rmc")
    first = await store(batch, call_id)
    await store([item("Deploys are announced in #ops")], new_id("rmc"))  # another call in between
    before = await node_count(app, scope)
    replay = await store(batch, call_id)  # the retry loop's replay
    assert replay == first and [r["created"] for r in first] == [True, True]
    assert await node_count(app, scope) == before
    again = await store(batch[:1], new_id("rmc"))  # a new call with a known claim: matched
    assert [r["created"] for r in again] == [False] and again[0]["memory_id"] == first[0]["memory_id"]

    after = await node_count(app, scope)
    seen = "MATCH (s:Session {id: $id}) RETURN s.last_seen_at AS t"
    seen_before = (await app.db.driver.execute_query(seen, id=session, database_=app.db.database)).records
    refused: list[tuple[dict[str, str], type[Exception]]] = [
        ({"scope": scope + "x"}, SessionScopeMismatch),
        ({"session_id": "sess_999999999"}, UnknownSession),
    ]
    for over, refusal in refused:
        with pytest.raises(refusal):
            await store([item("Refused claim")], new_id("rmc"), **over)
    assert await node_count(app, scope) == after
    # nor does a refused call refresh the session's idle clock (the statement commits on its own)
    assert (
        await app.db.driver.execute_query(seen, id=session, database_=app.db.database)
    ).records == seen_before

    [lone] = await store([item("Rollbacks take five minutes", 7)], new_id("rmc"))  # index 7, alone
    [next_one] = await store([item("Rollbacks are rehearsed monthly")], new_id("rmc"))
    assert int(next_one["event_id"][4:]) > int(lone["event_id"][4:])
    counter = await app.db.driver.execute_query(
        "MATCH (c:Counter {name: 'event'}) RETURN c.value AS v", database_=app.db.database
    )
    assert counter.records[0]["v"] >= int(next_one["event_id"][4:])  # no id beyond the counter

    await app.db.driver.execute_query(  # ended (commit would want feedback on activate's context)
        "MATCH (s:Session {id: $id}) SET s.status = 'ended'", id=session, database_=app.db.database
    )
    with pytest.raises(SessionEnded):
        await store([item("Too late")], new_id("rmc"))
    assert (await node_count(app, scope))["memories"] == after["memories"] + 2  # the two rollback claims
