"""Benchmark scoring and dataset parsing (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slowave_graph_lab.bench.datasets import evidence_ids, load_locomo, locomo_time
from slowave_graph_lab.bench.metrics import (
    Ranked,
    any_hit_at,
    direct_only,
    ndcg_at,
    pathway_report,
    recall_at,
    reciprocal_rank,
    summarize,
)


def ranked(*items: set[str], gold: set[str]) -> Ranked:
    return Ranked([frozenset(i) for i in items], frozenset(gold), "1")


def test_recall_counts_gold_turns_not_items() -> None:
    r = ranked({"a"}, {"x"}, {"b", "c"}, gold={"a", "b", "z"})
    assert recall_at(r, 1) == pytest.approx(1 / 3)
    assert recall_at(r, 3) == pytest.approx(2 / 3)
    assert any_hit_at(r, 1) == 1.0 and reciprocal_rank(r) == 1.0


def test_ndcg_and_mrr() -> None:
    r = ranked({"x"}, {"a"}, gold={"a"})
    assert reciprocal_rank(r) == 0.5
    assert ndcg_at(r, 10) == pytest.approx(1 / 1.5849625, rel=1e-6)
    empty = ranked(gold={"a"})
    assert summarize([empty])["recall@5"] == 0.0 and summarize([empty])["empty_share"] == 1.0


def test_recall_over_the_whole_catalog_reads_past_twenty() -> None:
    deep = ranked(*({f"n{i}"} for i in range(25)), {"a"}, gold={"a", "b"})
    stats = summarize([deep])
    assert stats["recall@20"] == 0.0 and stats["recall@all"] == 0.5 and stats["mean_returned"] == 26


def test_pathway_report_separates_direct_from_associated() -> None:
    # question 1: two direct items (one gold), then an associated gold and an associated miss
    one = Ranked(
        [frozenset({"a"}), frozenset({"x"}), frozenset({"b"}), frozenset({"y"})],
        frozenset({"a", "b"}),
        "1",
        ["direct", "direct", "associated", "associated"],
    )
    # question 2: four direct items, a gold one at rank 3 and a miss at rank 4
    two = Ranked(
        [frozenset({"p"}), frozenset({"q"}), frozenset({"c"}), frozenset({"r"})], frozenset({"c"}), "1"
    )
    assert [len(r.items) for r in (direct_only(one), direct_only(two))] == [2, 4]
    report = pathway_report([one, two])
    assert report["questions_with_associated"] == 1
    assert report["recall@5_direct"] == pytest.approx((0.5 + 1.0) / 2)
    assert report["recall@5_with_associated"] == pytest.approx(1.0)
    assert (report["associated_items"], report["associated_precision"]) == (2, 0.5)
    assert report["direct_items"] == 6 and report["direct_precision"] == pytest.approx(2 / 6, abs=1e-4)
    # associated items at ranks 3 and 4; direct items there (question 2): 1 of 1 and 0 of 1
    assert report["direct_precision_same_positions"] == pytest.approx(0.5)
    assert report["associated_items_without_direct_peer"] == 0
    assert (report["associated_items_all"], report["associated_mean_rank"]) == (2, 3.5)
    assert report["recall@all_with_associated"] - report["recall@all_direct"] == pytest.approx(0.25)
    # a depth that cuts the associated items off still sees them in the whole-list figures
    shallow = pathway_report([one, two], depth=2)
    assert (shallow["associated_items"], shallow["associated_items_all"]) == (0, 2)
    assert shallow["associated_precision_all"] == 0.5


def test_evidence_ids_tolerate_malformed_entries() -> None:
    assert evidence_ids(["D1:3; D1:5", "D 2:7", "D10:1,D10:2"]) == {"D1:3", "D1:5", "D2:7", "D10:1", "D10:2"}
    assert evidence_ids([]) == set()


def test_locomo_time() -> None:
    assert locomo_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert locomo_time("sometime") is None


def test_load_locomo_with_errata(tmp_path: Path) -> None:
    data = [{"sample_id": "conv-x", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "10:00 am on 1 June, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a photo of a cat"}]},
        "qa": [{"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 1},
               {"question": "No evidence?", "answer": "x", "evidence": [], "category": 5}]}]  # fmt: skip
    errata = [
        {"question": "What did Ann adopt?", "cited_evidence": ["D1:1"], "correct_evidence": ["D1:1", "D1:2"]}
    ]
    (tmp_path / "d.json").write_text(json.dumps(data))
    (tmp_path / "e.json").write_text(json.dumps(errata))
    ds = load_locomo(tmp_path / "d.json", tmp_path / "e.json")
    assert [d.text for d in ds.corpora["conv-x"]] == [
        "Ann (10:00 am on 1 June, 2023): I adopted a cat.",
        "Bo (10:00 am on 1 June, 2023): Nice! [shares a photo: a photo of a cat]",
    ]
    assert [(q.text, q.gold, q.alt_gold) for q in ds.queries] == [
        ("What did Ann adopt?", {"D1:1"}, {"D1:1", "D1:2"})
    ]
