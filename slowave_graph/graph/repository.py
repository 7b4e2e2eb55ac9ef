"""Graph repository: the only code that talks to Neo4j on behalf of the services.

Each public method is one logical unit of work — one transaction — built from the named Cypher
statements in ``cypher/``. Methods take and return plain Python values.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar, Unpack

from neo4j import AsyncManagedTransaction

from slowave_graph.graph import statements as st
from slowave_graph.graph.database import Database
from slowave_graph.graph.errors import (
    CursorRefused,
    FeedbackOutstanding,
    SessionEnded,
    SessionScopeMismatch,
    UnknownSession,
)
from slowave_graph.graph.paging import Page
from slowave_graph.graph.records import rows
from slowave_graph.graph.rows import (
    ActivatedRow,
    ActivateRetrievalParams,
    AssociatedMemory,
    CandidateContextRow,
    CatalogLinkRow,
    CloseParams,
    ConceptLink,
    ConceptWalkRow,
    ContinuityOwner,
    CoverageRow,
    CursorRow,
    EpisodeParams,
    EvidenceRow,
    ExperienceRow,
    FeedbackContextRow,
    FeedbackEvent,
    FulltextHit,
    GuardParams,
    GuardRow,
    HitsRow,
    JsonObject,
    LearningChange,
    Neighbour,
    PageExposure,
    PageMemoryHome,
    ProcedureDetailsRow,
    ProcedureExposure,
    ProcedureHit,
    ProcedureParams,
    PromotedHit,
    RecordedEvent,
    RememberItem,
    RetireItem,
    RetrievalParams,
    SessionCallRow,
    SessionForCommitRow,
    SessionParams,
    StoredMemory,
    TrajectoryStep,
    VectorHit,
    WalkedMemory,
    WalkSeed,
)

# On Neo4j 5.26 a scope this small is searched exactly by scanning it; larger ones over-fetch.
EXACT_SCAN_MAX = 5_000
# Upper bound on over-fetching from the global vector index (5.26 path).
OVERFETCH_MAX = 20_000
# scan_max of the forced exact scan ("scan" strategy): every scope is scanned.
SCAN_ALL = 2**62
# On Neo4j 5.26 the experience lookup compares the cues with this many of a scope's most recent
# learned retrievals (an exact scan; 2026.x searches all of them through a vector index).
EXPERIENCE_WINDOW = 1_000
# The experience index is asked for this many times k nearest retrievals per cue: those that
# teach nothing for the question at hand (experience_lessons) leave enough that do.
EXPERIENCE_SEARCH_PER_K = 4


def search_from(k: int) -> int:
    """How many live matches a scope needs before a filtered vector SEARCH with LIMIT k is run:
    on Neo4j 2026.09.0 a LIMIT above the live matches can make the server fail without answering
    (cypher/retrieval.cypher, vector_search_filtered); smaller sets are compared exactly. Twice k
    leaves room for memories retired while the statement runs."""
    return 2 * k


G = TypeVar("G", bound=GuardRow)
H = TypeVar("H")


@dataclass(frozen=True)
class ScopeState:
    has_memories: bool
    has_procedures: bool
    has_learned: bool  # a retrieval of the scope has taught something (experience can find it)
    variants: list[str]


@dataclass(frozen=True)
class RecallSession:
    task_context: JsonObject
    has_procedures: bool  # False: the procedure search would find nothing
    has_learned: bool  # False: so would the experience lookup


@dataclass(frozen=True)
class ServedPage:
    retrieval_id: str
    page: int
    page_ids: list[str]
    rest_ids: list[str]
    catalog_ids: list[str]
    catalog_pathways: list[str]
    catalog_associations: list[str]  # per item: why an associated hit came (JSON), "" for direct
    catalog_links: list[str]  # per item: what folding noted (JSON), "" for none
    page_procedure_ids: list[str]
    rest_procedure_ids: list[str]
    query: str  # the task or question the retrieval answered
    next_cursor_id: str | None
    relevant_total: int
    catalog_truncated: bool
    policy_version: str


@dataclass(frozen=True)
class FeedbackWrite:
    recorded: list[RecordedEvent]
    retired: list[str]
    learning: list[LearningChange]
    coverage: CoverageRow
    experience_pending: bool  # the retrieval waits to be moved into the experience index


@dataclass(frozen=True)
class FeedbackDecision:
    """What a feedback call writes, decided against the retrieval it names."""

    events: list[FeedbackEvent]
    retire: list[RetireItem]
    declare_complete: bool


@dataclass(frozen=True)
class SearchRows:
    vector: list[VectorHit]
    fulltext: list[FulltextHit]
    truncated: bool  # some search returned as many rows as it was allowed to


@dataclass(frozen=True)
class CandidateContext:
    neighbours: list[Neighbour]
    walked: list[WalkedMemory]
    associations: list[AssociatedMemory]


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """What a commit did (commit_session)."""

    episodes_formed: int
    episode_id: str | None
    procedure_id: str | None
    was_open: bool  # this call closed the session (else it only updated an ended one)


@dataclass(frozen=True)
class WalkLimits:
    """How far the walk over concepts may spread (candidate_context in retrieval.cypher)."""

    concept_fanout: int
    walk_k: int
    outside_k: int  # walked memories outside the pool described in full (associated candidates)
    hub_share: float
    hub_max: int


VectorStrategy = Literal["auto", "filtered", "overfetch", "scan"]


class GraphRepository:
    def __init__(self, db: Database, idle_timeout: float, vector_strategy: VectorStrategy = "auto") -> None:
        self.db = db
        self.idle_timeout = idle_timeout
        # "auto": in-index filtering where the server has it, else exact scan of small scopes and
        # over-fetch for large ones. The others force one path (tests compare them).
        self.vector_strategy = vector_strategy
        # Set when feedback marks a retrieval for the experience index; the batch that moves
        # marked ones into it (index_pending_experience) waits on it.
        self.experience_due = asyncio.Event()

    # ------------------------------------------------------------------ sessions
    async def _guard_session(
        self, tx: AsyncManagedTransaction, session_id: str, scope: str, now: datetime, principal: str
    ) -> SessionCallRow:
        """The session must exist, be the principal's, belong to ``scope`` and be open (idle ones
        are closed here)."""
        found = await rows(tx, st.SESSION_FOR_CALL, **self._guard_params(session_id, principal, scope, now))
        return _guarded(found[0] if found else None, session_id, scope)

    def _guard_params(self, session_id: str, principal: str, scope: str, now: datetime) -> GuardParams:
        """The session guard's parameters for a call at ``now`` (idle: untouched for idle_timeout)."""
        return {
            "session_id": session_id,
            "principal": principal,
            "scope": scope,
            "now": now,
            "idle_before": now - timedelta(seconds=self.idle_timeout),
        }

    # ------------------------------------------------------------------ remember
    async def remember(
        self,
        *,
        call_id: str,
        session_id: str,
        scope: str,
        scope_token: str,
        items: list[RememberItem],
        client_name: str | None,
        client_version: str | None,
        principal: str,
        concept_links: list[ConceptLink],
        concepts_version: int,
        now: datetime,
    ) -> list[StoredMemory]:
        """Store claims of one call in one statement (remember_call: guard and write, idempotent
        on ``call_id``); a row per item, in item order. Concurrent calls of other sessions share
        the commit (``Database.run_grouped_write``)."""
        found = await self.db.run_grouped_write(
            st.REMEMBER_CALL,
            session_id,
            **self._guard_params(session_id, principal, scope, now),
            call_id=call_id,
            scope_token=scope_token,
            items=items,
            client_name=client_name,
            client_version=client_version,
            concept_links=concept_links,
            concepts_version=concepts_version,
        )
        _guarded(found[0] if found else None, session_id, scope)
        written = list(found[0]["written"] or [])
        if len(written) != len(items):
            raise RuntimeError(f"remember wrote {len(written)} of {len(items)} items")
        # event ids are numbered in item order (replays read them back in that order too)
        return sorted(written, key=lambda r: int(str(r["event_id"]).removeprefix("evt_")))

    async def session_for_recall(
        self, *, session_id: str, scope: str, now: datetime, principal: str
    ) -> RecallSession:
        """A session's stored task_context, checked as the guard would, without writing: the
        write that follows re-guards under the lock. A session the guard would refuse goes through
        the guard itself, which raises its error (and closes a session found idle)."""
        found = await self.db.run_read(
            st.SESSION_FOR_READ,
            session_id=session_id,
            principal=principal,
            scope=scope,
            idle_before=now - timedelta(seconds=self.idle_timeout),
        )
        row = found[0] if found else None
        if row is None or row["scope"] != scope or row["status"] != "open" or row["expired"]:

            async def work(tx: AsyncManagedTransaction) -> SessionCallRow:
                return await self._guard_session(tx, session_id, scope, now, principal)

            guarded = await self.db.write(work)  # a race the guard let through: search everything
            return RecallSession(dict(json.loads(guarded["task_context"] or "{}")), True, True)
        return RecallSession(
            dict(json.loads(row["task_context"] or "{}")),
            bool(row["has_procedures"]),
            bool(row["has_learned"]),
        )

    async def _merge_context(
        self,
        tx: AsyncManagedTransaction,
        session_id: str,
        guarded: SessionCallRow,
        update: JsonObject | None,
        merge: Callable[[JsonObject, JsonObject], JsonObject] | None,
    ) -> JsonObject:
        """The session's task_context with ``update`` merged in and stored (under the guard's lock)."""
        context: JsonObject = json.loads(guarded["task_context"] or "{}")
        if update and merge is not None:
            context = merge(context, update)
            await rows(tx, st.SET_SESSION_CONTEXT, session_id=session_id, task_context=json.dumps(context))
        return context

    async def close_idle_sessions(self, *, now: datetime, closer: str, limit: int = 500) -> list[str]:
        found = await self.db.run_write(
            st.CLOSE_IDLE_SESSIONS,
            now=now,
            idle_before=now - timedelta(seconds=self.idle_timeout),
            closer=closer,
            limit=limit,
        )
        return [str(r["session_id"]) for r in found]

    # ------------------------------------------------------------------ activation
    async def scope_state(self, scope: str, norm_key: str) -> ScopeState:
        row = (await self.db.run_read(st.SCOPE_STATE, scope=scope, norm_key=norm_key))[0]
        return ScopeState(
            bool(row["has_memories"]),
            bool(row["has_procedures"]),
            bool(row["has_learned"]),
            list(row["variants"]),
        )

    async def continuity_owner(self, continuity_id: str) -> ContinuityOwner | None:
        """The continuity line's scope, principal and client name (None: unknown line)."""
        found = await self.db.run_read(st.CONTINUITY_SCOPE, continuity_id=continuity_id)
        return found[0] if found else None

    async def activate(
        self, session: SessionParams, retrieval: ActivateRetrievalParams
    ) -> ActivatedRow | None:
        """Open the session and freeze its first retrieval: one statement, one round trip
        (activate_session, idempotent on the retrieval id). None (and nothing written) if the
        continuity line was not usable."""
        found = await self.db.run_idempotent_write(st.ACTIVATE_SESSION, **{**session, **retrieval})
        return found[0] if found and found[0]["session_id"] is not None else None

    async def create_retrieval(
        self,
        *,
        session_id: str,
        scope: str,
        now: datetime,
        principal: str,
        context_update: JsonObject | None = None,
        merge: Callable[[JsonObject, JsonObject], JsonObject] | None = None,
        **retrieval: Unpack[RetrievalParams],
    ) -> None:
        """Freeze a recall's catalog for an open session (guarded again under its lock) and merge
        the call's task_context into the session in the same transaction: a failed recall leaves
        the session as it was. Without a task_context to merge, guard and freeze are one statement
        (recall_retrieval, idempotent on the retrieval id)."""
        if not context_update:
            found = await self.db.run_idempotent_write(
                st.RECALL_RETRIEVAL, **self._guard_params(session_id, principal, scope, now), **retrieval
            )
            _guarded(found[0] if found and found[0]["scope"] is not None else None, session_id, scope)
            return

        async def work(tx: AsyncManagedTransaction) -> None:
            row = await self._guard_session(tx, session_id, scope, now, principal)
            await self._merge_context(tx, session_id, row, context_update, merge)
            await rows(
                tx, st.CREATE_RETRIEVAL, session_id=session_id, scope=scope, now=now, principal=principal,
                **retrieval,
            )  # fmt: skip

        await self.db.write(work)

    async def serve_cursor(
        self,
        *,
        cursor_id: str,
        session_id: str,
        scope: str,
        now: datetime,
        principal: str,
        page_of: Callable[[list[str], int, int], list[Page]],
        next_cursor: Callable[[str, int], str],
    ) -> ServedPage:
        """Serve the page a cursor points to: bound to its session and scope, identical on replay."""

        async def work(tx: AsyncManagedTransaction) -> ServedPage:
            cur = await self._cursor_for_call(tx, cursor_id, session_id, scope, principal)
            await self._guard_session(tx, session_id, scope, now, principal)
            ids, pathways = list(cur["catalog_ids"]), list(cur["catalog_pathways"])
            # catalogs frozen before associations carried their reasons have none, and before
            # procedures were paged their procedures were all on page 1
            why = list(cur["catalog_associations"] or [""] * len(ids))
            links = list(cur.get("catalog_links") or [""] * len(ids))
            procedures = list(cur["catalog_procedures"] or [])
            pages = page_of(pathways, int(cur["page_size"]), len(procedures))
            number = int(cur["page"])
            if number > len(pages):
                raise CursorRefused("past_end")
            page = pages[number - 1]
            next_id = next_cursor(cur["retrieval_id"], number + 1) if number < len(pages) else None
            page_memories: list[PageExposure] = [
                {"id": ids[i], "rank": i + 1, "pathway": pathways[i], "association": why[i] or None}
                for i in page.memories
            ]
            page_procedures: list[ProcedureExposure] = [
                {"id": procedures[i], "rank": i + 1} for i in page.procedures
            ]
            await rows(
                tx,
                st.EXPOSE_PAGE,
                retrieval_id=cur["retrieval_id"],
                page=number,
                page_memories=page_memories,
                page_procedures=page_procedures,
                next_cursor_id=next_id,
                now=now,
            )
            return _served_page(cur, pages, number, ids, pathways, (why, links), procedures, next_id)

        return await self.db.write(work)

    async def _cursor_for_call(
        self, tx: AsyncManagedTransaction, cursor_id: str, session_id: str, scope: str, principal: str
    ) -> CursorRow:
        """The principal's cursor, refused unless it pages a catalog of this session and scope."""
        found = await rows(tx, st.CURSOR_FOR_CALL, cursor_id=cursor_id, principal=principal)
        if not found:
            raise CursorRefused("unknown")
        cur = found[0]
        if cur["scope"] != scope:
            raise CursorRefused("other_scope")
        if cur["session_id"] != session_id:
            raise CursorRefused("other_session")
        return cur

    async def catalog_links(self, ids: list[str]) -> list[CatalogLinkRow]:
        """The SIMILAR_TO links with an end among these memories (catalog_links)."""
        return await self.db.run_read(st.CATALOG_LINKS, ids=ids) if ids else []

    async def memories_by_id(self, ids: list[str]) -> list[PageMemoryHome]:
        return await self.db.run_read(st.MEMORIES_FOR_PAGE, ids=ids) if ids else []

    async def promoted(
        self, *, scope: str, kind: str, embeddings: list[list[float]], k: int
    ) -> list[PromotedHit]:
        """Lessons of other scopes whose stage lets them travel into this one (promoted_search)."""
        return await self.db.run_read(st.PROMOTED_SEARCH, scope=scope, kind=kind, embeddings=embeddings, k=k)

    async def evidence_for_memories(self, ids: list[str], limit: int) -> list[EvidenceRow]:
        if not ids:
            return []
        return await self.db.run_read(st.EVIDENCE_FOR_MEMORIES, ids=ids, limit=limit)

    async def search_procedures(
        self, *, scope: str, embeddings: list[list[float]], floor: float, k: int
    ) -> list[ProcedureHit]:
        return await self.db.run_read(
            st.PROCEDURE_SEARCH_FILTERED if self._filtered(self.vector_strategy) else st.PROCEDURE_SEARCH,
            scope=scope,
            embeddings=embeddings,
            floor=floor,
            k=k,
            search_from=search_from(k),
        )

    async def procedure_details(self, ids: list[str]) -> list[ProcedureDetailsRow]:
        return await self.db.run_read(st.PROCEDURE_DETAILS, ids=ids) if ids else []

    # ------------------------------------------------------------------ search
    async def search_direct(
        self, *, scope: str, embeddings: list[list[float]], lucene: str | None, k: int
    ) -> SearchRows:
        """Vector hits per query vector plus BM25 hits, all scope-filtered.

        The two searches are independent reads, so they run at the same time on two pooled
        connections: the call costs the slower of them, not their sum.
        """

        async def fulltext_hits() -> list[FulltextHit]:
            if lucene is None:
                return []
            found = await self.db.run_read(
                st.FULLTEXT_SEARCH, scope=scope, lucene=lucene, k=k, embeddings=embeddings
            )
            return hits(found)

        (vector, vector_truncated), fulltext = await asyncio.gather(
            self._vector_search(scope, embeddings, k), fulltext_hits()
        )
        return SearchRows(vector, fulltext, vector_truncated or len(fulltext) >= k)

    async def nearest_memories(
        self, *, scope: str, embeddings: list[list[float]], k: int
    ) -> list[list[VectorHit]]:
        """Per vector, the ``k`` active memories of the scope nearest to it (the vector search
        retrieval runs): what a new claim is compared with for duplicates and updates."""
        found, _ = await self._vector_search(scope, embeddings, k)
        per: list[list[VectorHit]] = [[] for _ in embeddings]
        for hit in found:
            per[int(hit["qi"])].append(hit)
        return per

    async def _vector_search(
        self, scope: str, embeddings: list[list[float]], k: int
    ) -> tuple[list[VectorHit], bool]:
        strategy = self.vector_strategy
        if self._filtered(strategy):  # one statement: an auto-commit read
            searched = await self.db.run_read(
                st.VECTOR_SEARCH_FILTERED,
                scope=scope,
                embeddings=embeddings,
                k=k,
                search_from=search_from(k),
            )
            found = hits(searched)
            return found, _any_query_full(found, len(embeddings), k)
        # 5.26: a scope up to EXACT_SCAN_MAX is scanned in one read, which also sizes a larger one
        scan_max = {"auto": EXACT_SCAN_MAX, "scan": SCAN_ALL}.get(strategy, -1)
        scanned = await self.db.run_read(
            st.VECTOR_SCAN_SCOPE, scope=scope, embeddings=embeddings, k=k, scan_max=scan_max
        )
        sized = scanned[0]
        if int(sized["live"]) <= scan_max:
            found = hits([sized])
            return found, _any_query_full(found, len(embeddings), k)
        scope_count = sized["scope_count"]
        assert scope_count is not None  # counted for a scope too large to scan
        return await self._overfetch(scope, embeddings, k, int(scope_count), int(sized["total_count"]))

    def _filtered(self, strategy: VectorStrategy) -> bool:
        server = self.db.server
        return strategy == "filtered" or (
            strategy == "auto" and server is not None and server.vector_filter_in_index
        )

    async def _overfetch(
        self, scope: str, embeddings: list[list[float]], k: int, scope_count: int, total: int
    ) -> tuple[list[VectorHit], bool]:
        """Neo4j 5.26, a scope too large to scan: nearest neighbours from the global index, kept
        if they are the scope's, widened until every query vector has k or the index is read.
        Each attempt is an auto-commit read: the sizes only choose how far to fetch."""
        # Expect k hits of this scope among k * total / scope_count neighbours; twice that.
        fetch = min(total, max(k, math.ceil(2 * k * total / max(scope_count, 1))))
        while True:
            fetched = await self.db.run_read(
                st.VECTOR_SEARCH_OVERFETCH, scope=scope, embeddings=embeddings, k=k, fetch=fetch
            )
            found = hits(fetched)
            short = _any_query_short(found, len(embeddings), k)
            exhausted = fetch >= total
            if not short or exhausted or fetch >= OVERFETCH_MAX:
                # truncated: a query vector filled its k (more may exist) or we stopped early
                return found, _any_query_full(found, len(embeddings), k) or (short and not exhausted)
            fetch = min(total, OVERFETCH_MAX, fetch * 4)

    async def candidate_context(
        self,
        *,
        scope: str,
        context_ids: list[str],
        pool_ids: list[str],
        associate_ids: list[str],
        seeds: list[WalkSeed],
        embeddings: list[list[float]],
        now: datetime,
        walk: WalkLimits,
        min_strength: float,
        half_life_days: float,
    ) -> CandidateContext:
        """Episodic neighbours of the best candidates and learned associations of the candidates
        (candidate_context), and the walk over concepts from the seeds (concept_walk): two
        independent reads at the same time, each on its own pooled connection."""

        async def around() -> list[CandidateContextRow]:
            if not (context_ids or associate_ids):
                return []
            return await self.db.run_read(
                st.CANDIDATE_CONTEXT, scope=scope, context_ids=context_ids, associate_ids=associate_ids,
                embeddings=embeddings, now=now, min_strength=min_strength, half_life_days=half_life_days,
            )  # fmt: skip

        async def walked() -> list[ConceptWalkRow]:
            if not seeds:
                return []
            return await self.db.run_read(
                st.CONCEPT_WALK, scope=scope, seeds=seeds, pool_ids=pool_ids, embeddings=embeddings,
                concept_fanout=walk.concept_fanout, walk_k=walk.walk_k, outside_k=walk.outside_k,
                hub_share=walk.hub_share, hub_max=walk.hub_max,
            )  # fmt: skip

        context, reached = await asyncio.gather(around(), walked())
        row: CandidateContextRow = context[0] if context else {"neighbours": [], "associations": []}
        return CandidateContext(
            list(row["neighbours"]),
            list(reached[0]["walked"]) if reached else [],
            list(row["associations"]),
        )

    async def experience(
        self,
        *,
        scope: str,
        embeddings: list[list[float]],
        min_similarity: float,
        irrelevant_at: float,
        k: int,
    ) -> list[ExperienceRow]:
        """The lessons of the past retrievals of this scope most similar to the cues (used marks;
        irrelevant marks of questions at least ``irrelevant_at`` similar): through the retrieval
        vector index where the server filters inside it, else a scan."""
        params = {
            "scope": scope,
            "embeddings": embeddings,
            "min_similarity": min_similarity,
            "irrelevant_at": irrelevant_at,
            "k": k,
        }
        if self._filtered(self.vector_strategy):
            search_k = EXPERIENCE_SEARCH_PER_K * k
            return await self.db.run_read(
                st.EXPERIENCE_SEARCH, **params, search_k=search_k, search_from=search_from(search_k)
            )
        return await self.db.run_read(st.EXPERIENCE, **params, window=EXPERIENCE_WINDOW)

    # ------------------------------------------------------------------ feedback
    async def record_feedback(
        self,
        *,
        retrieval_id: str,
        named_memory_ids: list[str],
        named_procedure_ids: list[str],
        decide: Callable[[FeedbackContextRow | None], FeedbackDecision],
        retrieval_quality: str | None,
        missing: list[str] | None,
        client_name: str | None,
        client_version: str | None,
        principal: str,
        now: datetime,
    ) -> FeedbackWrite:
        """One transaction: read what the retrieval exposed and which named targets exist
        (``feedback_context``), let ``decide`` judge the entries against it (pure; it may raise to
        refuse the call), then write the ledger events, retirements, recomputed learning and
        coverage. Checking and writing together means the check holds for what is written."""

        async def work(tx: AsyncManagedTransaction) -> FeedbackWrite:
            found = await rows(
                tx, st.FEEDBACK_CONTEXT, retrieval_id=retrieval_id, principal=principal,
                memory_ids=named_memory_ids, procedure_ids=named_procedure_ids,
            )  # fmt: skip
            decision = decide(found[0] if found else None)
            return await self._write_feedback(
                tx, retrieval_id, decision, retrieval_quality, missing, client_name, client_version, now
            )

        written = await self.db.write(work)
        if written.experience_pending:
            self.experience_due.set()
        return written

    async def index_pending_experience(self, limit: int) -> int:
        """Moves up to ``limit`` retrievals that feedback marked experience_pending into the
        experience vector index, in one transaction; returns how many it took off the list (fewer
        than ``limit``: none are left). Idempotent, so one auto-commit statement."""
        found = await self.db.run_idempotent_write(st.INDEX_PENDING_EXPERIENCE, limit=limit)
        return int(found[0]["moved"]) if found else 0

    async def _write_feedback(
        self,
        tx: AsyncManagedTransaction,
        retrieval_id: str,
        decision: FeedbackDecision,
        retrieval_quality: str | None,
        missing: list[str] | None,
        client_name: str | None,
        client_version: str | None,
        now: datetime,
    ) -> FeedbackWrite:
        events, retire = decision.events, decision.retire
        # learning is recomputed only where an accepted assessment can have changed it
        accepted = [e for e in events if e["properties"]["status"] == "accepted"]
        memory_ids = sorted({e["target_id"] for e in accepted if e["target_kind"] == "memory"})
        procedure_ids = sorted({e["target_id"] for e in accepted if e["target_kind"] == "procedure"})

        written = await rows(
            tx, st.WRITE_FEEDBACK, retrieval_id=retrieval_id, events=events, retire=retire,
            memory_ids=memory_ids, procedure_ids=procedure_ids, now=now,
            client_name=client_name, client_version=client_version, retrieval_quality=retrieval_quality,
            missing=missing, declare_complete=decision.declare_complete,
        )  # fmt: skip
        row = written[0]
        return FeedbackWrite(
            list(row["recorded"]),
            list(row["retired"]),
            list(row["learning"]),
            row["coverage"].copy(),
            bool(row["experience_pending"]),
        )

    # ------------------------------------------------------------------ commit
    async def session_for_commit(self, session_id: str, principal: str) -> SessionForCommitRow | None:
        found = await self.db.run_read(st.SESSION_FOR_COMMIT, session_id=session_id, principal=principal)
        return found[0] if found else None

    async def commit(
        self,
        *,
        session_id: str,
        trajectory: list[TrajectoryStep],
        episode: EpisodeParams,
        procedure: ProcedureParams | None,
        close: CloseParams,
        client_name: str | None,
        client_version: str | None,
        principal: str,
        now: datetime,
    ) -> CommitOutcome:
        """Preflight and close in one statement (commit_session): with feedback outstanding nothing
        is written. ``was_open`` tells whether this call closed the session (read under its lock)."""

        async def work(tx: AsyncManagedTransaction) -> CommitOutcome:
            found = await rows(
                tx, st.COMMIT_SESSION, session_id=session_id, principal=principal,
                entries=trajectory, episode=episode, procedure=procedure, close=close,
                client_name=client_name, client_version=client_version, now=now,
            )  # fmt: skip
            if not found:
                raise UnknownSession(session_id)
            row = found[0]
            if row["outstanding"]:
                # FeedbackOutstanding (graph/errors.py) takes plain dicts
                raise FeedbackOutstanding([dict(o) for o in row["outstanding"]])
            formed = row["formed"]
            assert formed is not None  # nothing was outstanding, so the writes ran
            return CommitOutcome(
                episodes_formed=int(formed),
                episode_id=row["episode_id"],
                procedure_id=row["procedure_id"],
                was_open=row["status_before"] == "open",
            )

        return await self.db.write(work)


def _guarded(row: G | None, session_id: str, scope: str) -> G:
    """The session row of a guard (touch_session), if the call may use the session."""
    if row is None:
        raise UnknownSession(session_id, opening=True)
    if row["scope"] != scope:
        raise SessionScopeMismatch(session_id)
    if row["status"] != "open":
        raise SessionEnded(session_id)
    return row


def _served_page(
    cur: CursorRow,
    pages: list[Page],
    number: int,
    ids: list[str],
    pathways: list[str],
    notes: tuple[list[str], list[str]],
    procedures: list[str],
    next_id: str | None,
) -> ServedPage:
    """Page ``number`` as served: its items, the items of the pages after it and the frozen
    catalog's record."""
    page = pages[number - 1]
    later = pages[number:]
    return ServedPage(
        retrieval_id=cur["retrieval_id"],
        page=number,
        page_ids=[ids[i] for i in page.memories],
        rest_ids=[ids[i] for p in later for i in p.memories],
        catalog_ids=ids,
        catalog_pathways=pathways,
        catalog_associations=notes[0],
        catalog_links=notes[1],
        page_procedure_ids=[procedures[i] for i in page.procedures],
        rest_procedure_ids=[procedures[i] for p in later for i in p.procedures],
        query=str(cur["query"] or ""),
        next_cursor_id=next_id,
        relevant_total=int(cur["relevant_total"]),
        catalog_truncated=bool(cur["catalog_truncated"]),
        policy_version=str(cur["policy_version"]),
    )


def hits(found: Sequence[HitsRow[H]]) -> list[H]:
    """The hits of a memory search: its single row's list (see retrieval.cypher)."""
    return list(found[0]["hits"]) if found else []


def _per_query_counts(found: Sequence[VectorHit], queries: int) -> list[int]:
    counts = [0] * queries
    for row in found:
        counts[int(row["qi"])] += 1
    return counts


def _any_query_full(found: Sequence[VectorHit], queries: int, k: int) -> bool:
    return any(count >= k for count in _per_query_counts(found, queries))


def _any_query_short(found: Sequence[VectorHit], queries: int, k: int) -> bool:
    return any(count < k for count in _per_query_counts(found, queries))
