"""Schema creation, the recorded embedding model, neomodel agreement, published tool schemas."""

from __future__ import annotations

import io
from typing import Any

import pytest
from mcp import Client
from mcp.types import ListToolsResult
from neomodel import adb

from slowave_graph.app import App, database_embedder, open_app
from slowave_graph.embedding.embedder import DEFAULT_MODEL, INT8_MODEL, load_embedder
from slowave_graph.graph import models
from slowave_graph.graph.errors import EmbeddingMismatch
from slowave_graph.graph.repository import hits
from slowave_graph.graph.schema import (
    VECTOR_QUANTIZATION,
    check_embedding_space,
    ensure_schema,
    vector_config,
)
from slowave_graph.mcp.server import build_server
from slowave_graph.services import text
from tests.support.mcp_helpers import activate, call, commit, mark_helped, ok, remember
from tests.support.neo4j import Neo4jTarget

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


async def schema_objects(app: App) -> set[str]:
    constraints = await app.db.driver.execute_query(
        "SHOW CONSTRAINTS YIELD name RETURN name", database_=app.db.database
    )
    indexes = await app.db.driver.execute_query(
        "SHOW INDEXES YIELD name, type, state WHERE type <> 'LOOKUP' RETURN name, state",
        database_=app.db.database,
    )
    assert {r["state"] for r in indexes.records} == {"ONLINE"}
    return {r["name"] for r in constraints.records} | {r["name"] for r in indexes.records}


async def test_schema_is_complete_and_idempotent(app: App) -> None:
    before = await schema_objects(app)
    assert {"memory_embedding", "memory_text", "procedure_text", "constraint_unique_Memory_id",
            "constraint_unique_Memory_active_key", "index_Memory_scope_status"} <= before  # fmt: skip
    info = await ensure_schema(app.db, app.embedder.model_name, app.embedder.dimension)
    assert await schema_objects(app) == before
    if info.supports_search_clause:
        assert info.vector_filter_in_index, "2026.x must filter inside the vector index"
        assert "retrieval_experience_embedding" in before
        assert "retrieval_query_embedding" not in before  # retired: see the migration test
    config = await app.db.run_read("vector_index_info")
    assert config[0]["config"]["vector.dimensions"] == 384
    assert config[0]["config"]["vector.similarity_function"].lower() == "cosine"


async def test_neomodel_models_describe_exactly_this_schema(app: App) -> None:
    before = await schema_objects(app)
    await adb.set_connection(driver=app.db.driver)
    out = io.StringIO()
    await adb.install_all_labels(stdout=out)
    assert await schema_objects(app) == before, out.getvalue()


async def test_neomodel_reads_what_the_tools_wrote(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        stored = await remember(client, scope, session, "Staging runs on Kubernetes 1.31", "fact")
    await adb.set_connection(driver=app.db.driver)
    memory = await models.Memory.nodes.get(uid=stored["memory_id"])
    assert (memory.content, memory.scope, memory.status) == (
        "Staging runs on Kubernetes 1.31",
        scope,
        "active",
    )
    events = await memory.derived_from.all()
    assert [e.uid for e in events] == [stored["source_event_id"]]
    assert (await memory.in_scope.single()).uid == scope


async def test_embedding_model_mismatch_stops_start_up(app: App) -> None:
    with pytest.raises(EmbeddingMismatch) as info:
        await check_embedding_space(app.db, "bge-small-en-v1.5", 768)
    message = str(info.value)
    assert f"{DEFAULT_MODEL} (384-d)" in message and "bge-small-en-v1.5 (768-d)" in message
    assert "slowave-graph reembed --model bge-small-en-v1.5" in message
    stored = await app.db.run_read("embedding_space_get")
    assert stored == [{"model": DEFAULT_MODEL, "dimension": 384}]


async def test_an_unset_model_follows_the_database(app: App, neo4j: Neo4jTarget) -> None:
    stored = await app.db.run_read("embedding_space_get")
    assert stored == [{"model": DEFAULT_MODEL, "dimension": 384}]
    assert await database_embedder(app.db, None, app.embedder) is app.embedder
    other = load_embedder(INT8_MODEL)
    followed = await database_embedder(app.db, None, other)  # loaded, but not the database's model
    assert (followed.model_name, followed.dimension) == (DEFAULT_MODEL, 384)
    assert await database_embedder(app.db, INT8_MODEL, other) is other  # configured: that one
    async with open_app(neo4j.settings()) as started:
        assert started.embedder.model_name == DEFAULT_MODEL
    with pytest.raises(EmbeddingMismatch, match=f"embedded with {DEFAULT_MODEL}"):
        async with open_app(neo4j.settings(embedding_model=INT8_MODEL)):
            pass
    assert await app.db.run_read("embedding_space_get") == stored


def schema_nodes(node: Any) -> list[dict[str, Any]]:
    """Every object of a JSON schema (and of its $defs), depth first."""
    if isinstance(node, list):
        return [n for item in node for n in schema_nodes(item)]
    if not isinstance(node, dict):
        return []
    return [node, *(n for value in node.values() for n in schema_nodes(value))]


async def test_tools_list_publishes_the_strict_contract(app: App) -> None:
    async with Client(build_server(app)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    activate_schema = tools["slowave_activate"].input_schema
    assert activate_schema["additionalProperties"] is False
    assert set(activate_schema["required"]) == {"task", "initial_goal", "scope"}
    page = activate_schema["properties"]["page_size"]
    assert (page["minimum"], page["maximum"], page["type"]) == (1, 10, "integer")
    remember_schema = tools["slowave_remember"].input_schema
    types = remember_schema["$defs"]["RememberItem"]["properties"]["type"]["enum"]
    assert types == ["fact", "preference", "decision", "constraint", "instruction", "lesson", "warning",
                     "open_question", "task", "artifact"]  # fmt: skip
    # sent to the model in every conversation: the wire form of tools/list stays within 16 KB, and no
    # tool has a root oneOf/anyOf/allOf (refused by the Anthropic, OpenAI and Gemini APIs)
    listed = ListToolsResult(tools=list(tools.values())).model_dump_json(by_alias=True, exclude_none=True)
    assert len(listed.encode()) <= 16_000, len(listed.encode())
    assert '"title":"Page Size"' not in listed and '{"type":"null"}' not in listed
    assert not any({"oneOf", "anyOf", "allOf"} & set(t.input_schema) for t in tools.values())
    # what strict validators (Ajv strict, the TypeScript SDK's) and form-building clients (the MCP
    # Inspector) need: each required name declared, and an object property typed beside its $ref
    for tool in tools.values():
        for node in schema_nodes([tool.input_schema, tool.output_schema]):
            assert set(node.get("required", [])) <= set(node.get("properties", {})), (tool.name, node)
            for value in node.get("properties", {}).values():
                target = tool.input_schema.get("$defs", {}).get(value.get("$ref", "").split("/")[-1], {})
                assert target.get("type") != "object" or value.get("type") == "object", (tool.name, value)
    assert tools["slowave_commit"].input_schema["properties"]["verification"]["type"] == "object"
    # the rules the server enforces that a schema can say: nonblank strings, the scope's form, context keys
    activate_props = activate_schema["properties"]
    assert activate_props["task"]["minLength"] == activate_props["initial_goal"]["minLength"] == 1
    assert (
        "pattern" in activate_props["scope"] and "pattern" in activate_props["task_context"]["propertyNames"]
    )
    for tool in tools.values():
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert "ok" in tool.output_schema["properties"]
        assert "when" in tool.description.lower() or "call it" in tool.description.lower()
        assert tool.annotations is not None and tool.annotations.open_world_hint is False


async def test_vector_strategies_agree_for_a_small_scope_in_a_larger_database(
    app: App, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-index filtering (2026.x), over-fetch and exact scan (5.26) find the same top hits; so
    does 5.26's automatic choice on either side of its scan threshold (the one-statement scan,
    and the fall-through to over-fetch when the scope is larger)."""
    from slowave_graph.graph import repository
    from slowave_graph.graph.database import ServerInfo
    from slowave_graph.graph.repository import GraphRepository

    small = [
        f"Service {name} authenticates users with short-lived tokens" for name in ("alpha", "beta", "gamma")
    ] + [f"Service {name} stores invoices in PostgreSQL" for name in ("delta", "epsilon", "zeta", "eta")]
    crowd = [f"Crowd note {i}: tokens, users and authentication for system {i}" for i in range(250)]
    ids: dict[str, set[str]] = {scope: set(), scope + "-crowd": set()}
    async with Client(build_server(app)) as client:
        for target, contents in ((scope, small), (scope + "-crowd", crowd)):
            session = (await activate(client, target, "Load"))["session_id"]
            for start in range(0, len(contents), 100):
                batch = [{"content": c, "type": "fact"} for c in contents[start : start + 100]]
                envelope = await call(
                    client, "slowave_remember", {"scope": target, "session_id": session, "memories": batch}
                )
                ids[target] |= {r["data"]["memory_id"] for r in ok(envelope)["results"]}
    [vector] = await app.embedder.aembed(["Which services authenticate users with tokens?"])
    strategies = ["overfetch", "scan"] + (
        ["filtered"] if app.db.server and app.db.server.vector_filter_in_index else []
    )
    results = {}
    for strategy in strategies:
        repo = GraphRepository(app.db, idle_timeout=3600, vector_strategy=strategy)  # type: ignore[arg-type]
        found = await repo.search_direct(scope=scope, embeddings=[vector], lucene=None, k=5)
        assert {r["id"] for r in found.vector} <= ids[scope]  # never another scope's memory
        results[strategy] = sorted(round(float(r["cosine"]), 3) for r in found.vector)
    assert app.db.server is not None
    as_lts = ServerInfo("5.26.31", app.db.server.edition, vector_filter_in_index=False)
    monkeypatch.setattr(app.db, "server", as_lts)  # "auto" as it runs on 5.26
    for threshold in (100, 3):  # the scope (7 memories) is scanned, then over-fetched
        monkeypatch.setattr(repository, "EXACT_SCAN_MAX", threshold)
        repo = GraphRepository(app.db, idle_timeout=3600, vector_strategy="auto")
        found = await repo.search_direct(scope=scope, embeddings=[vector], lucene=None, k=5)
        assert {r["id"] for r in found.vector} <= ids[scope]
        results[f"auto<={threshold}"] = sorted(round(float(r["cosine"]), 3) for r in found.vector)
    # the same top-5 similarities everywhere (memories with equal scores are interchangeable)
    assert all(len(scores) == 5 for scores in results.values()), results
    assert len({tuple(scores) for scores in results.values()}) == 1, results


async def test_experience_search_agrees_with_the_scan(app: App, scope: str) -> None:
    """Past questions found through the retrieval vector index (2026.x) are the scan's, never
    another scope's, both while feedback's marks wait for the batch that moves them into the index
    and after it; once the scope is deleted the guarded search answers [] at once."""
    from slowave_graph.graph.repository import GraphRepository

    if not (app.db.server and app.db.server.vector_filter_in_index):
        pytest.skip("the retrieval vector index needs in-index filtering (Neo4j 2026.01+)")
    services = ["billing", "search", "auth", "checkout", "ledger", "mailer"]
    cues = await app.embedder.aembed(["How is the billing service deployed?", "Deploy the search service"])

    async def experience() -> dict[str, list[tuple[str, float, str]]]:
        found = {}
        for strategy in ("scan", "filtered"):
            repo = GraphRepository(app.db, idle_timeout=3600, vector_strategy=strategy)  # type: ignore[arg-type]
            rows = await repo.experience(
                scope=scope, embeddings=cues, min_similarity=0.5, irrelevant_at=0.5, k=3
            )
            found[strategy] = sorted(
                (r["id"], round(float(r["similarity"]), 4), r["assessment"]) for r in rows
            )
        return found

    async def kinds() -> list[tuple[Any, ...]]:
        vectors = await app.db.driver.execute_query(
            "MATCH (r:Retrieval {scope: $scope}) RETURN r.query STARTS WITH 'How' AS learned_one, "
            "r.learned AS learned, r.query_embedding = r.experience_embedding AS copied, "
            "r.experience_pending AS pending",
            scope=scope,
            database_=app.db.database,
        )
        return sorted((r["learned_one"], r["learned"], r["copied"], r["pending"]) for r in vectors.records)

    async with app.experience.paused():  # this process moves no marks into the index in here
        async with Client(build_server(app)) as client:
            for target in (scope, scope + "-other"):
                session = (await activate(client, target, "Load"))["session_id"]
                for svc in services:
                    await remember(
                        client, target, session, f"The {svc} service is deployed with Helm on Fridays"
                    )
                for svc in services:  # one learned retrieval per question
                    shown = await activate(client, target, f"How is the {svc} service deployed?")
                    marks = [{"memory_id": m["memory_id"], "assessment": "used", "effect": "helped"}
                             for m in shown["memories"][:2]]  # fmt: skip
                    ok(await call(client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"],
                                                               "memory_feedback": marks}))  # fmt: skip
        # feedback marked the retrievals that taught something. This process moves none into the
        # index in here, but another server process of the test session (the shared HTTP server)
        # may sweep at any moment: each learned retrieval is either waiting or already moved.
        state = await kinds()
        assert state[0] == (False, None, None, None) and len(state) == 1 + len(services)
        assert {k[:2] for k in state[1:]} == {(True, True)}
        assert {k[2:] for k in state[1:]} <= {(None, True), (True, None)}
        pending = await experience()
        assert pending["scan"], "the learned retrievals must be found"
        assert pending["filtered"] == pending["scan"]
        await app.repo.index_pending_experience(limit=1000)
    # moved: only retrievals that taught something carry the indexed copy of their query vector
    assert await kinds() == [(False, None, None, None)] + [(True, True, True, None)] * len(services)
    indexed = await experience()
    assert indexed["filtered"] == indexed["scan"] == pending["scan"]
    await app.db.run_write("delete_scope", scope=scope)
    assert (
        await app.db.run_read(
            "experience_search",
            scope=scope,
            embeddings=cues,
            min_similarity=0.0,
            irrelevant_at=0.0,
            k=3,
            search_k=3,
            search_from=6,
        )
        == []
    )


async def test_the_exact_experience_scan_reads_the_most_recent_lessons(
    app: App, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neo4j 5.26 compares the cues with a scope's most recent learned retrievals only (a window,
    so that an activate does not slow down with every feedback ever given): with a window of two
    the oldest of three lessons no longer counts; with the default all three do."""
    from slowave_graph.graph import repository
    from slowave_graph.graph.repository import GraphRepository

    services = ["billing", "search", "auth"]
    taught: list[set[str]] = []  # per question, in order: the memories its feedback marked
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Load"))["session_id"]
        for svc in services:
            await remember(client, scope, session, f"The {svc} service is deployed with Helm on Fridays")
        for svc in services:  # each question's feedback teaches its own service's memory
            shown = await activate(client, scope, f"How is the {svc} service deployed?")
            marks = [{"memory_id": m["memory_id"], "assessment": "used", "effect": "helped"}
                     for m in shown["memories"] if svc in m["content"]]  # fmt: skip
            ok(await call(client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"],
                                                       "memory_feedback": marks}))  # fmt: skip
            taught.append({m["memory_id"] for m in marks})
    assert [len(t) for t in taught] == [1, 1, 1]
    cues = await app.embedder.aembed(["How is the billing service deployed?"])
    repo = GraphRepository(app.db, idle_timeout=3600, vector_strategy="scan")

    async def lessons() -> set[str]:
        rows = await repo.experience(
            scope=scope, embeddings=cues, min_similarity=0.3, irrelevant_at=0.3, k=10
        )
        return {r["id"] for r in rows}

    assert await lessons() == taught[0] | taught[1] | taught[2]
    monkeypatch.setattr(repository, "EXPERIENCE_WINDOW", 2)
    assert await lessons() == taught[1] | taught[2]


async def test_procedure_search_agrees_with_the_scan(app: App, scope: str) -> None:
    """Applicable procedures through the procedure vector index (2026.x) are the scan's, never
    another scope's."""
    from slowave_graph.graph.repository import GraphRepository

    if not (app.db.server and app.db.server.vector_filter_in_index):
        pytest.skip("the procedure vector index needs in-index filtering (Neo4j 2026.01+)")
    services = ["billing", "search", "auth", "checkout", "ledger"]
    async with Client(build_server(app)) as client:
        for target in (scope, scope + "-other"):
            for svc in services:
                shown = await activate(client, target, f"Deploy the {svc} service")
                session = shown["session_id"]
                marks = [{"procedure_id": p["procedure_id"], "use": "not_used"} for p in shown["procedures"]]
                ok(await call(client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"],
                   "procedure_feedback": marks, "coverage": "complete"}))  # fmt: skip
                procedure = {"summary": f"Deploy {svc} with Helm after the contract tests",
                             "context": {"service": svc}, "steps": [{"summary": "Run the contract tests"}],
                             "caveats": []}  # fmt: skip
                await commit(client, session, final_goal=f"Deploy {svc}", procedure=procedure)
    cues = await app.embedder.aembed(["Deploy the billing service", "How do we release ledger?"])
    found = {}
    for strategy in ("scan", "filtered"):
        repo = GraphRepository(app.db, idle_timeout=3600, vector_strategy=strategy)  # type: ignore[arg-type]
        rows = await repo.search_procedures(scope=scope, embeddings=cues, floor=0.2, k=3)
        found[strategy] = [(r["id"], round(float(r["cosine"]), 4)) for r in rows]
    assert len(found["scan"]) == 3
    assert found["filtered"] == found["scan"]


async def test_filtered_search_of_an_emptied_scope_after_deletions(app: App, scope: str) -> None:
    """Neo4j 2026.09.0 fails (and may drop the connection) when a filtered vector SEARCH matches no
    live node of an index that has seen deletions; the guarded query must answer [] at once."""
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Load"))["session_id"]
        for start in range(0, 300, 100):
            batch = [
                {"content": f"Throwaway fact number {i} about pipelines", "type": "fact"}
                for i in range(start, start + 100)
            ]
            ok(
                await call(
                    client, "slowave_remember", {"scope": scope, "session_id": session, "memories": batch}
                )
            )
    await app.db.run_write("delete_scope", scope=scope)
    if app.db.server and app.db.server.supports_search_clause:  # the statement is Cypher 25
        [vector] = await app.embedder.aembed(["pipelines"])
        found = await app.db.run_read(
            "vector_search_filtered", scope=scope, embeddings=[vector], k=10, search_from=20
        )
        assert hits(found) == []
    async with Client(build_server(app)) as client:
        again = await activate(client, scope, "Tell me about pipelines")
        assert again["memories"] == [] and again["memory_state"] == "cold_start"
        assert (await recall_empty(client, scope, again["session_id"])) == []


async def recall_empty(client: Client, scope: str, session: str) -> list[object]:
    data = ok(
        await call(client, "slowave_recall", {"scope": scope, "session_id": session, "query": "pipelines"})
    )
    return list(data["memories"])


async def test_a_fulltext_index_of_the_old_analyzer_is_rebuilt_with_stemming(app: App, scope: str) -> None:
    """Databases created before the english analyzer get their memory_text index rebuilt at start:
    afterwards an inflected query word finds the stored form ("deploying" → "deploy")."""
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        stored = await remember(client, scope, session, "We deploy the shop API with blue-green", "fact")
    await app.db.driver.execute_query("DROP INDEX memory_text", database_=app.db.database)
    await app.db.driver.execute_query(
        "CREATE FULLTEXT INDEX memory_text FOR (m:Memory) ON EACH [m.content, m.scope_token, m.status] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}",
        database_=app.db.database,
    )
    await app.db.run_schema("await_indexes", timeout_seconds=120)
    lucene = text.lucene_query("deploying", text.scope_token(scope))
    search = "CALL db.index.fulltext.queryNodes('memory_text', $q) YIELD node RETURN node.id AS id"
    before = await app.db.driver.execute_query(search, q=lucene, database_=app.db.database)
    assert [r["id"] for r in before.records] == []  # no stemming: "deploying" ≠ "deploy"

    await ensure_schema(app.db, app.embedder.model_name, app.embedder.dimension)
    analyzers = {r["name"]: r["analyzer"] for r in await app.db.run_read("fulltext_index_info")}
    assert analyzers == {"memory_text": "english", "procedure_text": "english"}
    after = await app.db.driver.execute_query(search, q=lucene, database_=app.db.database)
    assert [r["id"] for r in after.records] == [stored["memory_id"]]


async def test_a_quantized_vector_index_is_rebuilt_with_full_precision_vectors(app: App, scope: str) -> None:
    """The filtered vector indexes keep full-precision vectors (faster and closer to the exact
    top-k than 2026.09's default BINARY, see VECTOR_QUANTIZATION); an index built with BINARY by an
    earlier version is rebuilt at start and still finds what was stored."""
    if not (app.db.server and app.db.server.supports_search_clause):
        pytest.skip("quantization types and in-index filtering need Neo4j 2026.x")

    async def quantization() -> dict[str, str]:
        return {r["name"]: r["quantization"] for r in await app.db.run_read("vector_index_quantization")}

    names = {"memory_embedding", "retrieval_experience_embedding", "procedure_embedding"}
    assert await quantization() == dict.fromkeys(names, VECTOR_QUANTIZATION)
    content = "The billing cron job runs at two in the morning UTC"
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        stored = await remember(client, scope, session, content, "fact")
    await app.db.run_schema("drop_vector_index")
    dimension = app.embedder.dimension
    await app.db.run_schema("vector_index_filtered", vector_config=vector_config(dimension, "BINARY"))
    await app.db.run_schema("await_indexes", timeout_seconds=120)
    assert (await quantization())["memory_embedding"] == "BINARY"

    await ensure_schema(app.db, app.embedder.model_name, dimension)
    assert await quantization() == dict.fromkeys(names, VECTOR_QUANTIZATION)
    [cue] = await app.embedder.aembed(["When does the billing cron run?"])
    found = await app.repo.search_direct(scope=scope, embeddings=[cue], lucene=None, k=5)
    assert [hit["id"] for hit in found.vector] == [stored["memory_id"]]


async def test_the_index_of_every_retrieval_query_is_retired_for_learned_ones(app: App, scope: str) -> None:
    """Databases of earlier versions indexed every retrieval's query vector. At start-up the
    learned ones get experience_embedding (found by the experience search again), and the old
    index, which cost every activate and recall its upkeep, is dropped."""
    if not (app.db.server and app.db.server.vector_filter_in_index):
        pytest.skip("the retrieval vector index needs in-index filtering (Neo4j 2026.01+)")
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        await remember(client, scope, session, "Invoices are archived to S3 every night", "fact")
        shown = await activate(client, scope, "Where are invoices archived?")
        marked = await mark_helped(client, shown)
        assert marked
    [cue] = await app.embedder.aembed(["Where are invoices archived?"])

    async def experience() -> list[str]:
        rows = await app.db.run_read(
            "experience_search",
            scope=scope,
            embeddings=[cue],
            min_similarity=0.8,
            irrelevant_at=0.8,
            k=5,
            search_k=5,
            search_from=10,
        )
        return sorted({str(r["id"]) for r in rows})

    assert await experience() == sorted(marked)
    # the state an earlier version left: no copies, and the index over every query vector
    run = app.db.driver.execute_query
    await app.experience.flush()  # nothing of this scope left to move behind the test's back
    await run("MATCH (r:Retrieval {scope: $scope}) REMOVE r.experience_embedding", scope=scope,
              database_=app.db.database)  # fmt: skip
    await run(
        "CYPHER 25 CREATE VECTOR INDEX retrieval_query_embedding IF NOT EXISTS FOR (r:Retrieval) ON r.query_embedding "
        "WITH [r.scope, r.learned] OPTIONS {indexConfig: {`vector.dimensions`: 384, "
        "`vector.similarity_function`: 'cosine'}}",
        database_=app.db.database,
    )
    await app.db.run_schema("await_indexes", timeout_seconds=120)
    assert await app.db.run_read("retrieval_query_index_exists")
    assert await experience() == [], "without the copies the learned retrieval is not found"

    await ensure_schema(app.db, app.embedder.model_name, app.embedder.dimension)
    assert not await app.db.run_read("retrieval_query_index_exists")
    assert await experience() == sorted(marked)


async def profiled(app: App, name: str, **params: Any) -> tuple[list[Any], dict[str, Any]]:
    """A named Cypher 25 statement run under PROFILE: its records and its profiled plan."""
    statement = app.db.q(name)
    result = await app.db.driver.execute_query(
        "CYPHER 25 PROFILE " + statement[len("CYPHER 25") :], database_=app.db.database, **params
    )
    assert result.summary.profile is not None
    return result.records, result.summary.profile


def plan_rows(node: dict[str, Any], operator: str) -> int:
    """Rows produced by every operator of this kind in a profiled plan."""
    own = int(node.get("rows", 0)) if str(node["operatorType"]).startswith(operator) else 0
    return own + sum(plan_rows(child, operator) for child in node.get("children", []))


async def test_a_filtered_search_never_asks_for_more_than_the_scope_holds(app: App, scope: str) -> None:
    """Neo4j 2026.09.0 can fail without answering when a filtered vector SEARCH has a LIMIT above
    the live nodes its filter matches (seen on a 100k-memory database with deletions, where every
    scope under 50 memories hung activate). Below search_from(k) live memories the statement
    scans the scope exactly instead: the plan's vector search then produces no rows, and the hits
    are the exact top-k; at or above it the index search runs."""
    from slowave_graph.graph.repository import GraphRepository, search_from

    if not (app.db.server and app.db.server.vector_filter_in_index):
        pytest.skip("SEARCH needs Neo4j 2026.01+")
    contents = [
        f"Service {name} retries failed payments nightly" for name in ("a", "b", "c", "d", "e", "f", "g")
    ]
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Load"))["session_id"]
        batch = [{"content": c, "type": "fact"} for c in contents]
        ok(await call(client, "slowave_remember", {"scope": scope, "session_id": session, "memories": batch}))
    [vector] = await app.embedder.aembed(["Which service retries payments?"])
    exact = GraphRepository(app.db, idle_timeout=3600, vector_strategy="scan")  # type: ignore[arg-type]
    for k, searched in ((3, True), (5, False), (50, False)):
        assert (search_from(k) <= len(contents)) is searched
        records, plan = await profiled(
            app, "vector_search_filtered", scope=scope, embeddings=[vector], k=k, search_from=search_from(k)
        )
        searched_rows = plan_rows(plan, "NodeVectorIndexSearch")
        assert (searched_rows > 0) is searched, (k, searched_rows)
        got = sorted(round(float(r["cosine"]), 4) for r in hits([dict(r) for r in records]))
        want = sorted(round(float(r["cosine"]), 4) for r in (await exact.search_direct(
            scope=scope, embeddings=[vector], lucene=None, k=k)).vector)  # fmt: skip
        assert got == want and len(got) == min(k, len(contents))


async def test_a_guarded_search_reads_only_what_its_guard_needs(app: App, scope: str) -> None:
    """The three guarded searches (memories, learned retrievals, procedures) count at most
    search_from(k) live entries, then either SEARCH or scan the few there are. When the search
    runs, the scan's index seek must read nothing: with a plain {scope: $scope} the planner put the
    guard's test after the seek, so every search also read the whole scope's index entries (20k
    for a large scope, 3 of a 6 ms memory search)."""
    from slowave_graph.graph.repository import search_from

    if not (app.db.server and app.db.server.vector_filter_in_index):
        pytest.skip("SEARCH needs Neo4j 2026.01+")
    services = ["billing", "search", "ledger"]
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Load"))["session_id"]
        for svc in services:
            await remember(client, scope, session, f"The {svc} service is deployed with Helm on Fridays")
        for svc in services:  # a learned retrieval and a procedure each
            shown = await activate(client, scope, f"How is the {svc} service deployed?")
            marks = [{"memory_id": m["memory_id"], "assessment": "used", "effect": "helped"}
                     for m in shown["memories"]]  # fmt: skip
            ok(await call(client, "slowave_feedback", {
                "retrieval_id": shown["retrieval_id"], "memory_feedback": marks, "coverage": "complete",
                "procedure_feedback": [{"procedure_id": p["procedure_id"], "use": "not_used"}
                                       for p in shown["procedures"]]}))  # fmt: skip
            procedure = {"summary": f"Deploy {svc} with Helm", "context": {"service": svc},
                         "steps": [{"summary": "Run the contract tests"}], "caveats": []}  # fmt: skip
            await commit(client, shown["session_id"], final_goal=f"Deploy {svc}", procedure=procedure)
    await app.experience.flush()  # the learned retrievals are in the index; none is left to compare
    [vector] = await app.embedder.aembed(["How is the billing service deployed?"])
    k = 1
    assert search_from(k) < len(services), "each index holds more than the guard counts: SEARCH runs"
    extra = {"vector_search_filtered": {}, "experience_search": {"min_similarity": 0.0, "irrelevant_at": 0.0, "search_k": k},
             "procedure_search_filtered": {"floor": 0.0}}  # fmt: skip
    for name, params in extra.items():
        records, plan = await profiled(
            app, name, scope=scope, embeddings=[vector], k=k, search_from=search_from(k), **params
        )
        assert plan_rows(plan, "NodeVectorIndexSearch") > 0, name
        assert plan_rows(plan, "NodeIndexSeek") == search_from(k), (name, plan_rows(plan, "NodeIndexSeek"))
        assert records, name


class _Float64Detail:
    """The real embedder's vectors plus a detail float32 cannot hold (1e-12 on the first
    component), so a read-back tells float32 storage from float64."""

    def __init__(self, embedder: Any) -> None:
        self.inner = embedder
        self.model_name, self.dimension = embedder.model_name, embedder.dimension

    def embed(self, texts: Any) -> list[list[float]]:
        return [[v[0] + 1e-12, *v[1:]] for v in self.inner.embed(texts)]

    async def aembed(self, texts: Any) -> list[list[float]]:
        return self.embed(texts)


async def test_vectors_are_stored_as_float32(app: App, scope: str) -> None:
    """Memory and retrieval vectors are written through db.create.setNodeVectorProperty: float32,
    as the vector index holds them and as vector.similarity.cosine computes, at half the store of a
    Cypher list of doubles. What the embedder gave beyond float32 is not kept."""
    import numpy as np

    from slowave_graph.contract.activate import ActivateRequest
    from slowave_graph.contract.remember import RememberRequest
    from slowave_graph.services.activation import ActivationService
    from slowave_graph.services.context import ClientInfo
    from slowave_graph.services.remember import RememberService
    from slowave_graph.services.retrieval import Retriever

    embedder = _Float64Detail(app.embedder)
    client = ClientInfo("test", "1")
    first = await ActivationService(Retriever(app.repo, embedder)).activate(
        ActivateRequest(scope=scope, task="Which port does the billing API use?", initial_goal="port"), client
    )
    await RememberService(app.repo, embedder).remember(
        RememberRequest(scope=scope, session_id=first.session_id, content="The billing API listens on 8443",
                        type="fact"), client
    )  # fmt: skip
    second = await ActivationService(Retriever(app.repo, embedder)).activate(
        ActivateRequest(scope=scope, task="Which port does the billing API use?", initial_goal="port"), client
    )
    found = await app.db.driver.execute_query(
        """MATCH (m:Memory {scope: $scope}) WITH collect(m.embedding) AS memories
           MATCH (r:Retrieval {id: $retrieval_id})
           RETURN memories, r.query_embedding AS query""",
        scope=scope, retrieval_id=second.retrieval_id, database_=app.db.database,
    )  # fmt: skip
    [memory], query = found.records[0]["memories"], found.records[0]["query"]
    for stored, given in ((memory, embedder.embed(["The billing API listens on 8443"])[0]),
                          (query, embedder.embed(["Which port does the billing API use?"])[0])):  # fmt: skip
        assert len(stored) == 384
        assert stored == np.asarray(given, dtype=np.float32).astype(np.float64).tolist()
        assert stored[0] != given[0]  # the float64-only detail is gone
