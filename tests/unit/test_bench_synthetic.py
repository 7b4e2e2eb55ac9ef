"""Synthetic load data: skewed scope sizes that add up, deterministic varied memories."""

from __future__ import annotations

import random
from collections import Counter

from slowave_graph.bench import synthetic


def test_scope_plan_is_skewed_and_exact() -> None:
    for total in (1_000, 10_000, 100_000, 1_000_000):
        plans = synthetic.scope_plan(total)
        sizes = sorted((p.size for p in plans), reverse=True)
        assert sum(sizes) == total
        assert len({p.scope for p in plans}) == len(plans)
        if total >= 10_000:
            assert sizes[0] >= 20 * sizes[-1]  # a few large scopes, a long tail of small ones


def test_memories_are_deterministic_varied_and_resumable() -> None:
    plan = synthetic.ScopePlan("project:x", 400)
    first = list(synthetic.memories(plan, seed=3))
    assert first == list(synthetic.memories(plan, seed=3))
    assert first != list(synthetic.memories(plan, seed=4))
    assert list(synthetic.memories(plan, seed=3, start=390)) == first[390:]
    assert len({m["content"] for m in first}) == 400
    kinds = Counter(m["type"] for m in first)
    assert set(kinds) == set(synthetic.TYPES)
    lengths = sorted(len(m["content"]) for m in first)
    assert lengths[-1] > 4 * lengths[0]
    assert synthetic.question(random.Random(1)) == synthetic.question(random.Random(1))
