"""`bench load`'s verdict against issue 5's targets, computed from a run's results."""

from __future__ import annotations

from typing import Any

from slowave_graph_lab.bench.load_report import markdown, sequential, targets


def phase(clients: int, activate: tuple[float, float], recall: tuple[float, float]) -> dict[str, Any]:
    tools = {
        "slowave_activate": {"p50": activate[0], "p95": activate[1], "p99": activate[1]},
        "slowave_recall": {"p50": recall[0], "p95": recall[1], "p99": recall[1]},
    }
    return {
        "clients": clients, "tools_ms": tools, "server": {}, "calls_per_second": 10.0,
        "lifecycles_per_second": 2.0, "error_count": 0, "errors": {}, "server_rss_mb": 1.0,
        "neo4j_rss_mb": 1.0,
    }  # fmt: skip


def size(n: int, added: int, per_second: float, seq: float, *phases: dict[str, Any]) -> dict[str, Any]:
    return {
        "size": n,
        "fill": {"added": added, "per_second": per_second, "written_per_second": 2 * per_second,
                 "vectors": "derived"},
        "phases": list(phases),
        "sequential_remember": {"per_second": seq},
        "floor": {"embedding_ms": {"p50": 2.0}, "memory_embedding_ms": {"p50": 4.0},
                  "vector_query_ms": {"p50": 5.0}, "write_ms": {"p50": 3.0}, "round_trip_ms": {"p50": 1.0}},
    }  # fmt: skip


def run(*sizes: dict[str, Any]) -> dict[str, Any]:
    return {"version": "t", "neo4j": "t", "embedding_model": "t", "cpus": 2, "sizes": list(sizes)}


def by_target(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["target"]: row for row in targets(result)}


def test_each_target_is_judged_on_its_own_figure() -> None:
    result = run(
        size(1_000, 1_000, 400.0, 50.0, phase(1, (10.0, 20.0), (12.0, 30.0))),
        size(100_000, 99_000, 1_500.0, 120.0, phase(1, (14.0, 41.0), (16.0, 39.0)),
             phase(8, (90.0, 140.0), (100.0, 160.0))),
    )  # fmt: skip
    rows = by_target(result)
    assert rows["activate p50, 1 client, 100,000 memories"]["met"] is True  # 14 ≤ 15
    assert rows["recall p50, 1 client, 100,000 memories"]["met"] is False  # 16 > 15
    assert rows["activate p95, 1 client, 100,000 memories"]["met"] is False  # 41 > 40
    assert rows["recall p95, 8 clients, 100,000 memories"]["measured"] == 160.0
    assert rows["recall p95, 8 clients, 100,000 memories"]["met"] is False
    seq = rows["sequential remember, 100,000 memories"]
    assert (seq["measured"], seq["met"]) == (120.0, True)
    bulk = rows["bulk import"]  # the largest fill, end to end; its writes alone in the note
    assert (bulk["measured"], bulk["met"]) == (1_500.0, True) and "3,000/s" in bulk["note"]
    growth = rows["latency growth 1,000 → 100,000 memories, 1 client"]
    assert (growth["measured"], growth["met"]) == (2.05, False)  # activate p95: 41 / 20
    assert "activate p95" in growth["note"]
    assert rows["1,000,000 memories measured"]["met"] is None
    assert "| 1,000,000 memories measured | measured and reported | – | not measured |" in markdown(result)


def test_the_one_client_targets_carry_the_floor_of_their_chain() -> None:
    result = run(
        size(100_000, 99_000, 1_500.0, 120.0, phase(1, (14.0, 41.0), (16.0, 39.0)),
             phase(8, (90.0, 140.0), (100.0, 160.0))),
    )  # fmt: skip
    rows = by_target(result)
    # round trip 1 + query embedding 2 + vector query 5 + write 3, for p50 and p95 alike
    for name in ("activate p50, 1 client", "recall p95, 1 client"):
        row = rows[f"{name}, 100,000 memories"]
        assert row["floor"] == 11.0, row
        assert (
            row["note"]
            == "floor ≥ 11.0 ms: round trip 1.0 + query embedding 2.0 + vector query 5.0 + write 3.0"
        )
    assert rows["activate p95, 8 clients, 100,000 memories"]["floor"] is None  # queueing, not a chain
    seq = rows["sequential remember, 100,000 memories"]  # 1000 / (1 + 4 + 3)
    assert seq["floor"] == 125.0 and seq["note"].startswith("at most 125/s: 1000 / (round trip 1.0 +")
    table = markdown(result)
    assert "| 100,000 | 2.0 | 4.0 | 5.0 | 3.0 | 1.0 | 11.0 ms | 125/s |" in table


def test_a_run_that_did_not_measure_every_floor_part_gives_no_floor() -> None:
    entry = size(100_000, 99_000, 1_500.0, 120.0, phase(1, (14.0, 41.0), (16.0, 39.0)))
    entry["floor"] = {
        "embedding_ms": {"p50": 2.0},
        "vector_query_ms": {"p50": 5.0},
    }  # a report of an older version: fewer floor parts
    rows = by_target(run(entry))
    assert rows["activate p50, 1 client, 100,000 memories"]["floor"] is None
    assert rows["sequential remember, 100,000 memories"]["note"] == ""
    assert "| 100,000 | 2.0 | – | 5.0 | – | – | – | – |" in markdown(run(entry))


def test_a_run_without_the_reference_size_measures_no_latency_target() -> None:
    result = run(size(1_000_000, 0, 0.0, 80.0, phase(1, (30.0, 50.0), (31.0, 52.0))))
    rows = targets(result)
    assert [row["met"] for row in rows if "100,000 memories" in row["target"]] == [None] * 8
    assert by_target(result)["bulk import"]["met"] is None  # already filled: nothing imported
    large = by_target(result)["1,000,000 memories measured"]
    assert (large["measured"], large["met"]) == (30.0, True)


def test_sequential_remembers_show_their_rounds() -> None:
    seq = {
        "count": 200,
        "per_second": 71.3,
        "measured_rounds": 2,
        "rounds_per_second": [44.4, 80.2, 70.0, 72.6],
    }
    assert sequential(seq) == "71.3 (the last 2 of 4 rounds of 200; rounds 44.4–80.2/s)"
    assert sequential({"count": 200, "per_second": 74.0}) == "74.0"  # a report from before the rounds
