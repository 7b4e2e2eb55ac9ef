"""Retrieval ranking: fuse vector and full-text evidence, admit by quality, never by count.

Pure functions over candidates the repository found; the numbers live in ``RankingPolicy`` and
its version is reported to agents as ``retrieval_policy_version``.

Admission: a memory is a direct hit when its similarity (plus a small lexical bonus) clears an
absolute floor — below it a memory is not about the question, however few candidates there
are — and its cosine lies within a margin of the best one in the pool, so a clearly better answer
pushes out weak ones. Order is by the fused score (cosine + lexical bonus + bounded learned
prior). There is no quota: an off-topic question gets an empty list, seven relevant memories give
seven hits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from slowave_graph.services.text import term_coverage
from slowave_graph.services.timeframe import Window


@dataclass(frozen=True)
class RankingPolicy:
    version: str = "hybrid-v4"
    # admission: cosine + lexical_weight * coverage² must reach the floor, and the cosine must lie
    # within the margin of the cue's best; a neighbour of a qualified memory needs context_floor
    floor: float = 0.45
    margin: float = 0.30
    lexical_weight: float = 0.30
    context_floor: float = 0.30
    # order: cosine + bm25_weight * BM25/best-BM25 + salience prior + neighbour_weight * neighbour
    bm25_weight: float = 0.40
    neighbour_weight: float = 0.30
    # a question that names a date ("in July 2023", "on October 13, 2023"): memories whose time
    # (occurred_at, else recorded) lies in it, or up to time_grace_days after (events are often
    # told a few days later), are lifted by time_weight — an order signal, never a filter (the
    # date in a question can be wrong, and the memory may be undated)
    time_weight: float = 0.20
    time_grace_days: float = 7.0
    # bounded learned prior: (salience - 0.5) * weight, salience in [0, 1]; a tie-breaker — a
    # larger weight lifted helpful memories into unrelated questions (bench learning, slice c)
    salience_weight: float = 0.02
    # experience: feedback on past retrievals whose question is this close (cosine) carries over
    # (0.75 let templated but different questions inherit each other's answers: slice c dropped);
    # value = similarity * (helped 1, no_effect 0.25, harmed -1, irrelevant -0.5 when nearly the
    # same question); added to the order with this weight; at experience_admit a memory qualifies
    experience_min_similarity: float = 0.85
    experience_k: int = 5
    experience_weight: float = 0.30
    experience_admit: float = 0.90
    irrelevant_similarity: float = 0.90
    # candidates fetched per query vector and from the full-text index; neighbours are looked up
    # for the best context_k candidates (context only matters near the top)
    candidate_k: int = 50
    context_k: int = 40
    # associated hits: minimum decayed edge strength, at most this many, edge half-life
    associated_min_strength: float = 0.2
    associated_max: int = 10
    association_half_life_days: float = 90.0
    # procedures: applicability floor and margin (cosine of the cues to goal + summary + context),
    # at most this many per page, and the weight of their helped/harmed record
    procedure_floor: float = 0.35
    procedure_margin: float = 0.25
    procedures_per_page: int = 3
    procedure_record_weight: float = 0.05


DEFAULT_POLICY = RankingPolicy()


def policy_for(candidate_k: int) -> RankingPolicy:
    """The default policy at another retrieval depth; its version says so, since results differ."""
    if candidate_k == DEFAULT_POLICY.candidate_k:
        return DEFAULT_POLICY
    return replace(
        DEFAULT_POLICY,
        candidate_k=candidate_k,
        version=f"{DEFAULT_POLICY.version}-k{candidate_k}",
    )


@dataclass
class Candidate:
    """A memory found by at least one search, with what each search said about it."""

    id: str
    content: str
    type: str
    salience: float = 0.5
    integration: str | None = None
    integration_version: str | None = None
    cosine: float | None = None  # best over the cues
    cosines: dict[int, float] = field(default_factory=dict)  # per cue (query vector)
    bm25: float | None = None
    strength: float | None = None  # associated pathway
    occurred_at: float | None = None  # epoch seconds: when it happened, else when recorded
    score: float = 0.0
    pathway: str = "direct"
    notes: dict[str, float] = field(default_factory=dict)


def merge_candidates(
    vector_rows: Iterable[dict[str, object]], fulltext_rows: Iterable[dict[str, object]]
) -> dict[str, Candidate]:
    """Collapse rows of several searches into one candidate per memory, keeping the cosine to each
    cue: vector rows carry one (``qi``, ``cosine``), full-text rows all of them (``similarities``)."""
    pool: dict[str, Candidate] = {}
    for row in [*vector_rows, *fulltext_rows]:
        memory_id = str(row["id"])
        cand = pool.get(memory_id)
        if cand is None:
            cand = pool[memory_id] = Candidate(
                id=memory_id,
                content=str(row["content"]),
                type=str(row["type"]),
                salience=_float(row.get("salience"), 0.5),
                integration=_opt_str(row.get("integration")),
                integration_version=_opt_str(row.get("integration_version")),
            )
        if cand.occurred_at is None:  # experience rows carry no time; a search row of it may
            occurred = row.get("occurred_at")
            cand.occurred_at = float(occurred) if isinstance(occurred, int | float) else None
        per_cue: list[tuple[int, float]] = []
        if row.get("cosine") is not None:
            per_cue.append((int(_float(row.get("qi"), 0)), _float(row["cosine"], -1.0)))
        similarities = row.get("similarities")
        if isinstance(similarities, list):
            per_cue.extend((i, _float(v, -1.0)) for i, v in enumerate(similarities))
        for qi, cosine in per_cue:
            cand.cosines[qi] = max(cand.cosines.get(qi, -1.0), cosine)
        if cand.cosines:
            cand.cosine = max(cand.cosines.values())
        if row.get("bm25") is not None:
            bm25 = _float(row["bm25"], 0.0)
            cand.bm25 = bm25 if cand.bm25 is None else max(cand.bm25, bm25)
    return pool


_EXPERIENCE_VALUE = {("used", "helped"): 1.0, ("used", "no_effect"): 0.25, ("used", "harmed"): -1.0}


def experience_scores(
    rows: Iterable[dict[str, object]], policy: RankingPolicy = DEFAULT_POLICY
) -> dict[str, float]:
    """Per memory: the strongest positive plus the strongest negative lesson of similar past
    questions (each weighted by how similar the past question is)."""
    best: dict[str, float] = {}
    worst: dict[str, float] = {}
    for row in rows:
        similarity = _float(row.get("similarity"), 0.0)
        assessment, effect = str(row.get("assessment")), str(row.get("effect") or "helped")
        value = _EXPERIENCE_VALUE.get((assessment, effect), 0.0)
        if assessment == "irrelevant" and similarity >= policy.irrelevant_similarity:
            value = -0.5
        memory_id = str(row["id"])
        if value > 0:
            best[memory_id] = max(best.get(memory_id, 0.0), similarity * value)
        elif value < 0:
            worst[memory_id] = min(worst.get(memory_id, 0.0), similarity * value)
    return {m: best.get(m, 0.0) + worst.get(m, 0.0) for m in set(best) | set(worst)}


def in_time(cand: Candidate, windows: list[Window], policy: RankingPolicy = DEFAULT_POLICY) -> bool:
    """Whether the memory's time lies in a window the question names (or just after it)."""
    if not windows or cand.occurred_at is None:
        return False
    grace = policy.time_grace_days * 86_400.0
    return any(w.holds(cand.occurred_at, grace) for w in windows)


def fused_order(
    pool: dict[str, Candidate], policy: RankingPolicy = DEFAULT_POLICY, windows: Iterable[Window] = ()
) -> list[str]:
    """Candidate ids by fused score before context (to pick whose neighbours to look up)."""
    max_bm25 = max((c.bm25 or 0.0) for c in pool.values()) if pool else 0.0
    dated = list(windows)

    def fused(c: Candidate) -> float:
        lexical = (c.bm25 or 0.0) / max_bm25 if max_bm25 > 0 else 0.0
        timely = policy.time_weight if in_time(c, dated, policy) else 0.0
        return (c.cosine if c.cosine is not None else -1.0) + policy.bm25_weight * lexical + timely

    return [c.id for c in sorted(pool.values(), key=lambda c: (-fused(c), c.id))]


def admit_direct(
    pool: dict[str, Candidate],
    cue_terms: list[list[str]],
    neighbours: Iterable[dict[str, object]] = (),
    policy: RankingPolicy = DEFAULT_POLICY,
    experience: dict[str, float] | None = None,
    windows: Iterable[Window] = (),
) -> list[Candidate]:
    """The relevance-qualified direct hits, best first.

    Admission. Each cue (a question, a goal, one sentence of a task that asks several things) is
    judged on its own: a memory qualifies when, for some cue, its cosine plus a lexical lift clears
    the floor and its cosine lies within the margin of that cue's best hit. The lift is
    ``lexical_weight * coverage**2`` where coverage is the share of the cue's topical terms the
    memory contains: all terms present counts fully, one shared name out of three barely at all.
    A memory recorded right next to a qualified one (NEXT, same session) also qualifies if its own
    lifted cosine clears a lower context floor — the answer often sits next to the turn that names
    the topic. There is no count quota: an off-topic question admits nothing.

    Experience: a memory that feedback on a very similar earlier question marked as helpful
    qualifies, and every experience value moves the order (see ``experience_scores``); irrelevant
    marks only lower the order for nearly the same question — they never hide a memory.

    Order. fused = best cosine + bm25_weight * BM25 / best BM25 in the pool + bounded salience
    prior + experience_weight * experience + time_weight when the memory's time lies in a date the
    question names (``windows``), then + neighbour_weight * the best neighbour's fused score (its
    cosine when it is not a candidate itself).
    """
    experience = experience or {}
    dated = list(windows)
    if not pool:
        return []
    cues = sorted({qi for cand in pool.values() for qi in cand.cosines})
    best = {qi: max(c.cosines.get(qi, -1.0) for c in pool.values()) for qi in cues}
    max_bm25 = max((c.bm25 or 0.0) for c in pool.values())
    fused: dict[str, float] = {}
    qualified: set[str] = set()
    for cand in pool.values():
        prior = (min(max(cand.salience, 0.0), 1.0) - 0.5) * policy.salience_weight
        lexical = (cand.bm25 or 0.0) / max_bm25 if max_bm25 > 0 else 0.0
        learned = experience.get(cand.id, 0.0)
        timely = policy.time_weight if in_time(cand, dated, policy) else 0.0
        fused[cand.id] = (
            (cand.cosine if cand.cosine is not None else -1.0)
            + policy.bm25_weight * lexical
            + prior
            + policy.experience_weight * learned
            + timely
        )
        if learned >= policy.experience_admit or any(
            cosine >= best[qi] - policy.margin
            and _lifted_reaches(cosine, _terms(cue_terms, qi), cand.content, policy.floor, policy)
            for qi, cosine in cand.cosines.items()
        ):
            qualified.add(cand.id)
        cand.notes = {
            "cosine": cand.cosine or -1.0, "bm25": lexical, "prior": prior, "experience": learned,
            "time": timely,
        }  # fmt: skip
    adjacent: dict[str, list[tuple[str, float]]] = {}
    for row in neighbours:
        adjacent.setdefault(str(row["id"]), []).append(
            (str(row["neighbour"]), _float(row.get("cosine"), -1.0))
        )
    admitted = []
    for cand in pool.values():
        around = adjacent.get(cand.id, [])
        context = max((fused.get(n, cos) for n, cos in around), default=None)
        cand.score = fused[cand.id] + (policy.neighbour_weight * context if context is not None else 0.0)
        cand.notes["context"] = context if context is not None else 0.0
        if cand.id in qualified or (
            any(n in qualified for n, _ in around)
            and any(
                _lifted_reaches(cosine, _terms(cue_terms, qi), cand.content, policy.context_floor, policy)
                for qi, cosine in cand.cosines.items()
            )
        ):
            cand.pathway = "direct"
            admitted.append(cand)
    admitted.sort(key=lambda c: (-c.score, c.id))
    return admitted


def _terms(cue_terms: list[list[str]], qi: int) -> list[str]:
    return cue_terms[qi] if qi < len(cue_terms) else []


def _lifted_reaches(
    cosine: float, terms: list[str], content: str, threshold: float, policy: RankingPolicy
) -> bool:
    """Whether cosine + lexical_weight * coverage² reaches ``threshold``. The coverage (a scan of
    the memory's text) is computed only when it decides: coverage lies in [0, 1], so a cosine at
    the threshold reaches it anyway and one below threshold - lexical_weight cannot. Most of a
    pool is one or the other (admit_direct's time was mostly these scans)."""
    if cosine >= threshold:
        return True
    if cosine + policy.lexical_weight < threshold:
        return False
    return cosine + policy.lexical_weight * term_coverage(terms, content) ** 2 >= threshold


def order_associated(rows: Iterable[dict[str, object]], exclude: set[str]) -> list[Candidate]:
    out: list[Candidate] = []
    for row in rows:
        memory_id = str(row["id"])
        if memory_id in exclude:
            continue
        out.append(
            Candidate(
                id=memory_id,
                content=str(row["content"]),
                type=str(row["type"]),
                salience=_float(row.get("salience"), 0.5),
                integration=_opt_str(row.get("integration")),
                integration_version=_opt_str(row.get("integration_version")),
                strength=_float(row.get("strength"), 0.0),
                pathway="associated",
            )
        )
        exclude.add(memory_id)
    out.sort(key=lambda c: (-(c.strength or 0.0), c.id))
    return out


def procedure_record(helped: int, harmed: int) -> float:
    """Evidence of a procedure's worth in (-1, 1); one harmed outweighs one helped."""
    return math.tanh((helped - 1.5 * harmed) / 2.0)


def rank_procedures(
    rows: Iterable[dict[str, Any]], policy: RankingPolicy = DEFAULT_POLICY
) -> list[dict[str, Any]]:
    """Applicable procedures, best first: applicability plus a bounded bonus for their record, so
    a proven procedure goes ahead of an equally applicable one that harmed."""
    found = [dict(r) for r in rows]
    if not found:
        return []
    best = max(float(r["cosine"]) for r in found)
    admitted = [
        r
        for r in found
        if float(r["cosine"]) >= policy.procedure_floor
        and float(r["cosine"]) >= best - policy.procedure_margin
    ]
    for r in admitted:
        r["score"] = float(r["cosine"]) + policy.procedure_record_weight * procedure_record(
            int(r.get("helped") or 0), int(r.get("harmed") or 0)
        )
    admitted.sort(key=lambda r: (-r["score"], str(r["id"])))
    return admitted[: policy.procedures_per_page]


def _float(value: object, default: float) -> float:
    if isinstance(value, int | float):
        return float(value)
    return default


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)
