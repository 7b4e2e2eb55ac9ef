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
from dataclasses import dataclass, field
from typing import Any

from slowave_graph.services.text import term_coverage


@dataclass(frozen=True)
class RankingPolicy:
    version: str = "hybrid-v1"
    # cosine of all-MiniLM-L6-v2 below which a memory is not considered about the question
    floor: float = 0.42
    # admitted hits lie within this cosine distance of the best hit
    margin: float = 0.20
    # weight of lexical agreement (share of the query's topical terms present) in the fused score
    lexical_weight: float = 0.08
    # bounded learned prior: (salience - 0.5) * weight, salience in [0, 1]
    salience_weight: float = 0.06
    # candidates fetched per query vector and from the full-text index
    candidate_k: int = 100
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


def admit_direct(
    pool: dict[str, Candidate], cue_terms: list[list[str]], policy: RankingPolicy = DEFAULT_POLICY
) -> list[Candidate]:
    """The relevance-qualified direct hits, best first.

    Each cue (a question, a goal, one sentence of a task that asks several things) is judged on
    its own: a memory qualifies when, for some cue, its similarity plus a small lexical bonus clears
    the floor and its cosine lies within the margin of that cue's best hit. So a task with two
    questions gets the answers to both, while a clearly better answer to one question still pushes
    out weak matches for that question.

    The lexical signal is the share of the cue's topical terms a memory contains — not BM25
    normalised by the pool's best, which would call a lone match on a shared name a perfect one.
    The margin is measured on cosine alone: lexical agreement may lift a memory over the floor and
    order near-ties, but it must not widen or narrow the band of admitted meanings.
    """
    if not pool:
        return []
    cues = sorted({qi for cand in pool.values() for qi in cand.cosines})
    best = {qi: max(c.cosines.get(qi, -1.0) for c in pool.values()) for qi in cues}
    admitted = []
    for cand in pool.values():
        prior = (min(max(cand.salience, 0.0), 1.0) - 0.5) * policy.salience_weight
        fused, qualified, lexical_best = -1.0, False, 0.0
        for qi, cosine in cand.cosines.items():
            terms = cue_terms[qi] if qi < len(cue_terms) else []
            lexical = term_coverage(terms, cand.content)
            lifted = cosine + policy.lexical_weight * lexical
            fused = max(fused, lifted)
            lexical_best = max(lexical_best, lexical)
            if lifted >= policy.floor and cosine >= best[qi] - policy.margin:
                qualified = True
        cand.score = fused + prior
        cand.notes = {"cosine": cand.cosine if cand.cosine is not None else -1.0, "lexical": lexical_best,
                      "prior": prior}  # fmt: skip
        if qualified:
            cand.pathway = "direct"
            admitted.append(cand)
    admitted.sort(key=lambda c: (-c.score, c.id))
    return admitted


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
