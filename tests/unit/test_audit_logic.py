"""The Python half of the audit: served pages vs exposures, id counters vs the ids they handed out."""

from __future__ import annotations

from typing import Any

from slowave_graph.audit import counter_violations, page_violations


def retrieval(**overrides: Any) -> dict[str, Any]:
    # 5 direct + 1 associated memories, pages of 2: [0,1,5] [2,3] [4]
    row: dict[str, Any] = {
        "id": "rec_1",
        "catalog_ids": ["a", "b", "c", "d", "e", "f"],
        "pathways": ["direct"] * 5 + ["associated"],
        "page_size": 2,
        "pages_served": 2,
        "exposed": [
            {"id": "a", "page": 1, "rank": 1},
            {"id": "b", "page": 1, "rank": 2},
            {"id": "f", "page": 1, "rank": 6},
            {"id": "c", "page": 2, "rank": 3},
            {"id": "d", "page": 2, "rank": 4},
        ],
        "procedures": 1,
    }
    row.update(overrides)
    return row


def problems(row: dict[str, Any]) -> list[str]:
    return [v.problem for v in page_violations([row])]


def test_exactly_the_served_pages_exposed_is_fine() -> None:
    assert problems(retrieval()) == []
    assert problems(retrieval(catalog_ids=[], pathways=[], exposed=[], pages_served=1, procedures=0)) == []


def test_page_problems_are_found() -> None:
    served = retrieval()["exposed"]
    assert problems(retrieval(exposed=served[:-1])) == ["served page items never exposed"]
    assert problems(retrieval(exposed=[*served, {"id": "e", "page": 3, "rank": 5}])) == [
        "exposed beyond the served pages"
    ]
    moved = [*served[:-1], {"id": "d", "page": 1, "rank": 4}]
    assert problems(retrieval(exposed=moved)) == ["exposed on the wrong page or rank"]
    assert problems(retrieval(exposed=[*served, served[0]])) == ["a memory is exposed twice"]
    assert problems(retrieval(procedures=4)) == ["4 procedures exposed"]
    assert problems(retrieval(pathways=["direct"])) == ["frozen catalog is malformed"]
    assert problems(retrieval(pages_served=5, exposed=[*served, {"id": "e", "page": 3, "rank": 5}])) == [
        "more pages served than the catalog has"
    ]


def test_counters_must_be_ahead_of_their_ids_and_ids_distinct() -> None:
    sequences = [
        {"counter": "memory", "top": 12, "ids": 12, "distinct_ids": 12},
        {"counter": "feedback", "top": 40, "ids": 41, "distinct_ids": 40},
        {"counter": "event", "top": 9, "ids": 9, "distinct_ids": 9},
        {"counter": "episode", "top": None, "ids": 0, "distinct_ids": 0},
    ]
    counters = [{"counter": "memory", "value": 12}, {"counter": "feedback", "value": 41}]
    found = {(v.subject, v.problem) for v in counter_violations(sequences, counters)}
    assert found == {
        ("feedback", "1 duplicate id(s) from this counter"),
        ("event", "counter is behind the ids it handed out"),
    }
    counters.append({"counter": "event", "value": 9})
    sequences[1]["ids"] = 40
    assert counter_violations(sequences, counters) == []
