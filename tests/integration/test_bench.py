"""The retrieval benchmark end to end on a tiny LoCoMo-format file (the real data is run by the
`slowave-graph bench` command; numbers go to the issue note, not into assertions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slowave_graph.app import App
from slowave_graph_lab.bench import learning, report
from slowave_graph_lab.bench.datasets import load_locomo
from slowave_graph_lab.bench.retrieval import offtopic_probes, run

pytestmark = pytest.mark.neo4j

TURNS = [
    ("Ann", "I adopted a grey cat called Miso last week."),
    ("Bo", "Congrats! I am training for the Berlin marathon in September."),
    ("Ann", "My sister moved to Lisbon for a job at a bakery."),
    ("Bo", "I switched my running shoes to a lighter pair."),
]


async def test_bench_ingests_scores_and_cleans_up(app: App, tmp_path: Path) -> None:
    sample = {"sample_id": "conv-t", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "10:00 am on 1 June, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{i + 1}", "text": t} for i, (s, t) in enumerate(TURNS)]},
        "qa": [{"question": "What is the name of Ann's cat?", "evidence": ["D1:1"], "category": 1},
               {"question": "Which marathon is Bo training for?", "evidence": ["D1:2"], "category": 4}]}  # fmt: skip
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([sample]))
    result = await run(app, load_locomo(path), probes=True, neutral_feedback=True, compound=True)
    assert result["overall"]["questions"] == 2
    neutral = result["neutral_feedback"]  # the same questions through recall, closed with not_used
    assert (neutral["changed_catalogs"], neutral["overall"]) == (0, result["overall"])
    assert result["overall"]["recall@5"] == 1.0, result["by_category"]
    assert result["corpora"]["conv-t"] == {"docs": 4, "memories": 4}
    assert result["offtopic"]["probes"] == len(offtopic_probes()) >= 100
    assert result["offtopic"]["empty_share"] >= 0.95
    # the two questions asked together, in every shape: both answered as when asked alone
    shapes = result["compound"]
    assert set(shapes) == {"and", "and also", "task_context"}  # a task and a list need three
    for figures in shapes.values():
        assert (figures["requests"], figures["parts"]) == (1, 2)
        assert figures["recall_compound"] == figures["recall_alone_at10"] == 1.0, shapes
        assert figures["empty_when_parts_answered"] == 0
    paths = report.write(result, tmp_path / "out")
    assert json.loads(paths["json"].read_text())["dataset"] == "locomo"
    assert "| **all** | 2 |" in paths["markdown"].read_text()
    assert "| neutral feedback | 1.000 |" in paths["markdown"].read_text()
    assert "| and also | 1 | 2 | 1.000 | 1.000 | 1.000 | 0 |" in paths["markdown"].read_text()
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for scope in result["scopes"]:
        await app.db.run_write("delete_scope", scope=scope)
    left = await app.db.driver.execute_query(
        "MATCH (m:Memory) WHERE m.scope IN $scopes RETURN count(m) AS n", scopes=result["scopes"],
        database_=app.db.database,
    )  # fmt: skip
    assert left.records[0]["n"] == 0


async def test_learning_bench_trains_on_half_and_reports_slices(app: App, tmp_path: Path) -> None:
    turns = [
        *TURNS,
        *[("Bo", f"Training log {i}: an easy run of {5 + i} km by the river.") for i in range(14)],
    ]
    sample = {"sample_id": "conv-l", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "10:00 am on 1 June, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)]},
        "qa": [{"question": "What is the name of Ann's cat?", "evidence": ["D1:1"], "category": 1},
               {"question": "Where did Ann's sister move?", "evidence": ["D1:3"], "category": 4},
               {"question": "Which shoes does Bo run in now?", "evidence": ["D1:4"], "category": 4},
               {"question": "Which marathon is Bo training for?", "evidence": ["D1:2"], "category": 4}]}  # fmt: skip
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([sample]))
    result = await learning.run(app, load_locomo(path), pages=2)
    feedback = result["feedback"]
    assert feedback["retrievals"] == 2  # every other question of the corpus trains
    assert feedback["retrievals"] <= feedback["pages"] <= 2 * feedback["retrievals"]
    assert feedback["used"] >= 1
    slices = result["slices"]
    assert slices["a_same_questions"]["questions"] == 2
    assert slices["b_shared_evidence"]["questions"] + slices["c_unrelated"]["questions"] == 2
    assert slices["a_same_questions"]["after"]["recall@5"] >= slices["a_same_questions"]["before"]["recall@5"]
    assert "up to 2 page(s) of 10" in learning.markdown(result)
    for scope in result["scopes"]:
        await app.db.run_write("delete_scope", scope=scope)
