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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypedDict

from slowave_graph.config import GraphUse
from slowave_graph.graph.rows import (
    AssociatedMemory,
    ExperienceRow,
    FulltextHit,
    Neighbour,
    ProcedureHit,
    VectorHit,
    WalkedMemory,
    WalkPath,
    WalkSeed,
)
from slowave_graph.services.text import term_coverage
from slowave_graph.services.timeframe import Window


@dataclass(frozen=True)
class RankingPolicy:
    """The numbers of ranking. Cosines are read in calibrated units (services/calibration.py: how
    far above the cue's cosines to unrelated reference statements), so the same numbers serve
    every embedding model; "units" below are those. The defaults were set on all-MiniLM-L6-v2,
    where one unit is ~0.09 of cosine (docs/retrieval.md)."""

    version: str = "graph-v1"
    # Which parts of the graph take part (``bench retrieval --policy`` compares them): direct —
    # vector and full-text only; concepts — plus the walk over shared concepts from the best direct
    # hits; walk — plus episodic context (NEXT neighbours); full — plus learned co-use
    # (ASSOCIATED) in the walk and as associated hits.
    graph: GraphUse = "full"
    # admission: z + lexical_weight * coverage² must reach the floor, and z must lie within the
    # margin of the cue's best; a neighbour of a qualified memory needs context_floor
    floor: float = 4.5
    margin: float = 4.0
    lexical_weight: float = 3.3
    context_floor: float = 2.9
    # the catalog's tail (worth_reading): the first catalog_head direct hits per need asked stay;
    # beyond them a hit stays when its score lies within catalog_gap of the best score among the
    # hits answering the same need. Qualified is not the same as worth paging to: without this a
    # single LoCoMo question counted ~52 memories relevant (docs/retrieval.md, "The catalog's size")
    catalog_head: int = 10
    catalog_gap: float = 9.0
    # order: z + bm25_weight * BM25/best-BM25 + salience prior + experience + time
    #        + walk_weight * (the concept walk, standardised over the pool)
    #        + association_weight * (learned co-use from the best direct hits)
    #        + neighbour_weight * neighbour
    bm25_weight: float = 4.4
    neighbour_weight: float = 0.30
    # a question that names a date ("in July 2023", "on October 13, 2023"): memories whose time
    # (occurred_at, else recorded) lies in it, or up to time_grace_days after (events are often
    # told a few days later), are lifted by time_weight — an order signal, never a filter (the
    # date in a question can be wrong, and the memory may be undated)
    time_weight: float = 2.2
    time_grace_days: float = 7.0
    # bounded learned prior: (salience - 0.5) * weight, salience in [0, 1]; a tie-breaker — a
    # larger weight lifted helpful memories into unrelated questions (bench learning, slice c)
    salience_weight: float = 0.22
    # experience: feedback on past retrievals whose question is this close carries over — in
    # units of the model's question-to-question scale (calibration.py; 7.8 is a cosine of 0.85
    # with all-MiniLM-L6-v2: 0.75 let templated but different questions inherit each other's
    # answers); value = similarity * (helped 1, no_effect 0.25, harmed -1, irrelevant -0.5 when
    # nearly the same question); added to the order with this weight; at experience_admit a
    # memory qualifies
    experience_min_similarity: float = 7.8
    experience_k: int = 5
    experience_weight: float = 3.3
    experience_admit: float = 0.90
    irrelevant_similarity: float = 8.4
    # candidates fetched per query vector and from the full-text index; neighbours are looked up
    # for the best context_k candidates (context only matters near the top)
    candidate_k: int = 50
    context_k: int = 40
    # the walk: from the walk_seeds best direct candidates over their concepts (each weighing
    # log((N + 1) / (df + 0.5)) in a scope of N active memories) to the memories that mention the
    # same ones, along at most concept_fanout concepts and walk_k memories. A concept in fewer
    # than 2 memories connects nothing; one in more than hub_share of the scope (or hub_max
    # memories) is a hub — a speaker, the project — and is not walked.
    walk_seeds: int = 5
    walk_weight: float = 0.6
    concept_fanout: int = 16
    walk_k: int = 200
    hub_share: float = 0.05
    hub_max: int = 100
    # learned co-use: the decayed ASSOCIATED strength from the seeds (weights sum to 1) adds this
    # much to the order
    association_weight: float = 3.0
    # associated hits: minimum decayed edge strength, at most this many, edge half-life in days (0:
    # no decay; co_use_strength in retrieval.cypher); a memory the walk reaches is an associated
    # hit when its walk evidence is at least associated_walk_share of the best direct hit's and its
    # z reaches associated_floor
    associated_min_strength: float = 0.2
    associated_max: int = 10
    association_half_life_days: float = 90.0
    associated_walk_share: float = 0.3
    associated_floor: float = 2.9
    # procedures: applicability floor and margin (z of the cues to goal + summary + context),
    # at most this many per page, and the weight of their helped/harmed record
    procedure_floor: float = 3.1
    procedure_margin: float = 2.8
    procedure_record_weight: float = 0.55

    @property
    def uses_concepts(self) -> bool:
        return self.graph != "direct"

    @property
    def uses_next(self) -> bool:
        return self.graph in ("walk", "full")

    @property
    def uses_associations(self) -> bool:
        return self.graph == "full"


DEFAULT_POLICY = RankingPolicy()


def policy_for(
    candidate_k: int, graph: GraphUse = "full", association_half_life_days: float | None = None
) -> RankingPolicy:
    """The default policy at another retrieval depth, with less of the graph or another co-use
    half-life (SLOWAVE_CO_USE_HALF_LIFE_DAYS, the one the maintenance pass decays stored weights
    by; 0: no decay); its version says so, since results differ."""
    half_life = DEFAULT_POLICY.association_half_life_days
    if association_half_life_days is not None:
        half_life = association_half_life_days
    if (candidate_k, graph, half_life) == (
        DEFAULT_POLICY.candidate_k,
        DEFAULT_POLICY.graph,
        DEFAULT_POLICY.association_half_life_days,
    ):
        return DEFAULT_POLICY
    version = DEFAULT_POLICY.version
    if graph != DEFAULT_POLICY.graph:
        version += f"-{graph}"
    if candidate_k != DEFAULT_POLICY.candidate_k:
        version += f"-k{candidate_k}"
    if half_life != DEFAULT_POLICY.association_half_life_days:
        version += f"-hl{half_life:g}"
    return replace(
        DEFAULT_POLICY,
        candidate_k=candidate_k,
        graph=graph,
        association_half_life_days=half_life,
        version=version,
    )


class AssociationReason(TypedDict):
    """Why an associated hit came (the catalog keeps it as JSON; contract.retrieval.Association)."""

    via: str  # concept or co_use
    concepts: list[str]
    from_memory_id: str | None


class RankedProcedure(ProcedureHit):
    """A procedure_search row that rank_procedures admitted, with its applicability and score."""

    z: float
    score: float


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
    strength: float | None = None  # associated pathway: the evidence that brought it
    occurred_at: float | None = None  # epoch seconds: when it happened, else when recorded
    score: float = 0.0
    pathway: str = "direct"
    notes: dict[str, float] = field(default_factory=dict)
    # associated pathway: why it came — via concepts or co-use, from which direct hit
    association: AssociationReason | None = None
    # folding (services/folding.py): the duplicates shown through it, the updates shown beside it
    also_stored_as: list[str] = field(default_factory=list)
    conflicts_with: list[str] = field(default_factory=list)
    # a lesson of another scope (services/generalisation.py): where it lives, how far it travels
    origin_scope: str | None = None
    stage: int | None = None
    # the needs (cue indices) it qualified for on its own, with its z to each: the catalog opens
    # with each need's best
    answers: dict[int, float] = field(default_factory=dict)


Baselines = Sequence[tuple[float, float]]  # per cue: (mean, sd) of its unrelated cosines


def calibrated(cosine: float, qi: int, baselines: Baselines | None) -> float:
    """A cue's cosine in calibrated units (identity without baselines: tests state raw cosines)."""
    if baselines is None or qi >= len(baselines):
        return cosine
    mean, sd = baselines[qi]
    return (cosine - mean) / sd


def _zs(cand: Candidate, baselines: Baselines | None) -> dict[int, float]:
    return {qi: calibrated(cos, qi, baselines) for qi, cos in cand.cosines.items()}


def _best_z(cand: Candidate, baselines: Baselines | None) -> float:
    zs = _zs(cand, baselines)
    return max(zs.values()) if zs else -math.inf


def merge_candidates(
    vector_rows: Iterable[VectorHit], fulltext_rows: Iterable[FulltextHit | ExperienceRow]
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
        vector_cosine = row.get("cosine")  # a vector hit's
        if vector_cosine is not None:
            per_cue.append((int(_float(row.get("qi"), 0)), _float(vector_cosine, -1.0)))
        similarities = row.get("similarities")
        if isinstance(similarities, list):
            per_cue.extend((i, _float(v, -1.0)) for i, v in enumerate(similarities))
        for qi, cosine in per_cue:
            cand.cosines[qi] = max(cand.cosines.get(qi, -1.0), cosine)
        if cand.cosines:
            cand.cosine = max(cand.cosines.values())
        bm25_score = row.get("bm25")  # a full-text hit's
        if bm25_score is not None:
            bm25 = _float(bm25_score, 0.0)
            cand.bm25 = bm25 if cand.bm25 is None else max(cand.bm25, bm25)
    return pool


_EXPERIENCE_VALUE = {("used", "helped"): 1.0, ("used", "no_effect"): 0.25, ("used", "harmed"): -1.0}


def experience_scores(
    rows: Iterable[ExperienceRow], policy: RankingPolicy = DEFAULT_POLICY, irrelevant_at: float = 0.9
) -> dict[str, float]:
    """Per memory: the strongest positive plus the strongest negative lesson of similar past
    questions (each weighted by how similar the past question is). An irrelevant mark counts only
    from a past question at least ``irrelevant_at`` similar (cosine; ``policy.irrelevant_similarity``
    on the model's question scale)."""
    best: dict[str, float] = {}
    worst: dict[str, float] = {}
    for row in rows:
        similarity = _float(row.get("similarity"), 0.0)
        assessment, effect = str(row.get("assessment")), str(row.get("effect") or "helped")
        value = _EXPERIENCE_VALUE.get((assessment, effect), 0.0)
        if assessment == "irrelevant" and similarity >= irrelevant_at:
            value = -0.5
        memory_id = str(row["id"])
        if value > 0:
            best[memory_id] = max(best.get(memory_id, 0.0), similarity * value)
        elif value < 0:
            worst[memory_id] = min(worst.get(memory_id, 0.0), similarity * value)
    return {m: best.get(m, 0.0) + worst.get(m, 0.0) for m in set(best) | set(worst)}


def suppressed(rows: Iterable[ExperienceRow]) -> set[str]:
    """Memories that feedback on a similar past question (every experience row is one) marked
    irrelevant: the graph stops leading to them for questions like it — an associated hit that did
    not fit is not offered again, and the walk no longer lifts it. Its direct ranking is left to
    ``experience_scores``: irrelevant is about a question, never a verdict on the memory."""
    return {str(r["id"]) for r in rows if r.get("assessment") == "irrelevant"}


def in_time(cand: Candidate, windows: list[Window], policy: RankingPolicy = DEFAULT_POLICY) -> bool:
    """Whether the memory's time lies in a window the question names (or just after it)."""
    if not windows or cand.occurred_at is None:
        return False
    grace = policy.time_grace_days * 86_400.0
    return any(w.holds(cand.occurred_at, grace) for w in windows)


def fused_order(
    pool: dict[str, Candidate],
    policy: RankingPolicy = DEFAULT_POLICY,
    windows: Iterable[Window] = (),
    baselines: Baselines | None = None,
) -> list[str]:
    """Candidate ids by fused score before the graph has a say (to pick the walk's seeds and whose
    neighbours to look up)."""
    max_bm25 = max((c.bm25 or 0.0) for c in pool.values()) if pool else 0.0
    dated = list(windows)

    def fused(c: Candidate) -> float:
        lexical = (c.bm25 or 0.0) / max_bm25 if max_bm25 > 0 else 0.0
        timely = policy.time_weight if in_time(c, dated, policy) else 0.0
        return _best_z(c, baselines) + policy.bm25_weight * lexical + timely

    return [c.id for c in sorted(pool.values(), key=lambda c: (-fused(c), c.id))]


def walk_seeds(order: Sequence[str], policy: RankingPolicy = DEFAULT_POLICY) -> list[WalkSeed]:
    """Where the walk starts: the best direct candidates, the first weighing most (1/rank,
    weights summing to 1)."""
    top = list(order[: policy.walk_seeds])
    total = sum(1.0 / (rank + 1) for rank in range(len(top)))
    return [{"id": memory_id, "weight": 1.0 / (rank + 1) / total} for rank, memory_id in enumerate(top)]


@dataclass
class Walk:
    """What spreading activation from the seeds found (candidate_context in retrieval.cypher).

    ``concept``: per memory, the activation that reached it over shared concepts; ``paths``: the
    concepts (and the seeds) it came through, strongest first; ``co_use``: per memory, the learned
    ASSOCIATED strength from the seeds, weighted like them; ``co_use_from``: its strongest seed."""

    concept: dict[str, float] = field(default_factory=dict)
    paths: dict[str, list[WalkPath]] = field(default_factory=dict)
    co_use: dict[str, float] = field(default_factory=dict)
    co_use_from: dict[str, str] = field(default_factory=dict)
    rows: dict[str, WalkedMemory] = field(default_factory=dict)  # walked memories' fields
    seeds: set[str] = field(default_factory=set)


def walk_of(
    walked: Iterable[WalkedMemory],
    associations: Iterable[AssociatedMemory],
    seeds: Sequence[WalkSeed],
    policy: RankingPolicy = DEFAULT_POLICY,
    suppressed: Iterable[str] = (),
) -> Walk:
    """The walk's evidence per memory. ``suppressed``: memories that feedback on a similar question
    marked irrelevant — the paths to them are dropped."""
    blocked = set(suppressed)
    out = Walk(seeds={str(s["id"]) for s in seeds})
    if policy.uses_concepts:
        for row in walked:
            memory_id = str(row["id"])
            if memory_id in blocked:
                continue
            out.concept[memory_id] = _float(row.get("walk"), 0.0)
            out.paths[memory_id] = list(row.get("paths") or [])
            out.rows[memory_id] = row
    if policy.uses_associations:
        weight = {str(s["id"]): float(s["weight"]) for s in seeds}
        for linked in associations:
            memory_id = str(linked["id"])
            if memory_id in blocked:
                continue
            links = [
                (weight[str(link["seed"])], float(link["strength"]), str(link["seed"]))
                for link in linked["links"]
                if str(link["seed"]) in weight
            ]
            if links:
                out.co_use[memory_id] = sum(w * strength for w, strength, _ in links)
                out.co_use_from[memory_id] = max(links, key=lambda x: (x[0] * x[1], x[2]))[2]
    return out


def _standardised(values: dict[str, float], ids: Iterable[str]) -> dict[str, float]:
    """``values`` over ``ids`` (missing = 0) as z-scores over those ids: the walk's raw activation
    depends on the scope's size and concepts, its rank among the candidates does not."""
    keys = list(ids)
    if not keys or not values:
        return {}
    xs = [values.get(k, 0.0) for k in keys]
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs))
    if sd <= 1e-12:
        return {}
    return {k: (values.get(k, 0.0) - mean) / sd for k in keys}


def admit_direct(
    pool: dict[str, Candidate],
    cue_terms: list[list[str]],
    neighbours: Iterable[Neighbour] = (),
    policy: RankingPolicy = DEFAULT_POLICY,
    experience: dict[str, float] | None = None,
    windows: Iterable[Window] = (),
    baselines: Baselines | None = None,
    walk: Walk | None = None,
) -> list[Candidate]:
    """The relevance-qualified direct hits, best first.

    Admission. Each cue (a question, a goal, one sentence of a task that asks several things) is
    judged on its own, its cosines in calibrated units (z, see ``calibrated``): a memory qualifies
    when, for some cue, its z plus a lexical lift clears the floor and its z lies within the margin
    of that cue's best hit. The lift is ``lexical_weight * coverage**2`` where coverage is the
    share of the cue's topical terms the memory contains: all terms present counts fully, one
    shared name out of three barely at all. A memory recorded right next to a qualified one (NEXT,
    same session) also qualifies if its own lifted z clears a lower context floor — the answer
    often sits next to the turn that names the topic. There is no count quota: an off-topic
    question admits nothing. The graph orders but never admits a direct hit.

    Experience: a memory that feedback on a very similar earlier question marked as helpful
    qualifies, and every experience value moves the order (see ``experience_scores``); irrelevant
    marks only lower the order for nearly the same question — they never hide a memory.

    Order. fused = best z + bm25_weight * BM25 / best BM25 in the pool + bounded salience prior +
    experience_weight * experience + time_weight when the memory's time lies in a date the
    question names (``windows``) + walk_weight * the concept walk's activation standardised over
    the pool + association_weight * learned co-use from the best candidates (``walk``), then +
    neighbour_weight * the best neighbour's fused score (its z when it is not a candidate itself).
    """
    experience = experience or {}
    dated = list(windows)
    if not pool:
        return []
    zs = {cand.id: _zs(cand, baselines) for cand in pool.values()}
    fused, qualified = _fuse_and_qualify(pool, zs, cue_terms, policy, experience, dated, walk)
    adjacent = _adjacent(neighbours, policy, baselines)
    admitted = _admit_in_context(pool, zs, fused, qualified, adjacent, cue_terms, policy)
    admitted.sort(key=lambda c: (-c.score, c.id))
    return admitted


def _fuse_and_qualify(
    pool: dict[str, Candidate],
    zs: dict[str, dict[int, float]],
    cue_terms: list[list[str]],
    policy: RankingPolicy,
    experience: dict[str, float],
    dated: list[Window],
    walk: Walk | None,
) -> tuple[dict[str, float], set[str]]:
    """admit_direct's first pass: each candidate's fused score before its neighbours count (its
    notes say what went into it) and whether it qualifies on its own — by experience, or for some
    cue within the margin of that cue's best with its lifted z at the floor."""
    cues = sorted({qi for z in zs.values() for qi in z})
    best = {qi: max(z.get(qi, -math.inf) for z in zs.values()) for qi in cues}
    max_bm25 = max((c.bm25 or 0.0) for c in pool.values())
    concept_walk = {}
    if walk is not None and policy.uses_concepts:
        concept_walk = _standardised(walk.concept, pool)
    co_use = walk.co_use if walk is not None and policy.uses_associations else {}
    fused: dict[str, float] = {}
    qualified: set[str] = set()
    for cand in pool.values():
        z = max(zs[cand.id].values(), default=-math.inf)
        prior = (min(max(cand.salience, 0.0), 1.0) - 0.5) * policy.salience_weight
        lexical = (cand.bm25 or 0.0) / max_bm25 if max_bm25 > 0 else 0.0
        learned = experience.get(cand.id, 0.0)
        timely = policy.time_weight if in_time(cand, dated, policy) else 0.0
        graph = policy.walk_weight * concept_walk.get(cand.id, 0.0)
        graph += policy.association_weight * co_use.get(cand.id, 0.0)
        fused[cand.id] = (
            z + policy.bm25_weight * lexical + prior + policy.experience_weight * learned + timely + graph
        )
        cand.answers = {
            qi: cz
            for qi, cz in zs[cand.id].items()
            if cz >= best[qi] - policy.margin
            and _lifted_reaches(cz, _terms(cue_terms, qi), cand.content, policy.floor, policy)
        }
        if learned >= policy.experience_admit or cand.answers:
            qualified.add(cand.id)
        cand.notes = {
            "z": z, "bm25": lexical, "prior": prior, "experience": learned, "time": timely, "graph": graph,
        }  # fmt: skip
    return fused, qualified


def worth_reading(
    direct: Sequence[Candidate], asked: Sequence[int], policy: RankingPolicy = DEFAULT_POLICY
) -> list[Candidate]:
    """The direct hits worth paging to, in their order: the catalog's head — the first
    ``catalog_head`` hits per need asked, in the order an agent reads them (``by_need``) — and,
    beyond it, the hits whose score lies within ``catalog_gap`` of the best score among the hits
    answering the same need (for a hit that answers no need by itself — a neighbour or an
    experience hit — the best of all). The head is what the first pages show, so recall at those
    depths is untouched; what goes is the tail far below each need's best."""
    head_size = policy.catalog_head * max(1, len(asked))
    if len(direct) <= head_size:
        return list(direct)
    head = {c.id for c in by_need(direct, asked)[:head_size]}
    top = max(c.score for c in direct)
    best: dict[int, float] = {}
    for cand in direct:
        for need in cand.answers:
            best[need] = max(best.get(need, -math.inf), cand.score)

    def near(cand: Candidate) -> bool:
        bar = min((best[need] for need in cand.answers), default=top)
        return cand.score >= bar - policy.catalog_gap

    return [c for c in direct if c.id in head or near(c)]


def by_need(memories: Sequence[Candidate], asked: Sequence[int]) -> list[Candidate]:
    """The catalog in the order an agent reads it: the best answer of each need first — the memory
    most similar to it among those it admits — in the order the needs were asked (``asked``: cue
    indices; a need answered by an earlier one's best adds nothing), then the rest as ranked.
    With one need the order is the ranking's, which weighs more than similarity (full text,
    time, experience, the graph)."""
    if len(asked) < 2:
        return list(memories)
    first: list[Candidate] = []
    for need in asked:
        answering = [c for c in memories if need in c.answers]
        best = max(answering, key=lambda c: c.answers[need], default=None)  # the first of equals
        if best is not None and best not in first:
            first.append(best)
    chosen = {c.id for c in first}
    return first + [c for c in memories if c.id not in chosen]


def _adjacent(
    neighbours: Iterable[Neighbour], policy: RankingPolicy, baselines: Baselines | None
) -> dict[str, list[tuple[str, float]]]:
    """Per candidate: the memories recorded next to it (NEXT, same session), each with its z."""
    adjacent: dict[str, list[tuple[str, float]]] = {}
    if policy.uses_next:
        for row in neighbours:
            cosine = _float(row.get("cosine"), -1.0)
            # a neighbour that is not a candidate itself counts with its z to the first cue
            adjacent.setdefault(str(row["id"]), []).append(
                (str(row["neighbour"]), calibrated(cosine, 0, baselines))
            )
    return adjacent


def _admit_in_context(
    pool: dict[str, Candidate],
    zs: dict[str, dict[int, float]],
    fused: dict[str, float],
    qualified: set[str],
    adjacent: dict[str, list[tuple[str, float]]],
    cue_terms: list[list[str]],
    policy: RankingPolicy,
) -> list[Candidate]:
    """admit_direct's second pass: each candidate's final score (fused plus its best neighbour's)
    and the admitted ones — the qualified, and a neighbour of a qualified one whose lifted z
    reaches the context floor — in pool order (admit_direct sorts them)."""
    admitted = []
    for cand in pool.values():
        around = adjacent.get(cand.id, [])
        context = max((fused.get(n, z) for n, z in around), default=None)
        cand.score = fused[cand.id] + (policy.neighbour_weight * context if context is not None else 0.0)
        cand.notes["context"] = context if context is not None else 0.0
        if cand.id in qualified or (
            any(n in qualified for n, _ in around)
            and any(
                _lifted_reaches(cz, _terms(cue_terms, qi), cand.content, policy.context_floor, policy)
                for qi, cz in zs[cand.id].items()
            )
        ):
            cand.pathway = "direct"
            admitted.append(cand)
    return admitted


def _terms(cue_terms: list[list[str]], qi: int) -> list[str]:
    return cue_terms[qi] if qi < len(cue_terms) else []


def _lifted_reaches(
    z: float, terms: list[str], content: str, threshold: float, policy: RankingPolicy
) -> bool:
    """Whether z + lexical_weight * coverage² reaches ``threshold``. The coverage (a scan of the
    memory's text) is computed only when it decides: coverage lies in [0, 1], so a z at the
    threshold reaches it anyway and one below threshold - lexical_weight cannot. Most of a pool is
    one or the other (admit_direct's time was mostly these scans)."""
    if z >= threshold:
        return True
    if z + policy.lexical_weight < threshold:
        return False
    return z + policy.lexical_weight * term_coverage(terms, content) ** 2 >= threshold


def admit_associated(
    direct: Sequence[Candidate],
    walk: Walk,
    associations: Iterable[AssociatedMemory],
    policy: RankingPolicy = DEFAULT_POLICY,
    baselines: Baselines | None = None,
    pool: dict[str, Candidate] | None = None,
) -> list[Candidate]:
    """Associated hits: memories the graph links to admitted direct hits, each with why it came.

    - over concepts (the walk): its activation is at least ``associated_walk_share`` of the best
      direct hit's, and its own z reaches ``associated_floor`` — sharing a word with a good answer
      is not enough to be about the question;
    - over learned co-use (ASSOCIATED, ``policy.graph`` full): a link of decayed strength at least
      ``associated_min_strength`` to an admitted direct hit.

    No direct hit, no associated hit: an off-topic question still gets an empty list. Ordered by
    their evidence (the concept share or the co-use strength), at most ``associated_max``."""
    if not direct:
        return []
    taken = {c.id for c in direct}
    found: dict[str, Candidate] = {}
    if policy.uses_concepts and walk.concept:
        found = _associated_over_concepts(direct, taken, walk, policy, baselines, pool)
    if policy.uses_associations:
        _add_associated_over_co_use(found, taken, associations)
    ordered = sorted(found.values(), key=lambda c: (-(c.strength or 0.0), c.id))
    return ordered[: policy.associated_max]


def _associated_over_concepts(
    direct: Sequence[Candidate],
    taken: set[str],
    walk: Walk,
    policy: RankingPolicy,
    baselines: Baselines | None,
    pool: dict[str, Candidate] | None,
) -> dict[str, Candidate]:
    """The memories the walk reached with enough of the best direct hit's activation and a z at
    ``associated_floor``, each with the concepts it came through and the direct hit it came from."""
    found: dict[str, Candidate] = {}
    top = max((walk.concept.get(c.id, 0.0) for c in direct), default=0.0)
    for memory_id, activation in walk.concept.items():
        known = (pool or {}).get(memory_id)  # a candidate already: its cosines are known
        row = walk.rows.get(memory_id)
        if memory_id in taken or (known is None and row is None) or top <= 0:
            continue
        share = activation / top
        if known is not None:
            z = _best_z(known, baselines)
        else:
            assert row is not None
            similarities = row.get("similarities") or []
            z = max(
                (calibrated(float(v), qi, baselines) for qi, v in enumerate(similarities)),
                default=-math.inf,
            )
        if share < policy.associated_walk_share or z < policy.associated_floor:
            continue
        paths = walk.paths.get(memory_id, [])
        seeds = [s for p in paths for s in (p.get("seeds") or []) if s in taken]
        if known is not None:
            cand = replace(known, strength=min(share, 1.0), pathway="associated")
        else:
            assert row is not None
            cand = _associated(row, min(share, 1.0))
        cand.association = {
            "via": "concept",
            "concepts": [str(p["name"]) for p in paths][:3],
            "from_memory_id": seeds[0] if seeds else None,
        }
        found[memory_id] = cand
    return found


def _add_associated_over_co_use(
    found: dict[str, Candidate], taken: set[str], associations: Iterable[AssociatedMemory]
) -> None:
    """Adds to ``found`` the memories linked by learned co-use to an admitted direct hit; one the
    walk found already is replaced when its strongest link is stronger than its walk share."""
    for linked in associations:
        memory_id = str(linked["id"])
        links = [link for link in linked["links"] if str(link["seed"]) in taken]
        if memory_id in taken or not links:
            continue
        link = max(links, key=lambda x: (float(x["strength"]), str(x["seed"])))
        strength = float(link["strength"])
        if memory_id in found and (found[memory_id].strength or 0.0) >= strength:
            continue
        cand = _associated(linked, strength)
        cand.association = {"via": "co_use", "concepts": [], "from_memory_id": str(link["seed"])}
        found[memory_id] = cand


def _associated(row: WalkedMemory | AssociatedMemory, strength: float) -> Candidate:
    return Candidate(
        id=str(row["id"]),
        content=str(row["content"]),
        type=str(row["type"]),
        salience=_float(row.get("salience"), 0.5),
        integration=_opt_str(row.get("integration")),
        integration_version=_opt_str(row.get("integration_version")),
        strength=strength,
        pathway="associated",
    )


def procedure_record(helped: int, harmed: int) -> float:
    """Evidence of a procedure's worth in (-1, 1); one harmed outweighs one helped."""
    return math.tanh((helped - 1.5 * harmed) / 2.0)


def rank_procedures(
    rows: Iterable[ProcedureHit], policy: RankingPolicy = DEFAULT_POLICY, baselines: Baselines | None = None
) -> list[RankedProcedure]:
    """Applicable procedures, best first: applicability plus a bounded bonus for their record, so
    a proven procedure goes ahead of an equally applicable one that harmed."""
    found: list[tuple[float, ProcedureHit]] = []
    for r in rows:
        similarities = r.get("similarities") or [r["cosine"]]
        found.append((max(calibrated(float(v), qi, baselines) for qi, v in enumerate(similarities)), r))
    if not found:
        return []
    best = max(z for z, _ in found)
    admitted: list[RankedProcedure] = []
    for z, r in found:
        if z >= policy.procedure_floor and z >= best - policy.procedure_margin:
            record = procedure_record(int(r.get("helped") or 0), int(r.get("harmed") or 0))
            admitted.append({**r, "z": z, "score": z + policy.procedure_record_weight * record})
    admitted.sort(key=lambda r: (-r["score"], str(r["id"])))
    return admitted  # paged like memories (graph/paging.py)


def _float(value: object, default: float) -> float:
    if isinstance(value, int | float):
        return float(value)
    return default


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)
