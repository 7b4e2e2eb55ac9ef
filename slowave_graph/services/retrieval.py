"""Building frozen retrieval catalogs and shaping their pages: the component activate and recall
are both composed with (services/activation.py, services/recall.py).

cues → direct hits (vector + full-text) → associated hits → a frozen catalog of memories and
procedures, paged by ``paginate``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypedDict, cast

from slowave_graph.contract.recall import EvidenceRecord, SourceRef
from slowave_graph.contract.retrieval import (
    AccessibleField,
    Association,
    CompactProcedure,
    Contribution,
    FullProcedure,
    MemoryItem,
    ProcedureTallies,
    Provenance,
    SourceExcerpt,
)
from slowave_graph.embedding.embedder import Embedder, aembed_query
from slowave_graph.graph.paging import Page, paginate
from slowave_graph.graph.repository import CandidateContext, GraphRepository, SearchRows, WalkLimits
from slowave_graph.graph.rows import (
    ExperienceRow,
    FrozenCatalog,
    FulltextHit,
    JsonObject,
    PageExposure,
    ProcedureHit,
    PromotedHit,
    WalkSeed,
)
from slowave_graph.services import folding, needs, text, timeframe
from slowave_graph.services.calibration import CosineScale, scale_for
from slowave_graph.services.context import cursor_id, resolved, unix, utcnow
from slowave_graph.services.excerpt import excerpt
from slowave_graph.services.generalisation import FOREIGN_WEIGHT
from slowave_graph.services.ranking import (
    DEFAULT_POLICY,
    Candidate,
    RankedProcedure,
    RankingPolicy,
    admit_associated,
    admit_direct,
    by_need,
    experience_scores,
    fused_order,
    merge_candidates,
    rank_procedures,
    suppressed,
    walk_of,
    walk_seeds,
    worth_reading,
)
from slowave_graph.services.text import normalise_claim

EVIDENCE_LIMIT = 8
EVIDENCE_CONTENT_MAX = 1_000
FAILED_CAVEAT = "Caution: the last recorded use of this procedure ended in failure: {summary}"


@dataclass(frozen=True)
class Cues:
    texts: list[str]  # the request's needs (services/needs.py), each searched and admitted alone
    embeddings: list[list[float]]
    truncated: bool = False  # the bound on needs left some out
    asked: list[int] = field(default_factory=lambda: [0])  # the needs in the order asked


@dataclass
class Catalog:
    """A relevance-qualified result, ready to be frozen."""

    memories: list[Candidate]
    procedures: list[RankedProcedure]
    truncated: bool
    page_size: int
    query_embedding: list[float] | None = None
    pages: list[Page] = field(init=False)

    def __post_init__(self) -> None:
        self.pages = paginate([c.pathway for c in self.memories], self.page_size, len(self.procedures))

    def page(self, number: int) -> list[Candidate]:
        """The memories of page ``number`` (from 1)."""
        return (
            [self.memories[i] for i in self.pages[number - 1].memories] if len(self.pages) >= number else []
        )

    def page_procedures(self, number: int) -> list[RankedProcedure]:
        if len(self.pages) < number:
            return []
        return [self.procedures[i] for i in self.pages[number - 1].procedures]

    def after(self, number: int) -> Remaining:
        """What the pages after ``number`` hold."""
        later = self.pages[number:]
        return Remaining(
            [self.memories[i] for page in later for i in page.memories],
            [
                procedure_hint_text(self.procedures[i].get("goal"), self.procedures[i].get("summary"))
                for page in later
                for i in page.procedures
            ],
        )

    def freeze(self, retrieval_id: str) -> FrozenCatalog:
        """Parameters of create_retrieval for this catalog with page 1 served."""
        first = self.pages[0] if self.pages else Page([], [])
        whys = [association_text(c) for c in self.memories]
        links = [links_text(c) for c in self.memories]
        return {
            "retrieval_id": retrieval_id,
            "catalog_ids": [c.id for c in self.memories],
            "catalog_pathways": [c.pathway for c in self.memories],
            # why each associated hit came, when there is one (most catalogs have none)
            "catalog_associations": whys if any(whys) else None,
            "catalog_links": links if any(links) else None,
            "catalog_procedures": [p["id"] for p in self.procedures],
            "relevant_total": len(self.memories),
            "catalog_truncated": self.truncated,
            "page_size": self.page_size,
            "page_memories": [page_item(self.memories, i) for i in first.memories],
            "page_procedures": [{"id": self.procedures[i]["id"], "rank": i + 1} for i in first.procedures],
            "cursor_id": cursor_id(retrieval_id, 2) if len(self.pages) > 1 else None,
            "query_embedding": self.query_embedding,
        }


@dataclass(frozen=True)
class Remaining:
    """The unserved rest of a catalog: its memories and the text of its procedures."""

    memories: list[Candidate]
    procedures: list[str]


def procedure_hint_text(goal: str | None, summary: str | None) -> str:
    """A procedure's text as the size hint of later pages counts it (goal and summary: what the
    page shows; the vector's text is ``text.procedure_text``)."""
    return f"{goal or ''} {summary or ''}"


def policy_label(tool: str, policy: RankingPolicy) -> str:
    """retrieval_policy_version: the tool's policy (activate ranks a task, recall a question) and
    the ranking version, e.g. recall/graph-v1; a continuation reports its retrieval's."""
    return f"{tool}/{policy.version}"


def association_text(cand: Candidate) -> str:
    """Why an associated hit came, as the frozen catalog keeps it ("" for a direct hit)."""
    return json.dumps(cand.association, sort_keys=True) if cand.association else ""


def links_text(cand: Candidate) -> str:
    """What folding noted of a catalog item, as the frozen catalog keeps it ("" for nothing)."""
    noted = {"also_stored_as": cand.also_stored_as, "conflicts_with": cand.conflicts_with}
    return json.dumps({k: v for k, v in noted.items() if v}, sort_keys=True) if any(noted.values()) else ""


def page_item(catalog: list[Candidate], i: int) -> PageExposure:
    """An exposure of a page: what was shown, where, by which pathway and why."""
    cand = catalog[i]
    return {
        "id": cand.id,
        "rank": i + 1,
        "pathway": cand.pathway,
        "association": association_text(cand) or None,
    }


def memory_item(cand: Candidate, cue_terms: list[str]) -> MemoryItem:
    """A catalog memory as the agent sees it; a long one as the spans that bear on the cues."""
    association = Association.model_validate(cand.association) if cand.association else None
    shown = excerpt(cand.content, cue_terms)
    spans = shown.source_excerpt()
    return MemoryItem(
        memory_id=cand.id,
        content=shown.content,
        pathway="associated" if cand.pathway == "associated" else "direct",
        provenance=Provenance(
            source_kind="event",
            integration=cand.integration,
            integration_version=cand.integration_version,
            association=association,
            source_excerpt=SourceExcerpt.model_validate(spans) if spans else None,
            also_stored_as=cand.also_stored_as or None,
            conflicts_with=cand.conflicts_with or None,
            origin_scope=cand.origin_scope,
            stage=cand.stage if cand.origin_scope is not None else None,
        ),
    )


class FirstPage(TypedDict):
    """What activate's and recall's answers say of a new catalog beyond its first page."""

    relevant_total: int
    catalog_truncated: bool
    more_available: bool
    continue_from: str | None
    accessible_field: AccessibleField | dict[str, object]


def first_page(catalog: Catalog, frozen: FrozenCatalog) -> FirstPage:
    """The paging fields of an answer that serves ``catalog``'s first page (frozen as ``frozen``)."""
    return FirstPage(
        relevant_total=len(catalog.memories),
        catalog_truncated=catalog.truncated,
        more_available=frozen["cursor_id"] is not None,
        continue_from=frozen["cursor_id"],
        accessible_field=accessible_field(catalog.after(1)),
    )


def accessible_field(rest: Remaining) -> AccessibleField | dict[str, object]:
    """Size hints about catalog items not yet served; never their content. ``kinds``: the pathway
    labels that remain, plus "procedure" when procedures remain."""
    if not rest.memories and not rest.procedures:
        return {}
    kinds = {c.pathway for c in rest.memories} | ({"procedure"} if rest.procedures else set())
    chars = sum(len(c.content) for c in rest.memories) + sum(len(t) for t in rest.procedures)
    return AccessibleField(
        extra_candidates=len(rest.memories) + len(rest.procedures),
        kinds=sorted(kinds),
        approx_extra_tokens=chars // 4 + 1,
    )


def caveats_of(caveats: list[str] | None, outcome: str | None, outcome_summary: str | None) -> list[str]:
    """Stored caveats, headed by a caution when the procedure's last recorded use failed."""
    out = list(caveats or [])
    if outcome == "failure":
        out.insert(0, FAILED_CAVEAT.format(summary=outcome_summary or "no summary recorded"))
    return out


def compact_procedure(row: ProcedureHit) -> CompactProcedure:
    return CompactProcedure(
        procedure_id=row["id"],
        goal=row["goal"],
        summary=row["summary"],
        outcome=row["outcome"] or "unknown",
        outcome_summary=row["outcome_summary"] or "",
        caveats=caveats_of(row.get("caveats"), row["outcome"], row["outcome_summary"]),
    )


def context_cue(context: JsonObject | None) -> str:
    """Scalar values of a task_context as words for the lexical query."""
    return " ".join(str(value) for value in needs.context_values(context))


class Retriever:
    """Finds what qualifies for a set of cues and reads what a page shows."""

    def __init__(
        self,
        repo: GraphRepository,
        embedder: Embedder,
        policy: RankingPolicy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
        consolidate: bool = True,
        generalise: bool = False,
    ):
        self.repo = repo
        self.embedder = embedder
        self.policy = policy
        self.clock = clock
        self.consolidate = consolidate  # fold duplicates and pair updates (services/folding.py)
        # lessons of other scopes travel here by their stage (services/generalisation.py)
        self.generalise = generalise

    async def embed_cues(self, texts: list[str], context: JsonObject | None = None) -> Cues:
        """A request's needs (services/needs.py: its texts, their sentences and clauses, the
        strings of its task_context) and their embeddings (one batch)."""
        found = needs.split_needs(texts, context)
        # questions in the model's query form (e5's "query: "); the same vectors for MiniLM
        embeddings = await aembed_query(self.embedder, found.texts)
        return Cues(found.texts, embeddings, found.truncated, found.asked)

    async def build(
        self,
        scope: str,
        cues: Cues,
        lexical_extra: str,
        page_size: int,
        *,
        with_experience: bool = True,
        with_procedures: bool = True,
        may_use: Callable[[str], bool] | None = None,
    ) -> Catalog:
        """The catalog for these cues. ``with_experience`` / ``with_procedures`` False: the caller
        knows the scope has no learned retrieval / no procedure, so those searches would find nothing.
        ``may_use``: whether the caller's token may see a scope — lessons of other scopes come only
        from scopes it may (None: every scope)."""
        policy = self.policy
        embeddings = cues.embeddings
        scale = await scale_for(self.embedder)
        baselines = scale.baselines(embeddings)
        found, learned_rows, procedure_rows, promoted = await self._search(
            scope, cues, lexical_extra, scale, baselines, with_experience, with_procedures
        )
        granted = [p for p in promoted if may_use is None or may_use(p["scope"])]
        foreign = {p["id"]: p for p in granted[: policy.candidate_k]}
        cue_terms = [text.query_terms(cue) for cue in cues.texts]
        dated = timeframe.windows(" ".join(cues.texts))
        pool = merge_candidates(found.vector, [*found.fulltext, *learned_rows, *_as_hits(foreign.values())])
        order = fused_order(pool, policy, dated, baselines)
        seeds = walk_seeds(order, policy) if policy.uses_concepts else []
        around = await self._around(scope, pool, order, seeds, embeddings)
        irrelevant_at = scale.question_cosine(policy.irrelevant_similarity)
        learned = experience_scores(learned_rows, policy, irrelevant_at)
        walk = walk_of(around.walked, around.associations, seeds, policy, suppressed=suppressed(learned_rows))
        direct = admit_direct(pool, cue_terms, around.neighbours, policy, learned, dated, baselines, walk)
        if foreign:
            direct = _travelled(direct, foreign)
        direct = worth_reading(direct, cues.asked, policy)
        associated = admit_associated(direct, walk, around.associations, policy, baselines, pool)
        procedures = rank_procedures(procedure_rows, policy, baselines)
        memories = direct + associated
        if self.consolidate:
            memories = await self._folded(memories, " \n ".join([*cues.texts, lexical_extra]))
        memories = by_need(memories, cues.asked)
        truncated = found.truncated or cues.truncated
        return Catalog(memories, procedures, truncated, page_size, embeddings[0] if embeddings else None)

    async def _folded(self, memories: list[Candidate], said: str) -> list[Candidate]:
        """The catalog without what the agent just said, duplicates folded and updates paired
        (services/folding.py)."""
        heard = normalise_claim(said)
        memories = [c for c in memories if not folding.echoed(c.content, heard)]
        # a lesson of another scope brings nothing of its scope with it (no update partner)
        links = await self.repo.catalog_links([c.id for c in memories if c.origin_scope is None])
        if not links:
            return memories
        by_id = {c.id: c for c in memories}
        created: dict[str, float] = {}
        for row in links:
            for end in row["ends"]:
                created[end["id"]] = float(end["created_at"] or 0)
                if end["id"] not in by_id and not folding.echoed(end["content"], heard):
                    by_id[end["id"]] = Candidate(
                        id=end["id"],
                        content=end["content"],
                        type=end["type"],
                        integration=end["integration"],
                        integration_version=end["integration_version"],
                    )
        edges = [folding.SimilarEdge(r["newer"], r["older"], r["kind"]) for r in links]
        folded = folding.fold([(c.id, c.pathway) for c in memories], edges, created)
        out = []
        for item in folded:
            cand = by_id.get(item.id)
            if cand is None:  # a partner the agent just said
                continue
            cand.pathway = item.pathway
            cand.also_stored_as = item.also_stored_as
            cand.conflicts_with = item.conflicts_with
            out.append(cand)
        return out

    async def _search(
        self,
        scope: str,
        cues: Cues,
        lexical_extra: str,
        scale: CosineScale,
        baselines: list[tuple[float, float]],
        with_experience: bool,
        with_procedures: bool,
    ) -> tuple[SearchRows, list[ExperienceRow], list[ProcedureHit], list[PromotedHit]]:
        """The candidates (vector and full-text), the experience of similar past questions, the
        procedures that may apply and the lessons of other scopes that may travel here."""
        policy = self.policy
        embeddings = cues.embeddings
        lucene = text.lucene_query(" ".join([*cues.texts, lexical_extra]), text.scope_token(scope))
        # Independent reads run concurrently (each on its own pooled connection).
        return await asyncio.gather(
            self.repo.search_direct(scope=scope, embeddings=embeddings, lucene=lucene, k=policy.candidate_k),
            self.repo.experience(
                scope=scope,
                embeddings=embeddings,
                min_similarity=scale.question_cosine(policy.experience_min_similarity),
                irrelevant_at=scale.question_cosine(policy.irrelevant_similarity),
                k=policy.experience_k,
            )
            if with_experience
            else resolved([]),
            self.repo.search_procedures(
                scope=scope,
                embeddings=embeddings,
                # the loosest cue's floor in cosine: calibrated admission follows (rank_procedures)
                floor=min((m + policy.procedure_floor * sd for m, sd in baselines), default=-1.0),
                k=20,
            )
            if with_procedures
            else resolved([]),
            # more than are kept: the ones of scopes the token may not use are dropped afterwards
            self.repo.promoted(
                scope=scope, kind=text.split_scope(scope)[0], embeddings=embeddings, k=4 * policy.candidate_k
            )
            if self.generalise
            else resolved([]),
        )

    async def _around(
        self,
        scope: str,
        pool: dict[str, Candidate],
        order: list[str],
        seeds: list[WalkSeed],
        embeddings: list[list[float]],
    ) -> CandidateContext:
        """What the graph holds around the candidates: episodic neighbours of the best ones, the
        walk over concepts from the seeds and learned co-use, each as far as the policy uses it."""
        policy = self.policy
        return await self.repo.candidate_context(
            scope=scope,
            context_ids=order[: policy.context_k] if policy.uses_next else [],
            pool_ids=list(pool),
            associate_ids=list(pool) if policy.uses_associations else [],
            seeds=seeds,
            embeddings=embeddings,
            now=self.clock(),
            walk=WalkLimits(
                policy.concept_fanout,
                policy.walk_k,
                2 * policy.associated_max,
                policy.hub_share,
                policy.hub_max,
            ),
            min_strength=policy.associated_min_strength,
            half_life_days=policy.association_half_life_days,
        )

    async def evidence(self, memory_ids: list[str], mode: str) -> tuple[list[EvidenceRecord], bool]:
        rows = await self.repo.evidence_for_memories(memory_ids, EVIDENCE_LIMIT)
        records = []
        for row in rows[:EVIDENCE_LIMIT]:
            kind: Literal["episode", "event"] = "episode" if row["is_episode"] else "event"
            number = int(str(row["id"]).split("_", 1)[1])
            recorded = unix(row["recorded_at"])
            record = EvidenceRecord(
                evidence_id=row["id"],
                source_kind=kind,
                recorded_at=recorded,
                occurred_at=unix(row["occurred_at"]) or recorded,
                source_ref=SourceRef(kind=kind, id=number),
            )
            if mode == "full":
                content = str(row["content"] or "")
                record.content = content[:EVIDENCE_CONTENT_MAX]
                record.truncated = len(content) > EVIDENCE_CONTENT_MAX
            records.append(record)
        return records, len(rows) > EVIDENCE_LIMIT

    async def full_procedures(self, ids: list[str]) -> list[FullProcedure]:
        rows = await self.repo.procedure_details(ids)
        out = []
        for row in rows:
            contributions = [
                Contribution(
                    effect=c["effect"],
                    contribution=c["contribution"] or "",
                    outcome=c["outcome"],
                    outcome_summary=c["outcome_summary"],
                    occurred_at=unix(c["occurred_at"]),
                )
                for c in row["contributions"]
                if c is not None
            ]
            out.append(
                FullProcedure(
                    procedure_id=row["id"],
                    goal=row["goal"],
                    summary=row["summary"],
                    context=json.loads(row["context"] or "{}"),
                    steps=list(row["steps"] or []),
                    caveats=caveats_of(row["caveats"], row["outcome"], row["outcome_summary"]),
                    outcome=row["outcome"] or "unknown",
                    outcome_summary=row["outcome_summary"] or "",
                    created_at=unix(row["created_at"]),
                    evidence=ProcedureTallies(**row["tallies"]),
                    contributions=contributions,
                )
            )
        return out


def _as_hits(promoted: Iterable[PromotedHit]) -> list[FulltextHit]:
    """Promoted lessons as search rows (their cosine to every cue, no BM25): they enter the pool
    and are admitted like any other candidate."""
    return [
        cast(FulltextHit, {
            "id": p["id"], "content": p["content"], "type": p["type"], "salience": p["salience"],
            "integration": p["integration"], "integration_version": p["integration_version"],
            "occurred_at": p["occurred_at"],
            "similarities": [c["cosine"] for c in sorted(p["cosines"], key=lambda c: c["qi"])],
        })
        for p in promoted
    ]  # fmt: skip


def _travelled(direct: list[Candidate], foreign: dict[str, PromotedHit]) -> list[Candidate]:
    """The admitted direct hits with the lessons of other scopes marked (origin scope, stage) and,
    below stage 3, ranked below local memories (score × FOREIGN_WEIGHT)."""
    for cand in direct:
        hit = foreign.get(cand.id)
        if hit is None:
            continue
        cand.origin_scope, cand.stage = hit["scope"], int(hit["stage"])
        if cand.stage < 3:
            cand.score = cand.score * FOREIGN_WEIGHT if cand.score > 0 else cand.score / FOREIGN_WEIGHT
    return sorted(direct, key=lambda c: (-c.score, c.id))
