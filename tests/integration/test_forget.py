"""`slowave-graph forget`: a scope or one memory deleted with everything only it owns, in one
transaction, with an audit record; the dry run changes nothing; the audit passes afterwards.

Histories are made through the services the MCP tools call, in fresh scopes; every node and
relationship of a scope is compared before and after (``fingerprint``)."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.feedback import FeedbackRequest, FeedbackResult
from slowave_graph.contract.recall import RecallRequest, RecallResult
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest, RememberResult
from slowave_graph.graph.paging import FORGOTTEN
from slowave_graph.graph.stats import collect_stats
from slowave_graph.operator.audit import audit
from slowave_graph.operator.forget import UnknownTarget, forget, plan
from slowave_graph.services.concepts import concept_key
from tests.integration.test_audit import CLAIMS, CLIENT, commit_request, history
from tests.support.cli import run_cli

pytestmark = pytest.mark.neo4j

# Every node of a scope (they all carry it, the Scope node as its id) with its labels, properties
# and outgoing relationships, the other end named by label and id (a concept by its key).
FINGERPRINT = """
MATCH (n) WHERE n.scope = $scope OR (n:Scope AND n.id = $scope)
RETURN labels(n) AS labels, coalesce(n.id, n.key) AS id, properties(n) AS props,
       [(n)-[r]->(o) | [type(r), properties(r), labels(o)[0], coalesce(o.id, o.key)]] AS out
"""
Key = tuple[str, str]


def _canon(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _canon(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_canon(v) for v in value)
    return repr(value)


async def fingerprint(app: App, scope: str) -> dict[Key, tuple[Any, tuple[Any, ...]]]:
    """(label, id) → (properties, sorted outgoing relationships) of every node of the scope."""
    # the background indexer moves retrievals with feedback into the experience index (a property
    # copy): done first, so that it does not happen between two fingerprints
    await app.experience.flush()
    rows = await q(app, FINGERPRINT, scope=scope)
    found = {
        (r["labels"][0], str(r["id"])): (_canon(r["props"]), tuple(sorted(repr(_canon(o)) for o in r["out"])))
        for r in rows
    }
    assert len(found) == len(rows), "two nodes of the scope share a label and id"
    return found


async def q(app: App, statement: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await app.db.driver.execute_query(statement, params, database_=app.db.database)
    return [r.data() for r in records]


async def relationship_counts(app: App, scope: str) -> Counter[str]:
    rows = await q(
        app,
        "MATCH (n) WHERE n.scope = $scope OR (n:Scope AND n.id = $scope) "
        "MATCH (n)-[r]-() WITH DISTINCT r RETURN type(r) AS type, count(*) AS n",
        scope=scope,
    )
    return Counter({r["type"]: r["n"] for r in rows})


async def forgettings(app: App) -> int:
    return int((await q(app, "MATCH (f:Forgetting) RETURN count(f) AS n"))[0]["n"])


async def record_of(app: App, forgetting_id: str) -> dict[str, Any]:
    [row] = await q(app, "MATCH (f:Forgetting {id: $id}) RETURN properties(f) AS f", id=forgetting_id)
    return dict(row["f"])


RECORD_KEYS = {
    "id", "target", "target_id", "scope_id", "actor", "host", "version", "at", "node_labels", "node_counts",
    "relationship_types", "relationship_counts", "nodes", "relationships",
}  # fmt: skip


def assert_no_content(record: dict[str, Any], texts: list[str]) -> None:
    """The record says how much went, never what it said: none of the words of the texts."""
    assert set(record) == RECORD_KEYS
    flat = json.dumps(record, default=str).casefold()
    words = {w for text in texts for w in re.findall(r"\w{5,}", text.casefold())}
    assert len(words) > 10 and not [w for w in words if w in flat], record


# --------------------------------------------------------------------------- a scope


async def test_forgetting_a_scope_removes_it_all_and_nothing_else(app: App, scope: str) -> None:
    neighbour = f"{scope}-n"
    await history(app, scope)
    await history(app, neighbour)
    before, next_door = await fingerprint(app, scope), await fingerprint(app, neighbour)
    labels = Counter(label for label, _ in before)
    assert labels["Memory"] == 3 and labels["Retrieval"] == 4 and labels["Procedure"] == 1
    assert labels["Concept"] > 3 and labels["Cursor"] >= 2 and labels["Episode"] == 2

    # the dry run counts exactly the scope's nodes and relationships, and changes nothing
    planned = await plan(app.db, scope=scope)
    assert (planned.target, planned.target_id, planned.done) == ("scope", scope, False)
    assert planned.nodes == dict(labels)
    assert planned.relationships == dict(await relationship_counts(app, scope))
    assert planned.relationships["ASSESSED"] >= 4 and planned.relationships["EXPOSED"] >= 4
    assert await fingerprint(app, scope) == before
    records = await forgettings(app)

    started = datetime.now(UTC)
    done = await forget(app.db, scope=scope, who="forget-test")
    assert done.done and done.nodes == planned.nodes and done.relationships == planned.relationships
    assert await fingerprint(app, scope) == {}
    assert await relationship_counts(app, scope) == Counter()
    assert await fingerprint(app, neighbour) == next_door  # every node, property and relationship
    assert await forgettings(app) == records + 1

    assert done.record is not None
    record = await record_of(app, done.record["id"])
    assert_no_content(record, CLAIMS)
    assert (record["target"], record["target_id"], record["scope_id"]) == ("scope", scope, scope)
    assert record["actor"] == "forget-test" and done.record["actor"] == "forget-test"
    assert dict(zip(record["node_labels"], record["node_counts"], strict=True)) == planned.nodes
    assert dict(zip(record["relationship_types"], record["relationship_counts"], strict=True)) == (
        planned.relationships
    )
    assert record["nodes"] == planned.total_nodes and record["relationships"] == planned.total_relationships
    at = record["at"].to_native()
    assert started - timedelta(seconds=1) <= at <= datetime.now(UTC)
    assert done.record["at"] == at.strftime("%Y-%m-%dT%H:%M:%SZ")

    # nothing lists the forgotten scope any more: stats (the dashboard's overview), the catalog
    stats = await collect_stats(app.db, scope_limit=100_000)
    scopes = {r["scope"] for r in stats["scopes"]}
    assert neighbour in scopes and scope not in scopes
    assert stats["labels"]["Forgetting"] == records + 1
    assert await app.db.run_read("scope_overview", scope=scope) == []
    report = await audit(app.db, [scope, neighbour])
    assert report.ok, report.text()
    await forget(app.db, scope=neighbour, who="forget-test")


# --------------------------------------------------------------------------- a memory


async def feedback_all(app: App, retrieval_id: str, memory_ids: list[str]) -> None:
    result = await app.services.feedback.feedback(
        FeedbackRequest.model_validate(
            {
                "retrieval_id": retrieval_id,
                "coverage": "complete",
                "memory_feedback": [{"memory_id": m, "assessment": "used"} for m in memory_ids],
            }
        ),
        CLIENT,
    )
    assert isinstance(result, FeedbackResult) and result.coverage == "complete", result


async def all_pages(app: App, session_id: str, scope: str, first: RecallResult | ActivateResult) -> list[str]:
    """Serve every later page of a retrieval; the memory ids shown on them."""
    shown, cursor = [], first.continue_from
    while cursor is not None:
        page = await app.services.recall.recall(
            RecallRequest(session_id=session_id, scope=scope, continue_from=cursor), CLIENT
        )
        shown += [m.memory_id for m in page.memories]
        cursor = page.continue_from
    return shown


async def remember(app: App, scope: str, session_id: str, texts: list[str]) -> list[str]:
    stored = await app.services.remember.remember(
        RememberRequest.model_validate({"scope": scope, "session_id": session_id,
                                        "memories": [{"content": t, "type": "fact"} for t in texts]}),
        CLIENT,
    )  # fmt: skip
    assert isinstance(stored, RememberBatchResult)
    return [r.data.memory_id for r in stored.results if r.data is not None]


async def test_forgetting_a_memory_that_was_shown_and_assessed(app: App, scope: str) -> None:
    sv = app.services
    # Session A remembers the three claims in one call (a NEXT chain c0 → c1 → c2), is shown them
    # (the forgotten one, c1, first), gives feedback on every page and commits.
    a = await sv.activation.activate(
        ActivateRequest(task="Fix Atlas logins", initial_goal="Fix logins", scope=scope), CLIENT
    )
    ids = await remember(app, scope, a.session_id, CLAIMS)
    assert len(ids) == 3
    c0, c1, c2 = ids
    question = "How many failed login attempts lock an Atlas account?"
    found = await sv.recall.recall(
        RecallRequest(session_id=a.session_id, scope=scope, query=question, page_size=1), CLIENT
    )
    assert [m.memory_id for m in found.memories] == [c1]
    shown = [c1, *await all_pages(app, a.session_id, scope, found)]
    await feedback_all(app, found.retrieval_id, shown)
    await feedback_all(app, a.retrieval_id, [m.memory_id for m in a.memories])
    await sv.commit.commit(commit_request(a.session_id, procedure=False), CLIENT)

    # Session B is shown c1 on page 1 and declares its feedback complete; a second recall leaves
    # c1 on a page not served yet. B stays open until after the forgetting.
    b = await sv.activation.activate(
        ActivateRequest(task=question, initial_goal="Unlock accounts", scope=scope, page_size=1), CLIENT
    )
    assert [m.memory_id for m in b.memories] == [c1]
    await feedback_all(app, b.retrieval_id, [c1])
    later = await sv.recall.recall(
        RecallRequest(session_id=b.session_id, scope=scope, query="Atlas login tokens", page_size=1), CLIENT
    )
    [catalog] = await q(
        app, "MATCH (r:Retrieval {id: $id}) RETURN r.catalog_ids AS ids", id=later.retrieval_id
    )
    assert c1 in catalog["ids"][1:], catalog  # on a later page
    await feedback_all(app, later.retrieval_id, [m.memory_id for m in later.memories])

    # c1's concepts: some other memories mention too, some only it
    concepts = await q(
        app,
        "MATCH (m:Memory {id: $id})-[:MENTIONS]->(c:Concept) "
        "RETURN c.key AS key, c.df AS df, COUNT { (c)<-[:MENTIONS]-(o:Memory) WHERE o <> m } AS others",
        id=c1,
    )
    shared = {c["key"]: c["df"] for c in concepts if c["others"] > 0}
    only = {c["key"] for c in concepts if c["others"] == 0}
    assert concept_key("Atlas") in shared and only >= {concept_key("locks"), concept_key("account")}, concepts
    [home] = await q(app, "MATCH (s:Scope {id: $scope}) RETURN s.active_memories AS n", scope=scope)
    assert home["n"] == 3
    chain = "MATCH (a:Memory {scope: $scope})-[:NEXT]->(b:Memory) RETURN a.id AS a, b.id AS b ORDER BY a, b"
    assert [(r["a"], r["b"]) for r in await q(app, chain, scope=scope)] == [(c0, c1), (c1, c2)]

    [event] = await q(app, "MATCH (:Memory {id: $id})-[:DERIVED_FROM]->(e:Event) RETURN e.id AS id", id=c1)
    before = await fingerprint(app, scope)
    report = await audit(app.db, [scope])
    assert report.ok, report.text()

    planned = await plan(app.db, memory=c1)
    assert (planned.target, planned.scope) == ("memory", scope)
    assert planned.nodes == {"Memory": 1, "Event": 1, "Concept": len(only)}
    # shown (and assessed) by A's recall and B's activation; listed by B's recall too
    assert planned.relationships["EXPOSED"] == 2 and planned.relationships["ASSESSED"] == 2
    assert planned.relationships["NEXT"] == 2 and planned.relationships["MENTIONS"] == len(concepts)
    assert planned.relationships["DERIVED_FROM"] == 3  # to its event and A's episode; A's episode to it
    assert planned.updated == {
        "next_bridged": 1,
        "retrieval_catalogs": 3,
        "coverage_declarations": 2,
        "session_heads": 0,  # A's last memory is c2
        "concept_counts": len(shared),
    }
    assert await fingerprint(app, scope) == before  # the dry run changed nothing

    done = await forget(app.db, memory=c1, scope=scope, who="forget-test")
    assert done.done and done.nodes == planned.nodes and done.relationships == planned.relationships
    assert done.updated == planned.updated
    after = await fingerprint(app, scope)

    # gone: the memory, its event (its text), its concepts of its own; the text is nowhere
    gone = set(before) - set(after)
    assert gone == {("Memory", c1), ("Event", event["id"])} | {("Concept", key) for key in only}
    assert CLAIMS[1] in repr(before) and CLAIMS[1] not in repr(after)
    assert set(after) <= set(before)
    # the shared concepts stay, counted one active memory fewer; so does the scope
    left = await q(
        app,
        "MATCH (c:Concept {scope: $scope}) WHERE c.key IN $keys RETURN c.key AS key, c.df AS df",
        scope=scope,
        keys=[*shared, *only],
    )
    assert {c["key"]: c["df"] for c in left} == {k: df - 1 for k, df in shared.items()}
    [home] = await q(app, "MATCH (s:Scope {id: $scope}) RETURN s.active_memories AS n", scope=scope)
    assert home["n"] == 2
    # c0 and c2 are neighbours now
    assert [(r["a"], r["b"]) for r in await q(app, chain, scope=scope)] == [(c0, c2)]

    # the other memories keep every property and every relationship but those to c1; c0 gains
    # the NEXT to c2
    def to_c1(rels: tuple[str, ...]) -> set[str]:
        return {r for r in rels if f"'{c1}'" in r}

    for key in (("Memory", c0), ("Memory", c2)):
        props, rels = before[key]
        assert after[key][0] == props
        assert set(rels) - set(after[key][1]) == to_c1(rels)
    assert to_c1(before[("Memory", c0)][1]) and not to_c1(before[("Memory", c2)][1])  # c0 → c1 → c2
    [bridge] = set(after[("Memory", c0)][1]) - set(before[("Memory", c0)][1])
    assert bridge.startswith("(\"'NEXT'\"") and f"'{c2}'" in bridge
    assert after[("Memory", c2)][1] == before[("Memory", c2)][1]
    # catalogs keep c1's place as a tombstone
    [catalog] = await q(
        app, "MATCH (r:Retrieval {id: $id}) RETURN r.catalog_ids AS ids", id=later.retrieval_id
    )
    assert c1 not in catalog["ids"] and FORGOTTEN in catalog["ids"]

    # the record
    assert done.record is not None
    record = await record_of(app, done.record["id"])
    assert_no_content(record, CLAIMS)
    assert (record["target"], record["target_id"], record["scope_id"]) == ("memory", c1, scope)
    assert dict(zip(record["node_labels"], record["node_counts"], strict=True)) == planned.nodes

    # B carries on: the later pages of its recall skip c1, feedback completes, the commit goes
    # through (its declarations count one exposure fewer), and the audit holds
    rest = await all_pages(app, b.session_id, scope, later)
    assert c1 not in rest
    served = await q(
        app, "MATCH (:Retrieval {id: $id})-[:EXPOSED]->(m:Memory) RETURN m.id AS id", id=later.retrieval_id
    )
    await feedback_all(app, later.retrieval_id, [r["id"] for r in served])
    closed = await sv.commit.commit(commit_request(b.session_id, procedure=False), CLIENT)
    assert closed.operation == "closed"
    report = await audit(app.db, [scope])
    assert report.ok, report.text()

    # retrieval no longer finds it, by any road
    again = await sv.activation.activate(
        ActivateRequest(task=question, initial_goal="Unlock accounts", scope=scope), CLIENT
    )
    direct = await sv.recall.recall(
        RecallRequest(session_id=again.session_id, scope=scope, query=CLAIMS[1]), CLIENT
    )
    returned = [m.memory_id for m in again.memories + direct.memories]
    assert returned and c1 not in returned
    assert (await app.db.run_read("memories_for_page", ids=[c1])) == []
    await app.db.run_write("delete_scope", scope=scope)


async def test_forgetting_a_sessions_last_memory(app: App, scope: str) -> None:
    """The next remember of the session links to what it remembered before the forgotten one."""
    act = await app.services.activation.activate(
        ActivateRequest(task="Note facts", initial_goal="Note facts", scope=scope), CLIENT
    )
    [first] = await remember(app, scope, act.session_id, ["Harbor deploys run on Tuesdays"])
    [second] = await remember(app, scope, act.session_id, ["Harbor backups are kept for 30 days"])
    planned = await plan(app.db, memory=second)
    assert planned.updated["session_heads"] == 1 and planned.updated["next_bridged"] == 0
    await forget(app.db, memory=second)
    [ses] = await q(app, "MATCH (s:Session {id: $id}) RETURN s.last_memory_id AS last", id=act.session_id)
    assert ses["last"] == first
    stored = await app.services.remember.remember(
        RememberRequest(
            scope=scope, session_id=act.session_id, content="Harbor logs rotate daily", type="fact"
        ),
        CLIENT,
    )
    assert isinstance(stored, RememberResult)
    chain = await q(
        app, "MATCH (a:Memory {scope: $scope})-[:NEXT]->(b) RETURN a.id AS a, b.id AS b", scope=scope
    )
    assert [(r["a"], r["b"]) for r in chain] == [(first, stored.memory_id)]
    report = await audit(app.db, [scope])
    assert report.ok, report.text()
    await app.db.run_write("delete_scope", scope=scope)


# --------------------------------------------------------------------------- unknown targets


async def test_unknown_targets_change_nothing(app: App, scope: str) -> None:
    act = await app.services.activation.activate(
        ActivateRequest(task="Note facts", initial_goal="Note facts", scope=scope), CLIENT
    )
    [memory] = await remember(app, scope, act.session_id, ["Harbor invoices are sent monthly"])
    before, records = await fingerprint(app, scope), await forgettings(app)
    nowhere = f"test:never-{uuid.uuid4().hex[:12]}"
    for kwargs, message in (
        ({"scope": nowhere}, "no scope"),
        ({"memory": "sch_999999999999"}, "no memory"),
        ({"memory": memory, "scope": nowhere}, "is not in scope"),
    ):
        for action in (plan, forget):
            with pytest.raises(UnknownTarget, match=message):
                await action(app.db, **kwargs)
    assert await fingerprint(app, scope) == before
    assert await forgettings(app) == records
    await app.db.run_write("delete_scope", scope=scope)


# --------------------------------------------------------------------------- the command


async def test_cli(app: App, scope: str, cli_env: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    act = await app.services.activation.activate(
        ActivateRequest(task="Note facts", initial_goal="Note facts", scope=scope), CLIENT
    )
    kept, memory = await remember(
        app, scope, act.session_id, ["Harbor invoices are sent monthly", "Harbor refunds take five days"]
    )
    before = await fingerprint(app, scope)

    async def cli(*args: str) -> tuple[int, str, str]:
        code = await run_cli(["forget", *cli_env, *args])
        out, err = capsys.readouterr()
        return code, out, err

    assert (await cli())[0] == 2
    code, out, _ = await cli("--scope", scope)
    assert code == 0 and out.startswith("dry run, nothing changed")
    assert "    Memory                       2" in out and "    Scope                        1" in out
    code, out, _ = await cli("--memory", memory, "--json")
    dry = json.loads(out)
    assert code == 0 and dry["dry_run"] is True and dry["nodes"]["Memory"] == 1 and dry["record"] is None
    assert dry["scope"] == scope and dry["updated"]["session_heads"] == 1
    assert await fingerprint(app, scope) == before

    code, out, _ = await cli("--memory", memory, "--scope", scope, "--yes", "--json")
    done = json.loads(out)
    assert code == 0 and done["dry_run"] is False and done["record"]["id"].startswith("fgt_")
    assert done["nodes"] == dry["nodes"] and done["record"]["at"].endswith("Z")
    assert await q(app, "MATCH (m:Memory {id: $id}) RETURN m.id AS id", id=memory) == []
    assert await q(app, "MATCH (m:Memory {id: $id}) RETURN m.id AS id", id=kept) == [{"id": kept}]

    code, out, err = await cli("--memory", memory, "--yes")
    assert code == 1 and f"no memory '{memory}'" in err and "nothing changed" in err and out == ""

    code, out, _ = await cli("--scope", scope, "--yes")
    assert code == 0 and out.startswith(f"forgot scope {scope}: deleted") and "(:Forgetting {id: 'fgt_" in out
    assert await fingerprint(app, scope) == {}
    code, _, err = await cli("--scope", scope)
    assert code == 1 and f"no scope '{scope}'" in err
