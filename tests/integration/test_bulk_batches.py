"""Bulk batches that span scopes: one statement per batch must still give every scope its own
session, NEXT chain in record order, fresh ids from the counters, and duplicates reinforced."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from slowave_graph.app import App
from slowave_graph.operator.bulk import BulkRecord, import_memories

pytestmark = pytest.mark.neo4j


def unit(seed: int, dimension: int) -> list[float]:
    v = np.random.default_rng(seed).standard_normal(dimension)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


async def test_batches_spanning_scopes_chain_each_scope_in_record_order(app: App, scope: str) -> None:
    scopes = [f"{scope}-a", f"{scope}-b", f"{scope}-c"]
    plan = [0, 1, 0, 2, 1, 1, 0, 2, 0, 1, 2]  # interleaved, batches of 4 cut across scopes
    dim = app.embedder.dimension
    recs = [
        BulkRecord(scope=scopes[s], content=f"Fact {i} of scope {s}", type="fact", embedding=unit(i, dim))
        for i, s in enumerate(plan)
    ]
    recs.append(
        BulkRecord(scope=scopes[1], content="fact 4 of scope 1.", type="fact", embedding=unit(99, dim))
    )
    try:
        result = await import_memories(app, recs, batch_size=4)
        assert (result.records, result.created, result.matched) == (12, 11, 1)
        assert sorted(result.sessions) == sorted(scopes) and len(set(result.sessions.values())) == 3
        found, _, _ = await app.db.driver.execute_query(
            "UNWIND $scopes AS sc MATCH (:Scope {id: sc})<-[:IN_SCOPE]-(m:Memory) "
            "OPTIONAL MATCH (m)-[:NEXT]->(n:Memory) "
            "RETURN sc, m.id AS id, m.content AS content, m.reinforced_count AS reinforced, "
            "collect(n.content) AS next, COUNT { (m)-[:DERIVED_FROM]->(:Event) } AS events",
            scopes=scopes,
            database_=app.db.database,
        )
        by_content = {r["content"]: r for r in found}
        assert len(by_content) == 11 and len({r["id"] for r in found}) == 11
        assert (
            by_content["Fact 4 of scope 1"]["reinforced"] == 1
            and by_content["Fact 4 of scope 1"]["events"] == 2
        )
        numbers = sorted(int(r["id"].removeprefix("sch_")) for r in found)
        assert numbers == list(range(numbers[0], numbers[0] + 11))  # no id lost to the duplicate
        for s, sc in enumerate(scopes):
            # the chain runs through the records in order, the reinforced memory included (as remember)
            order = [
                by_content.get(r.content, by_content["Fact 4 of scope 1"])["content"]
                for r in recs
                if r.scope == sc
            ]
            pairs = {(r["content"], n) for r in found if r["sc"] == sc for n in r["next"]}
            assert pairs == set(pairwise(order)), s
            last, _, _ = await app.db.driver.execute_query(
                "MATCH (s:Session {id: $id}) MATCH (m:Memory {id: s.last_memory_id}) RETURN m.content AS c",
                id=result.sessions[sc],
                database_=app.db.database,
            )
            assert last[0]["c"] == order[-1]
        events, _, _ = await app.db.driver.execute_query(
            "UNWIND $scopes AS sc MATCH (e:Event {scope: sc}) RETURN count(DISTINCT e.id) AS n",
            scopes=scopes,
            database_=app.db.database,
        )
        assert events[0]["n"] == 12
    finally:
        for sc in scopes:
            await app.db.run_write("delete_scope", scope=sc)
