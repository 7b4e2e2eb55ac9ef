"""Bulk import (records in, the same memories retrievable, the remember shape), and the export
file's guards: damaged files, another embedding model, ids of another scope, restore with
verification, the CLI commands. Scope-level only: the shared database is never wiped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.remember import RememberRequest
from slowave_graph.operator.backup import restore
from slowave_graph.operator.bulk import (
    CLIENT_NAME,
    BulkRecordError,
    check_bulk_file,
    import_memories,
    parse_record,
)
from slowave_graph.operator.codec import line
from slowave_graph.operator.export import Tally, export_graph
from slowave_graph.operator.importer import ImportRefused, import_export, read_export
from slowave_graph.operator.model import FormatError
from slowave_graph.services.context import LOCAL_PRINCIPAL, ClientInfo
from tests.support.cli import run_cli

pytestmark = pytest.mark.neo4j

TOPICS = ["invoices", "backups", "the VPN", "the staging cluster", "payroll", "the CDN", "alerts", "tokens"]


def records(scope: str, n: int) -> list[dict[str, Any]]:
    return [
        {
            "scope": scope,
            "type": "fact",
            "content": f"Item {i}: {TOPICS[i % len(TOPICS)]} are owned by team {i}",
        }
        for i in range(n)
    ]


async def graph_shape(app: App, memory_id: str) -> dict[str, Any]:
    """What retrieval and provenance see of a memory: property names, its event's, its edges."""
    found, _, _ = await app.db.driver.execute_query(
        """
        MATCH (m:Memory {id: $id})-[:DERIVED_FROM]->(e:Event)<-[:RECORDED]-(s:Session)
        RETURN keys(m) AS memory, keys(e) AS event, keys(s) AS session,
               [(m)-[r]->() | type(r)] AS out, e.type AS event_type,
               EXISTS { (m)-[:IN_SCOPE]->(:Scope {id: m.scope}) } AS in_scope,
               EXISTS { (s)-[:CONTINUES]->(:Continuity) } AS continuity
        """,
        id=memory_id,
        database_=app.db.database,
    )
    row = found[0].data()
    row["out"] = set(row["out"])  # how many concepts a text has is the text's, not the path's
    return {k: sorted(v) if isinstance(v, list | set) else v for k, v in row.items()}


async def top_hit(app: App, scope: str, question: str) -> str | None:
    """The first memory slowave_activate shows for a question (the public retrieval path)."""
    found = await app.services.activation.activate(
        ActivateRequest(scope=scope, task=question, initial_goal=question), ClientInfo("probe", "1")
    )
    return found.memories[0].memory_id if found.memories else None


async def test_bulk_import_is_remember_in_batches(app: App, scope: str) -> None:
    recs = records(scope, 16)
    recs[3]["occurred_at"] = "2026-03-01T09:30:00+02:00"
    result = await import_memories(app, recs, batch_size=5)  # 4 batches, embedding overlapping writes
    assert (result.records, result.created, result.matched) == (16, 16, 0)
    assert list(result.sessions) == [scope] and result.rate > 0
    # the writes alone are part of the whole import, which also embedded the records
    assert 0 < result.write_seconds < result.seconds and result.write_rate > result.rate

    found, _, _ = await app.db.driver.execute_query(
        "MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory) RETURN m.id AS id, m.content AS content, "
        "m.occurred_at AS occurred_at, m.integration AS integration ORDER BY m.created_at, id",
        scope=scope,
        database_=app.db.database,
    )
    by_content = {r["content"]: r for r in found}
    assert sorted(by_content) == sorted(r["content"] for r in recs)
    assert {r["integration"] for r in found} == {CLIENT_NAME}
    assert by_content[recs[3]["content"]]["occurred_at"].iso_format().startswith("2026-03-01T09:30:00")
    for rec in recs:  # every record retrievable: its text, less its last word, finds it first
        # (the whole text would not: a memory the task already states is not shown again)
        question = rec["content"].rsplit(" ", 1)[0]
        assert await top_hit(app, scope, question) == by_content[rec["content"]]["id"]

    chain, _, _ = await app.db.driver.execute_query(
        "MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(a:Memory)-[:NEXT]->(b:Memory) RETURN a.content AS a, "
        "b.content AS b",
        scope=scope,
        database_=app.db.database,
    )
    order = [r["content"] for r in recs]
    assert sorted((order.index(r["a"]), order.index(r["b"])) for r in chain) == [
        (i, i + 1) for i in range(len(recs) - 1)
    ]
    [session] = await app.db.run_read(
        "session_for_commit", session_id=result.sessions[scope], principal=LOCAL_PRINCIPAL
    )
    assert (session["status"], session["end_reason"]) == ("ended", "import")

    # the same shape as a memory stored by slowave_remember in a session opened by activate
    other = f"{scope}-remembered"
    act = await app.services.activation.activate(
        ActivateRequest(scope=other, task="Note ownership", initial_goal="Note ownership"),
        ClientInfo("t", "1"),
    )
    stored = await app.services.remember.remember(
        RememberRequest(
            scope=other, session_id=act.session_id, content="Tokens are owned by team 9", type="fact"
        ),
        ClientInfo("t", "1"),
    )
    remembered = await graph_shape(app, stored.memory_id)  # type: ignore[union-attr]
    imported = await graph_shape(app, by_content[recs[-1]["content"]]["id"])  # no occurred_at, no NEXT out
    session_keys = {"session"}  # an activate session also carries the retrieval's last_seen_at etc.
    assert {k: v for k, v in imported.items() if k not in session_keys} == {
        k: v for k, v in remembered.items() if k not in session_keys
    }
    await app.db.run_write("delete_scope", scope=other)


async def test_bulk_duplicates_are_reinforced_and_bad_records_refused(
    app: App, scope: str, tmp_path: Path
) -> None:
    same = {"scope": scope, "type": "decision", "content": "We ship on Thursdays"}
    result = await import_memories(app, [same, {**same, "content": "we ship on thursdays."}])
    assert (result.created, result.matched) == (1, 1)

    bad = [
        ({"scope": scope, "content": "x", "type": "rumour"}, "type"),
        ({"scope": scope, "content": "   ", "type": "fact"}, "content"),
        ({"scope": scope, "content": "x", "type": "fact", "occurred_at": "yesterday"}, "occurred_at"),
        ({"scope": "noscope", "content": "x", "type": "fact"}, "scope"),
        ({"content": "x", "type": "fact"}, "scope is required"),
        ({"scope": scope, "content": "x", "type": "fact", "kind": "fact"}, "unknown field"),
    ]
    for record, message in bad:
        with pytest.raises(BulkRecordError, match=message):
            parse_record(record)
    assert parse_record({"content": "x"}, default_scope=scope, default_type="lesson").type == "lesson"

    path = tmp_path / "bulk.jsonl"
    fresh = f"{scope}-file"
    path.write_text("\n".join(json.dumps(r) for r in [*records(fresh, 2), bad[0][0]]) + "\n")
    with pytest.raises(BulkRecordError, match=r"bulk.jsonl:3: type"):
        check_bulk_file(path)
    with pytest.raises(BulkRecordError):  # through the API a bad record fails before its batch
        await import_memories(app, [*records(fresh, 2), bad[0][0]], batch_size=10)
    assert await app.db.run_read("scope_state", scope=fresh, norm_key=fresh) == [
        {"has_memories": False, "has_procedures": False, "has_learned": False, "variants": []}
    ]


@pytest.fixture
async def exported(app: App, scope: str, tmp_path: Path) -> Path:
    await import_memories(app, records(scope, 6))
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await export_graph(app.db, out, [scope])
    return path


def rewrite(path: Path, change: Any, header: Any = None) -> Path:
    """A consistent file with changed records (summary recomputed), as another database would write."""
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    tally = Tally()
    out: list[dict[str, Any]] = []
    for record in lines:
        if "summary" in record:
            continue
        if "format" in record:
            out.append(header(record) if header else record)
            continue
        if "node" in record or "rel" in record:
            record = change(record)
            if "node" in record:
                tally.nodes[record["node"]] += 1
            else:
                tally.relationships[record["rel"]] += 1
            tally.checksum.add(line(record))
        out.append(record)
    out.append({"summary": tally.summary()})
    target = path.with_name("changed.jsonl")
    target.write_text("".join(line(r) + "\n" for r in out))
    return target


def renamed(record: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return json.loads(json.dumps(record).replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))


async def test_damaged_files_change_nothing(app: App, scope: str, exported: Path) -> None:
    lines = exported.read_text().splitlines()
    truncated = exported.with_name("truncated.jsonl")
    truncated.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(FormatError, match="truncated"):
        read_export(truncated)
    tampered = exported.with_name("tampered.jsonl")
    tampered.write_text("\n".join(x.replace("team 3", "team 4") for x in lines) + "\n")
    with pytest.raises(FormatError, match="altered or damaged"):
        read_export(tampered)
    unknown = rewrite(exported, lambda r: {**r, "node": "Person"} if r.get("node") == "Event" else r)
    with pytest.raises(FormatError, match="unknown node label 'Person'"):
        read_export(unknown)


async def test_ids_of_another_scope_are_not_overwritten(app: App, scope: str, exported: Path) -> None:
    other = f"{scope}-copy"
    copy = rewrite(exported, lambda r: renamed(r, scope, other))
    with pytest.raises(ImportRefused, match="already belong to nodes of another scope"):
        await import_export(app.db, read_export(copy), batch_size=1000)
    assert await app.db.run_read("export_scopes") and other not in {
        r["scope"] for r in await app.db.run_read("export_scopes")
    }


async def test_other_embedding_model_needs_reembed(app: App, scope: str, exported: Path) -> None:
    def zero_vectors(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("node") == "Memory":
            return {**record, "props": {**record["props"], "embedding": [0.0] * 8}}
        return record

    foreign = rewrite(
        exported, zero_vectors, lambda h: {**h, "embedding": {"model": "tiny-8d", "dimension": 8}}
    )
    file = read_export(foreign)
    await app.db.run_write("delete_scope", scope=scope)
    with pytest.raises(ImportRefused, match="pass --reembed"):
        await import_export(app.db, file)
    assert scope not in {r["scope"] for r in await app.db.run_read("export_scopes")}

    done = await import_export(app.db, file, embedder=app.embedder)
    assert done["reembedded"] is True
    found, _, _ = await app.db.driver.execute_query(
        "MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory) RETURN m.content AS content, m.embedding AS v",
        scope=scope,
        database_=app.db.database,
    )
    assert len(found) == 6
    expected = app.embedder.embed([r["content"] for r in found])
    for row, vector in zip(found, expected, strict=True):
        assert row["v"] == pytest.approx(vector, abs=1e-6)
    assert await top_hit(app, scope, found[2]["content"].rsplit(" ", 1)[0]) is not None


async def test_restore_refuses_existing_scopes_then_replaces_and_verifies(
    app: App, scope: str, exported: Path
) -> None:
    file = read_export(exported)
    with pytest.raises(ImportRefused, match="pass --replace"):
        await restore(app.db, file)
    await import_memories(app, records(scope, 9)[6:])  # the scope moved on since the backup
    done = await restore(app.db, file, replace=True)
    assert done["replaced"] == [scope] and done["verified"] == ["nodes", "relationships", "checksum"]
    assert done["checksum"] == file.summary["checksum"]
    count, _, _ = await app.db.driver.execute_query(
        "MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory) RETURN count(m) AS n",
        scope=scope,
        database_=app.db.database,
    )
    assert count[0]["n"] == 6


async def test_cli_export_import_and_cypher_run(
    app: App,
    scope: str,
    exported: Path,
    cli_env: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "cli.jsonl"
    assert await run_cli(["export", "--scope", scope, "--out", str(out), *cli_env]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (
        summary["nodes"]["Memory"] == 6 and summary["checksum"] == read_export(exported).summary["checksum"]
    )
    assert await run_cli(["import", str(out), "--batch", "5", *cli_env]) == 0  # idempotent re-import
    assert json.loads(capsys.readouterr().out)["format"] == "export"

    assert (
        await run_cli(["cypher", "run", "scope_overview", "--param", f"scope={scope}", "--json", *cli_env])
        == 0
    )
    [row] = json.loads(capsys.readouterr().out)
    assert (row["scope"], row["active_memories"], row["sessions"]) == (scope, 6, 1)
    assert await run_cli(["cypher", "run", "scope_overview", *cli_env]) == 2
    assert "needs --param scope" in capsys.readouterr().err
    assert await run_cli(["export", "--scope", f"{scope}-missing", "--out", str(out), *cli_env]) == 1
    assert "no such scope" in capsys.readouterr().err


@pytest.fixture(autouse=True)
async def cleanup(app: App, scope: str) -> Any:
    yield
    for name in (scope, f"{scope}-file", f"{scope}-copy"):
        await app.db.run_write("delete_scope", scope=name)


async def test_stats_report_indexes_and_store(app: App) -> None:
    from slowave_graph.graph.stats import collect_stats

    stats = await collect_stats(app.db, scope_limit=1)
    indexes = {i["name"]: i for i in stats["indexes"]}
    assert (
        indexes["memory_embedding"]["type"] == "VECTOR" and indexes["memory_embedding"]["state"] == "ONLINE"
    )
    assert indexes["memory_embedding"]["populated"] == 100.0
    store = stats["store"]  # the test Neo4j runs on this machine, so its directories are readable
    assert store is not None and store["store_bytes"] > 0
    assert store["total_bytes"] == store["store_bytes"] + store["transaction_log_bytes"]


async def test_a_learned_retrieval_comes_back_with_its_experience_vector(
    app: App, scope: str, tmp_path: Path
) -> None:
    """experience_embedding is an index copy, and experience_pending the mark of one not yet made:
    exports leave both out (checksums are over content), imports make the copy at once, so a
    restored scope still inherits its feedback, whether the export found the copy made or not."""
    from mcp import Client

    from slowave_graph.mcp.server import build_server
    from tests.support.mcp_helpers import activate, mark_helped, remember

    copies = (
        "MATCH (r:Retrieval {scope: $scope}) WHERE r.experience_embedding IS NOT NULL "
        "OR r.experience_pending IS NOT NULL RETURN r.id AS id, r.experience_pending AS pending"
    )

    async def copied() -> list[tuple[str, Any]]:
        found, _, _ = await app.db.driver.execute_query(copies, scope=scope, database_=app.db.database)
        return [(r["id"], r["pending"]) for r in found]

    for moved in (False, True):
        async with app.experience.paused():
            async with Client(build_server(app)) as client:
                session = (await activate(client, scope, "Record"))["session_id"]
                await remember(client, scope, session, "Payroll runs on the 25th of each month", "fact")
                shown = await activate(client, scope, "When does payroll run?")
                await mark_helped(client, shown)
            assert await copied() == [(shown["retrieval_id"], True)]  # marked for the index
        if moved:
            await app.experience.flush()
            assert await copied() == [(shown["retrieval_id"], None)]
        path = tmp_path / "learned.jsonl"
        with path.open("w", encoding="utf-8") as out:
            await export_graph(app.db, out, [scope])
        assert "experience_embedding" not in path.read_text()
        assert "experience_pending" not in path.read_text()
        done = await restore(app.db, read_export(path), replace=True)
        assert done["verified"] == ["nodes", "relationships", "checksum"]
        assert await copied() == [(shown["retrieval_id"], None)]  # the copy, made by the import
        await app.db.run_write("delete_scope", scope=scope)
