"""Admission and paging: pure functions, no database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from slowave_graph.graph.paging import ASSOCIATED_PER_PAGE, PROCEDURES_PER_PAGE, paginate
from slowave_graph.services.ranking import (
    DEFAULT_POLICY,
    Candidate,
    RankingPolicy,
    admit_associated,
    admit_direct,
    calibrated,
    merge_candidates,
    policy_for,
    suppressed,
    walk_of,
    walk_seeds,
)
from slowave_graph.services.timeframe import windows

POLICY = RankingPolicy(floor=0.4, margin=0.2, lexical_weight=0.1, salience_weight=0.0)


TERMS = [["alpha", "beta"]]


def row(
    id_: str,
    cosine: float | None = None,
    bm25: float | None = None,
    salience: float = 0.5,
    content: str = "",
    qi: int = 0,
    similarities: list[float] | None = None,
) -> dict[str, object]:
    fields = {"content": content or id_, "type": "fact", "salience": salience, "cosine": cosine, "bm25": bm25}
    return {"id": id_, "qi": qi, "similarities": similarities, **fields}


def test_off_topic_pool_admits_nothing() -> None:
    pool = merge_candidates([row("a", 0.2), row("b", 0.15), row("c", 0.3)], [])
    assert admit_direct(pool, TERMS, policy=POLICY) == []


def test_no_quota_everything_above_floor_within_margin() -> None:
    vector = [row(f"m{i}", 0.7 - i * 0.02) for i in range(9)]  # 0.70 … 0.54
    admitted = admit_direct(merge_candidates(vector, []), TERMS, policy=POLICY)
    assert [c.id for c in admitted] == [f"m{i}" for i in range(9)]


def test_a_clearly_better_answer_pushes_out_weak_ones() -> None:
    admitted = admit_direct(merge_candidates([row("best", 0.8), row("weak", 0.45)], []), TERMS, policy=POLICY)
    assert [c.id for c in admitted] == ["best"]


def test_lexical_agreement_lifts_over_floor_but_not_the_margin() -> None:
    pool = merge_candidates([row("a", 0.35, content="alpha beta"), row("b", 0.36)], [])
    assert [c.id for c in admit_direct(pool, TERMS, policy=POLICY)] == ["a"]


def test_a_lone_shared_name_is_weak_lexical_evidence() -> None:
    pool = merge_candidates([row("a", 0.36, content="alpha gamma delta")], [row("a", 0.36, bm25=9.0)])
    assert admit_direct(pool, [["alpha", "zone", "servers", "time"]], policy=POLICY) == []


def test_cosines_are_kept_per_cue() -> None:
    pool = merge_candidates(
        [row("a", 0.2, qi=0), row("a", 0.6, qi=1)], [row("a", bm25=1.0, similarities=[0.3, 0.5])]
    )
    assert pool["a"].cosines == {0: 0.3, 1: 0.6} and pool["a"].cosine == 0.6 and pool["a"].bm25 == 1.0


def test_each_cue_has_its_own_margin() -> None:
    """Two questions in one task: the best answer to each is admitted, weak ones are not."""
    vector = [row("q0-best", 0.8, qi=0), row("q0-weak", 0.5, qi=0), row("q1-best", 0.55, qi=1)]
    admitted = admit_direct(merge_candidates(vector, []), [[], []], policy=POLICY)
    assert sorted(c.id for c in admitted) == ["q0-best", "q1-best"]


def test_salience_orders_but_never_admits() -> None:
    policy = RankingPolicy(floor=0.4, margin=0.2, lexical_weight=0.0, salience_weight=0.1)
    pool = merge_candidates(
        [row("low", 0.60, salience=0.0), row("high", 0.59, salience=1.0), row("no", 0.39, salience=1.0)], []
    )
    assert [c.id for c in admit_direct(pool, TERMS, policy=policy)] == ["high", "low"]


def test_pages_never_repeat_and_cover_everything() -> None:
    pathways = ["direct"] * 12 + ["associated"] * 5
    pages = paginate(pathways, 5, procedures=7)
    flat = [i for page in pages for i in page.memories]
    assert sorted(flat) == list(range(17)) and len(flat) == len(set(flat))
    # page_size bounds the memories of a page, associated hits included; while direct hits remain
    # a page keeps a place for an associated one
    assert pages[0].memories == [0, 1, 2, 3, 12]
    assert all(len(page.memories) <= 5 for page in pages)
    assert all(sum(pathways[i] == "associated" for i in p.memories) <= ASSOCIATED_PER_PAGE for p in pages)
    assert [page.procedures for page in pages] == [[0, 1, 2], [3, 4, 5], [6], []]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 10])
@pytest.mark.parametrize(
    ("direct", "associated", "procedures"), [(0, 4, 0), (7, 3, 2), (12, 0, 9), (1, 9, 1)]
)
def test_every_page_holds_at_most_page_size_memories(
    size: int, direct: int, associated: int, procedures: int
) -> None:
    pages = paginate(["direct"] * direct + ["associated"] * associated, size, procedures)
    assert all(len(p.memories) <= size and len(p.procedures) <= PROCEDURES_PER_PAGE for p in pages)
    assert sorted(i for p in pages for i in p.memories) == list(range(direct + associated))
    assert sorted(i for p in pages for i in p.procedures) == list(range(procedures))
    assert all(p.memories or p.procedures for p in pages)  # no empty page


@pytest.mark.parametrize(
    ("total", "size", "expected"), [(40, 5, [5] * 8), (12, 10, [10, 2]), (0, 5, []), (3, 10, [3])]
)
def test_page_sizes(total: int, size: int, expected: list[int]) -> None:
    assert [len(p.memories) for p in paginate(["direct"] * total, size)] == expected


def test_recorded_neighbours_give_context() -> None:
    """The turn after the one naming the topic is admitted and ranked up; an unrelated neighbour is not."""
    policy = RankingPolicy(
        floor=0.45, margin=0.3, context_floor=0.3, neighbour_weight=0.3, salience_weight=0.0
    )
    vector = [row("topic", 0.7), row("answer", 0.33), row("other", 0.36), row("noise", 0.1)]
    neighbours = [
        {"id": "answer", "neighbour": "topic", "cosine": 0.7},
        {"id": "noise", "neighbour": "topic", "cosine": 0.7},
        {"id": "topic", "neighbour": "answer", "cosine": 0.33},
    ]
    admitted = admit_direct(merge_candidates(vector, []), [[]], neighbours, policy)
    assert [c.id for c in admitted] == ["topic", "answer"]
    alone = admit_direct(merge_candidates(vector, []), [[]], [], policy)
    assert [c.id for c in alone] == ["topic"]


def test_bm25_orders_within_the_admitted() -> None:
    policy = RankingPolicy(floor=0.4, margin=0.3, bm25_weight=0.4, neighbour_weight=0.0, salience_weight=0.0)
    pool = merge_candidates([row("a", 0.60), row("b", 0.55)], [row("b", bm25=8.0, similarities=[0.55])])
    assert [c.id for c in admit_direct(pool, [[]], policy=policy)] == ["b", "a"]


def test_experience_from_similar_questions() -> None:
    from slowave_graph.services.ranking import experience_scores

    rows = [
        {"id": "m1", "similarity": 0.95, "assessment": "used", "effect": "helped"},
        {"id": "m1", "similarity": 0.80, "assessment": "used", "effect": "harmed"},
        {"id": "m2", "similarity": 0.95, "assessment": "irrelevant", "effect": None},
        {"id": "m3", "similarity": 0.85, "assessment": "irrelevant", "effect": None},  # a different question
        {"id": "m4", "similarity": 0.99, "assessment": "not_used", "effect": None},
    ]
    scores = experience_scores(rows, RankingPolicy(), irrelevant_at=0.90)
    assert scores == {"m1": pytest.approx(0.95 - 0.80), "m2": pytest.approx(-0.475)}


def test_experience_admits_what_helped_the_same_question_and_never_hides() -> None:
    policy = RankingPolicy(
        floor=0.45, margin=0.3, experience_admit=0.8, experience_weight=0.3, salience_weight=0.0
    )
    pool = merge_candidates([row("learned", 0.30), row("plain", 0.60), row("marked", 0.58)], [])
    admitted = admit_direct(pool, [[]], policy=policy, experience={"learned": 0.95, "marked": -0.5})
    assert [c.id for c in admitted] == ["plain", "learned", "marked"]


def test_a_date_the_question_names_lifts_memories_of_that_time_and_hides_none() -> None:
    policy = RankingPolicy(floor=0.4, margin=0.3, neighbour_weight=0.0, salience_weight=0.0, time_weight=0.2)
    when = {
        "june": datetime(2023, 6, 20, tzinfo=UTC),
        "july": datetime(2023, 7, 14, tzinfo=UTC),
        "told_later": datetime(2023, 8, 3, 9, 30, tzinfo=UTC),  # within the week after July
        "september": datetime(2023, 9, 1, tzinfo=UTC),
    }
    rows = [row("undated", 0.66), *({**row(k, 0.6), "occurred_at": v.timestamp()} for k, v in when.items())]
    july = windows("What did the kids paint in July 2023?")
    ranked = [c.id for c in admit_direct(merge_candidates(rows, []), [[]], policy=policy, windows=july)]
    assert ranked[:2] == ["july", "told_later"]
    assert set(ranked) == {"undated", *when}  # an order signal, never a filter
    undated = [c.id for c in admit_direct(merge_candidates(rows, []), [[]], policy=policy)]
    assert undated[0] == "undated"  # no date in the question: no lift


def test_another_retrieval_depth_is_a_policy_of_its_own_version() -> None:
    assert policy_for(DEFAULT_POLICY.candidate_k) is DEFAULT_POLICY
    shallow = policy_for(30)
    assert shallow.candidate_k == 30 and shallow.version == f"{DEFAULT_POLICY.version}-k30"
    assert (
        replace(shallow, candidate_k=DEFAULT_POLICY.candidate_k, version=DEFAULT_POLICY.version)
        == DEFAULT_POLICY
    )


# --------------------------------------------------------------------------- the graph's part


def walked(
    id_: str, walk: float, cosine: float, concept: str = "pottery", seed: str = "d1"
) -> dict[str, object]:
    return {
        "id": id_, "walk": walk, "similarities": [cosine], "content": id_, "type": "fact", "salience": 0.5,
        "paths": [{"key": concept, "name": concept, "share": walk, "seeds": [seed]}],
    }  # fmt: skip


def test_the_walk_starts_from_the_best_candidates_the_first_weighing_most() -> None:
    seeds = walk_seeds(["a", "b", "c", "d", "e", "f"], RankingPolicy(walk_seeds=3))
    assert [s["id"] for s in seeds] == ["a", "b", "c"]
    assert seeds[0]["weight"] > seeds[1]["weight"] > seeds[2]["weight"]
    assert sum(s["weight"] for s in seeds) == pytest.approx(1.0)


def test_the_walk_lifts_a_candidate_that_shares_concepts_with_the_best_ones() -> None:
    policy = RankingPolicy(floor=0.4, margin=0.3, walk_weight=0.5, salience_weight=0.0, neighbour_weight=0.0)
    pool = merge_candidates([row("top", 0.70), row("plain", 0.62), row("kin", 0.60)], [])
    walk = walk_of(
        [walked("kin", 0.5, 0.60), walked("top", 0.5, 0.70)], [], walk_seeds(["top"], policy), policy
    )
    assert [c.id for c in admit_direct(pool, [[]], policy=policy, walk=walk)] == ["top", "kin", "plain"]
    direct_only = replace(policy, graph="direct")
    assert [c.id for c in admit_direct(pool, [[]], policy=direct_only, walk=walk)] == ["top", "plain", "kin"]


def test_associated_hits_need_walk_evidence_and_their_own_relevance_and_say_why() -> None:
    policy = RankingPolicy(associated_walk_share=0.3, associated_floor=0.3)
    direct = [Candidate(id="d1", content="d1", type="fact")]
    walk = walk_of(
        [walked("d1", 1.0, 0.8), walked("near", 0.5, 0.35), walked("weak", 0.1, 0.9), walked("off", 0.9, 0.1)],
        [], walk_seeds(["d1"], policy), policy,
    )  # fmt: skip
    found = admit_associated(direct, walk, [], policy)
    assert [c.id for c in found] == ["near"]
    assert found[0].pathway == "associated"
    assert found[0].association == {"via": "concept", "concepts": ["pottery"], "from_memory_id": "d1"}
    assert admit_associated([], walk, [], policy) == []  # no direct hit, no associated one


def test_learned_co_use_gives_associated_hits_from_admitted_direct_ones_only() -> None:
    policy = RankingPolicy()
    direct = [Candidate(id="d1", content="d1", type="fact")]
    links = [
        {"id": "m1", "links": [{"seed": "d1", "strength": 0.6}], "content": "m1", "type": "fact"},
        {"id": "m2", "links": [{"seed": "not-admitted", "strength": 0.9}], "content": "m2", "type": "fact"},
    ]
    found = admit_associated(direct, walk_of([], links, walk_seeds(["d1"], policy), policy), links, policy)
    assert [(c.id, c.association) for c in found] == [
        ("m1", {"via": "co_use", "concepts": [], "from_memory_id": "d1"})
    ]
    without = replace(policy, graph="walk")
    assert admit_associated(direct, walk_of([], links, [], without), links, without) == []


def test_irrelevant_feedback_on_a_similar_question_closes_the_paths_to_a_memory() -> None:
    policy = RankingPolicy(associated_walk_share=0.3, associated_floor=0.3)
    rows = [{"id": "near", "similarity": 0.86, "assessment": "irrelevant", "effect": None}]
    walk = walk_of([walked("d1", 1.0, 0.8), walked("near", 0.5, 0.35)], [], walk_seeds(["d1"], policy), policy,
                   suppressed=suppressed(rows))  # fmt: skip
    direct = [Candidate(id="d1", content="d1", type="fact")]
    assert admit_associated(direct, walk, [], policy) == []
    assert "near" not in walk.concept


def test_calibrated_units_make_floors_mean_the_same_for_models_of_other_spreads() -> None:
    # the same relative standing: 4 reference deviations above the cue's unrelated baseline
    wide, narrow = [(0.07, 0.09)], [(0.69, 0.03)]
    assert calibrated(0.07 + 4 * 0.09, 0, wide) == pytest.approx(calibrated(0.69 + 4 * 0.03, 0, narrow))
    policy = RankingPolicy(floor=3.5, margin=3.0, lexical_weight=0.0)
    for baselines, (good, weak) in ((wide, (0.45, 0.30)), (narrow, (0.82, 0.77))):
        pool = merge_candidates([row("good", good), row("weak", weak)], [])
        assert [c.id for c in admit_direct(pool, [[]], policy=policy, baselines=baselines)] == ["good"]


def test_the_model_scale_is_measured_on_unrelated_references() -> None:
    import numpy as np

    from slowave_graph.services.calibration import build_scale, reference_texts

    questions, statements = reference_texts()
    assert len(questions) >= 30 and len(statements) >= 60
    rng = np.random.default_rng(7)
    scale = build_scale("m", rng.normal(size=(8, 16)).tolist(), rng.normal(size=(20, 16)).tolist())
    [(mean, sd)] = scale.baselines([rng.normal(size=16).tolist()])
    assert abs(mean) < 0.5 and 0 < sd < 1
    assert scale.question_cosine(2.0) == pytest.approx(scale.question_mean + 2 * scale.question_sd)
