"""Synthetic load data: skewed scope sizes that add up, deterministic varied memories."""

from __future__ import annotations

import random
from collections import Counter

from slowave_graph.workload import synthetic


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


def test_load_remembers_are_new_claims_even_from_a_repeated_seed() -> None:
    # A rerun of the load benchmark on the same database uses the same seeds; a remember that
    # repeats an earlier run's claim only reinforces it (no index writes): a cheaper call.
    from slowave_graph.workload.lifecycle import remember_args

    first = [remember_args("project:x", "sess_1", random.Random("seq:project:x")) for _ in range(50)]
    again = [remember_args("project:x", "sess_1", random.Random("seq:project:x")) for _ in range(50)]
    contents = {a["content"] for a in first} | {a["content"] for a in again}
    assert len(contents) == 100

    # the claim itself still follows the seed: only the tag differs
    def claims(args: list[dict[str, str]]) -> list[tuple[str, str]]:
        return [(a["type"], a["content"].rsplit(" (", 1)[0]) for a in args]

    assert claims(first) == claims(again)
