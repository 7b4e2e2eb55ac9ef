"""The Python half of the audit: served pages vs exposures, id counters vs the ids they handed out."""

from __future__ import annotations

from typing import Any

from slowave_graph.graph.paging import FORGOTTEN
from slowave_graph.operator.audit import counter_violations, page_violations


def retrieval(**overrides: Any) -> dict[str, Any]:
    # 5 direct + 1 associated memories and 4 procedures, pages of 3: memories [0,1,5] [2,3,4],
    # procedures [0,1,2] [3]
    row: dict[str, Any] = {
        "id": "rec_1",
        "catalog_ids": ["a", "b", "c", "d", "e", "f"],
        "pathways": ["direct"] * 5 + ["associated"],
        "catalog_procedures": ["p", "q", "r", "s"],
        "page_size": 3,
        "pages_served": 2,
        "exposed": [
            {"id": "a", "page": 1, "rank": 1},
            {"id": "b", "page": 1, "rank": 2},
            {"id": "f", "page": 1, "rank": 6},
            {"id": "c", "page": 2, "rank": 3},
            {"id": "d", "page": 2, "rank": 4},
            {"id": "e", "page": 2, "rank": 5},
        ],
        "exposed_procedures": [
            {"id": "p", "page": 1, "rank": 1},
            {"id": "q", "page": 1, "rank": 2},
            {"id": "r", "page": 1, "rank": 3},
            {"id": "s", "page": 2, "rank": 4},
        ],
    }
    row.update(overrides)
    return row


def problems(row: dict[str, Any]) -> list[str]:
    return [v.problem for v in page_violations([row])]


def test_exactly_the_served_pages_exposed_is_fine() -> None:
    assert problems(retrieval()) == []
    empty = retrieval(catalog_ids=[], pathways=[], exposed=[], pages_served=1, catalog_procedures=[])
    assert problems({**empty, "exposed_procedures": []}) == []
    # frozen before procedures were paged: up to three, all on page 1
    legacy = retrieval(catalog_procedures=None, exposed_procedures=retrieval()["exposed_procedures"][:3])
    assert problems(legacy) == []


def test_page_problems_are_found() -> None:
    served = retrieval()["exposed"]
    assert problems(retrieval(exposed=served[:-1])) == ["served page memories never exposed"]
    assert problems(retrieval(pages_served=1, exposed=served[:3] + served[4:])) == [
        "memories exposed beyond the served pages",
        "procedures exposed beyond the served pages",
    ]
    moved = [*served[:-1], {"id": "e", "page": 1, "rank": 5}]
    assert problems(retrieval(exposed=moved)) == ["memory exposed on the wrong page or rank"]
    assert problems(retrieval(exposed=[*served, served[0]])) == ["a memory is exposed twice"]
    procedures = retrieval()["exposed_procedures"]
    assert problems(retrieval(exposed_procedures=procedures[:-1])) == ["served page procedures never exposed"]
    legacy = retrieval(catalog_procedures=None, exposed_procedures=procedures)
    assert problems(legacy) == ["4 procedures exposed"]
    assert problems(retrieval(pathways=["direct"])) == ["frozen catalog is malformed"]
    assert problems(retrieval(pages_served=5)) == ["more pages served than the catalog has"]


def test_a_forgotten_memory_keeps_its_place_but_needs_no_exposure() -> None:
    """`slowave-graph forget` leaves FORGOTTEN where a memory was in a catalog: served or not, its
    page and the ranks of the others are as before, and nothing is expected to show it."""
    served = retrieval()["exposed"]
    ids = ["a", FORGOTTEN, "c", "d", "e", FORGOTTEN]  # b (page 1) and f (page 1) forgotten
    kept = [e for e in served if e["id"] not in ("b", "f")]
    assert problems(retrieval(catalog_ids=ids, exposed=kept)) == []
    # the other places still count: a missing or moved exposure is found as before
    assert problems(retrieval(catalog_ids=ids, exposed=kept[1:])) == ["served page memories never exposed"]
    moved = [{**e, "rank": e["rank"] - 1} if e["id"] == "c" else e for e in kept]
    assert problems(retrieval(catalog_ids=ids, exposed=moved)) == ["memory exposed on the wrong page or rank"]
    # the place itself was never a memory: it cannot have been exposed
    ghost = [*kept, {"id": FORGOTTEN, "page": 1, "rank": 2}]
    assert problems(retrieval(catalog_ids=ids, exposed=ghost)) == ["memories exposed beyond the served pages"]


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
