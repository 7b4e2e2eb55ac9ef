"""Admission on generated candidate pools: the lazy coverage admits what the rule admits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slowave_graph.services.ranking import DEFAULT_POLICY, Candidate, admit_direct, merge_candidates
from slowave_graph.services.text import term_coverage
from tests.unit.test_ranking import row


def _eager_admitted(
    pool: dict[str, Candidate], cue_terms: list[list[str]], neighbours: list[dict[str, object]]
) -> set[str]:
    """The admission rule as the docstring states it, with every coverage computed."""
    best = {
        qi: max(c.cosines.get(qi, -1.0) for c in pool.values()) for c in pool.values() for qi in c.cosines
    }
    lifted: dict[str, dict[int, float]] = {
        c.id: {
            qi: cos + DEFAULT_POLICY.lexical_weight * term_coverage(cue_terms[qi], c.content) ** 2
            for qi, cos in c.cosines.items()
        }
        for c in pool.values()
    }
    qualified = {
        c.id
        for c in pool.values()
        for qi, cos in c.cosines.items()
        if lifted[c.id][qi] >= DEFAULT_POLICY.floor and cos >= best[qi] - DEFAULT_POLICY.margin
    }
    near = {str(r["id"]) for r in neighbours if r["neighbour"] in qualified}
    context = {c for c in near if max(lifted[c].values(), default=-1.0) >= DEFAULT_POLICY.context_floor}
    return qualified | context


WORDS = ["alpha", "beta", "gamma", "delta", "tokens", "expired"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-0.2, 0.9, allow_nan=False),
            st.integers(0, 1),
            st.lists(st.sampled_from(WORDS), max_size=4),
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=8),
)
def test_lazy_coverage_admits_what_the_rule_admits(
    hits: list[tuple[float, int, list[str]]], links: list[tuple[int, int]]
) -> None:
    # admit_direct scans a memory's text only where the coverage can change the verdict; the
    # verdicts must be those of computing it everywhere
    rows = [
        row(f"m{i}", cos, content=" ".join(words) or "x", qi=qi) for i, (cos, qi, words) in enumerate(hits)
    ]
    cue_terms = [["alpha", "beta"], ["token", "expires", "gamma"]]
    neighbours: list[dict[str, object]] = [
        {"id": f"m{a}", "neighbour": f"m{b}", "cosine": 0.0}
        for a, b in links
        if a < len(hits) and b < len(hits)
    ]
    expected = _eager_admitted(merge_candidates(rows, []), cue_terms, neighbours)
    admitted = admit_direct(merge_candidates(rows, []), cue_terms, neighbours)
    assert {c.id for c in admitted} == expected
