"""Turn-level retrieval metrics over ranked lists of dataset references."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

KS = (1, 5, 10, 20)


@dataclass(frozen=True)
class Ranked:
    """One query's result: the refs each returned item stands for, in rank order."""

    items: Sequence[frozenset[str]]
    gold: frozenset[str]
    category: str


def recall_at(r: Ranked, k: int) -> float:
    """Share of gold references found in the top k items."""
    found: set[str] = set()
    for refs in r.items[:k]:
        found |= refs & r.gold
    return len(found) / len(r.gold)


def any_hit_at(r: Ranked, k: int) -> float:
    return 1.0 if any(refs & r.gold for refs in r.items[:k]) else 0.0


def ndcg_at(r: Ranked, k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, refs in enumerate(r.items[:k]) if refs & r.gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(r.gold), k)))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank(r: Ranked) -> float:
    for i, refs in enumerate(r.items):
        if refs & r.gold:
            return 1 / (i + 1)
    return 0.0


def summarize(results: Sequence[Ranked]) -> dict[str, float]:
    if not results:
        return {"questions": 0}
    out: dict[str, float] = {"questions": len(results)}
    for k in KS:
        out[f"recall@{k}"] = statistics.fmean(recall_at(r, k) for r in results)
    for k in (1, 5, 10):
        out[f"any_hit@{k}"] = statistics.fmean(any_hit_at(r, k) for r in results)
    out["ndcg@10"] = statistics.fmean(ndcg_at(r, 10) for r in results)
    out["mrr"] = statistics.fmean(reciprocal_rank(r) for r in results)
    out["mean_returned"] = statistics.fmean(len(r.items) for r in results)
    out["empty_share"] = statistics.fmean(1.0 if not r.items else 0.0 for r in results)
    return {k: round(v, 4) for k, v in out.items()}


def by_category(results: Sequence[Ranked]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Ranked]] = defaultdict(list)
    for r in results:
        groups[r.category].append(r)
    return {cat: summarize(group) for cat, group in sorted(groups.items())}


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {
        "p50": round(pick(0.5), 2),
        "p95": round(pick(0.95), 2),
        "p99": round(pick(0.99), 2),
        "mean": round(statistics.fmean(ordered), 2),
    }
