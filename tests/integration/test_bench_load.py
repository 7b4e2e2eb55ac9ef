"""`bench load` end to end at a tiny size: fill through the bulk path, a real server process over
streamable HTTP, concurrent lifecycles, the server's own timing split, the report files."""

from __future__ import annotations

import json
from pathlib import Path

from slowave_graph.app import App
from slowave_graph.neo4j_local.manager import free_port
from slowave_graph.workload import synthetic
from slowave_graph_lab.bench import load, load_report
from tests.support.neo4j import Neo4jTarget


async def test_bench_load_small(app: App, neo4j: Neo4jTarget, scope: str, tmp_path: Path) -> None:
    prefix = scope.replace(":", "-")
    settings = neo4j.settings()
    bench_app = App(settings, app.db, app.embedder, app.repo, app.services, app.experience)
    options = load.LoadOptions(
        sizes=[60],
        clients=[2],
        lifecycles=2,
        port=free_port(),
        sequential_remembers=5,
        prefix=prefix,
        warmup=2,
    )
    try:
        result = await load.run(bench_app, options, progress=False)
        entry = result["sizes"][0]
        assert entry["fill"]["added"] == 60
        # the import's writes alone go faster than the fill, which also embedded every text
        assert entry["fill"]["written_per_second"] > entry["fill"]["per_second"] > 0
        counts = await load.scope_sizes(app, [p.scope for p in synthetic.scope_plan(60, prefix)])
        # filled, one per lifecycle, the sequential rounds
        assert sum(counts.values()) >= 60 + 2 * 2 + 5 * load.SEQUENTIAL_ROUNDS
        phase = entry["phases"][0]
        assert phase["error_count"] == 0, phase["errors"]
        assert phase["lifecycles"] == 4
        assert set(phase["tools_ms"]) == set(load.TOOLS)
        server = phase["server"]["slowave_activate"]
        assert server["calls"] >= 4 and server["mean_transactions"] >= 2
        assert server["mean_embed_ms"] > 0 and server["mean_neo4j_ms"] > 0 and server["mean_python_ms"] > 0
        # the parts are measured along each call's timeline, so they add up to the call
        split = server["mean_embed_ms"] + server["mean_neo4j_ms"] - server["mean_overlap_ms"]
        assert abs(split + server["mean_python_ms"] - server["mean_ms"]) < 0.1, server
        # and Neo4j's part by statement: activate's write and its session's opening read
        assert {"activate_session", "scope_state"} <= set(server["statements"]), server["statements"]
        assert all(s["mean_ms"] > 0 for s in server["statements"].values())
        assert phase["server_rss_mb"] and phase["server_rss_mb"] > 50
        # what the phase cost in CPU: every process of the test machine is visible, the Neo4j too
        cpu = phase["cpu"]["ms_per_call"]
        assert cpu["server"] > 0.5 and cpu["neo4j"] > 0.1 and cpu["load_generator"] > 0, phase["cpu"]
        assert 0 < phase["cpu"]["busy_cores"] <= result["cpus"] + 0.05, phase["cpu"]
        # serve froze its start-up heap and reports the collector's pauses of the phase
        assert phase["gc"]["frozen_objects"] > 10_000
        assert phase["gc"]["generations"]["0"]["collections"] > 0
        # the warm-up ran its minimum (2) and, never settling in so few rounds, stopped at its cap
        warmup = entry["warmup"]
        assert warmup["lifecycles"] == 2 * load.WARMUP_CAP and not warmup["steady"], warmup
        assert len(warmup["cpu_ms_per_call"]) == load.WARMUP_CAP and min(warmup["cpu_ms_per_call"]) > 0
        # each warm-up lifecycle remembers one memory (an exact duplicate of one only matches it)
        assert 60 < entry["memories_measured"] <= 60 + warmup["lifecycles"], entry["memories_measured"]
        seq = entry["sequential_remember"]
        assert seq["count"] == 5 and not seq["errors"]
        # every round reported; the figure is the rate over the second half, so within its rounds'
        rates = seq["rounds_per_second"]
        assert len(rates) == load.SEQUENTIAL_ROUNDS and seq["measured_rounds"] == load.SEQUENTIAL_ROUNDS // 2
        assert (
            min(rates[-seq["measured_rounds"] :])
            <= seq["per_second"]
            <= max(rates[-seq["measured_rounds"] :])
        )
        assert seq["latency_ms"]["p50"] > 0
        # the floor's parts, each alone; the round trip went to the server and was refused there
        floor = entry["floor"]
        parts = ("embedding_ms", "memory_embedding_ms", "vector_query_ms", "write_ms", "round_trip_ms")
        assert all(floor[part]["p50"] > 0 for part in parts), floor
        # the durable write's probe is gone
        assert await app.db.run_read("bench_probe_count") == [{"probes": 0}]
        paths = load_report.write(result, tmp_path)
        written = json.loads(paths["json"].read_text())
        assert written["sizes"][0]["size"] == 60
        # no 100k size in this run: the verdicts it cannot give say so, the bulk import gets one
        verdicts = {row["target"]: row["met"] for row in written["targets"]}
        assert verdicts["activate p50, 1 client, 100,000 memories"] is None
        assert verdicts["bulk import"] is (entry["fill"]["per_second"] >= 1_000)
        assert "| bulk import | ≥ 1,000/s |" in paths["markdown"].read_text()
        assert "| 60 | 2 | activate |" in paths["markdown"].read_text()
        assert "`activate_session`" in paths["markdown"].read_text()
        assert "`--client raw`" in paths["markdown"].read_text()
        assert (
            f"| {load_report.cpu_per_call(phase)} | {phase['cpu']['busy_cores']} |"
            in paths["markdown"].read_text()
        )
        assert paths["png"].stat().st_size > 10_000
    finally:
        for plan in synthetic.scope_plan(60, prefix):
            await app.db.run_write("delete_scope", scope=plan.scope)


async def test_the_lean_and_the_sdk_client_see_the_same_server(
    neo4j: Neo4jTarget, scope: str, tmp_path: Path
) -> None:
    """The load generator's two clients drive the same lifecycle against a real server process:
    the lean one (JSON-RPC POSTs) reads the same envelopes the SDK's client does, errors included."""
    from slowave_graph_lab.bench.servers import server_fleet

    plans = [synthetic.ScopePlan(scope, 0)]
    port = free_port()
    env = load.server_env(neo4j.settings(), port)
    url = f"http://127.0.0.1:{port}/mcp"
    with server_fleet(env, 1, tmp_path, ports=[port]):
        for kind in load.CLIENTS:
            phase = await load.drive(url, {}, 1, 2, plans, seed=3, client_kind=kind)
            assert phase["error_count"] == 0, (kind, phase["errors"])
            assert phase["lifecycles"] == 2 and set(phase["tools_ms"]) == set(load.TOOLS), kind
            async with load.mcp_client(url, {}, "probe", kind) as client:
                refused = await client.call_tool("slowave_recall", {"scope": scope})
                envelope = refused.structured_content
                assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_input", kind
