"""Benchmark scoring and dataset parsing (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slowave_graph.bench.datasets import evidence_ids, load_locomo, locomo_time
from slowave_graph.bench.metrics import Ranked, any_hit_at, ndcg_at, recall_at, reciprocal_rank, summarize


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
