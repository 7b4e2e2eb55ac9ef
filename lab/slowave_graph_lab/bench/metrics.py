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
    pathways: Sequence[str] = ()  # per item: "direct" or "associated" (empty: all direct)


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
    # the whole catalog: what an agent paging to the end would read (relevant_total memories)
    out["recall@all"] = statistics.fmean(recall_at(r, len(r.items)) for r in results)
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


PRECISION_DEPTH = 20  # items a client may page through; deeper positions are not scored


def pathway_of(r: Ranked, i: int) -> str:
    return r.pathways[i] if i < len(r.pathways) else "direct"


def direct_only(r: Ranked) -> Ranked:
    """The same result without its associated items (what the direct pathway alone returns)."""
    keep = [i for i in range(len(r.items)) if pathway_of(r, i) == "direct"]
    return Ranked([r.items[i] for i in keep], r.gold, r.category, ["direct"] * len(keep))


def pathway_report(results: Sequence[Ranked], depth: int = PRECISION_DEPTH) -> dict[str, float]:
    """Does the associated pathway earn its place? Recall@k of the direct list alone against direct
    plus associated, and the precision (share of items holding gold evidence, within the first
    ``depth`` positions) of associated items against direct items. Associated items always follow
    the direct ones, so they sit deeper, where precision is lower anyway: ``direct_precision_
    same_positions`` is the precision that direct items show at the very positions (ranks) the
    associated items take, pooled over all questions — the fair comparison. Long direct lists push
    associated items past ``depth``: the ``*_all`` figures count the whole list."""
    at_rank: dict[str, dict[int, list[int]]] = {
        "direct": defaultdict(lambda: [0, 0]),
        "associated": defaultdict(lambda: [0, 0]),
    }
    with_associated = 0
    for r in results:
        with_associated += any(pathway_of(r, i) == "associated" for i in range(len(r.items)))
        for i, refs in enumerate(r.items[:depth]):
            cell = at_rank[pathway_of(r, i)][i]
            cell[0] += bool(refs & r.gold)
            cell[1] += 1
    out: dict[str, float] = {"questions": len(results), "questions_with_associated": with_associated}
    alone = [direct_only(r) for r in results]
    whole = max((len(r.items) for r in results), default=0)
    out["recall@all_direct"] = statistics.fmean(recall_at(r, whole) for r in alone) if results else 0.0
    out["recall@all_with_associated"] = (
        statistics.fmean(recall_at(r, whole) for r in results) if results else 0.0
    )
    ranks = [i + 1 for r in results for i in range(len(r.items)) if pathway_of(r, i) == "associated"]
    out["associated_items_all"] = len(ranks)
    out["associated_mean_rank"] = statistics.fmean(ranks) if ranks else 0.0
    hits = sum(
        bool(r.items[i] & r.gold)
        for r in results
        for i in range(len(r.items))
        if pathway_of(r, i) == "associated"
    )
    out["associated_precision_all"] = hits / len(ranks) if ranks else 0.0
    for k in (5, 10, 20):
        out[f"recall@{k}_direct"] = statistics.fmean(recall_at(r, k) for r in alone) if results else 0.0
        out[f"recall@{k}_with_associated"] = (
            statistics.fmean(recall_at(r, k) for r in results) if results else 0.0
        )
    for name, by_rank in at_rank.items():
        hits, items = sum(c[0] for c in by_rank.values()), sum(c[1] for c in by_rank.values())
        out[f"{name}_items"] = items
        out[f"{name}_precision"] = hits / items if items else 0.0
    # direct precision at the associated items' ranks, weighted by how many associated items sit there
    matched_hits = matched_items = 0.0
    for rank, (_, count) in at_rank["associated"].items():
        direct_hits, direct_items = at_rank["direct"].get(rank, [0, 0])
        if direct_items:
            matched_hits += count * direct_hits / direct_items
            matched_items += count
    out["direct_precision_same_positions"] = matched_hits / matched_items if matched_items else 0.0
    out["associated_items_without_direct_peer"] = out["associated_items"] - matched_items
    return {k: round(v, 4) for k, v in out.items()}
