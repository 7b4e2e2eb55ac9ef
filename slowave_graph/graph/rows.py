"""Typed rows of the named Cypher statements (``cypher/*.cypher``), and the structured parameters
the repository sends them.

Every row is a ``TypedDict``: the database layer builds plain dicts (``records.as_dicts``) and the
repository hands them on unchanged, so the types cost nothing per row — a search's hits are read by
key in ranking's loops, and a conversion per row would be paid on every retrieval. The keys are
exactly the statement's RETURN columns (or the keys of the maps it collects into one); each
docstring names the statement. Values are as the Neo4j driver decodes them: temporal properties
come as ``neo4j.time.DateTime``, epoch seconds as ``int``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, NotRequired, TypeAlias, TypedDict, TypeVar

from neo4j.time import DateTime

# A task_context or a procedure's context: a JSON object an agent sends, free-form by contract
# (``contract.common.TaskContext`` checks its keys, depth and size, never its fields), so its
# values stay Any.
JsonObject: TypeAlias = dict[str, Any]

H = TypeVar("H")


class NoRow(TypedDict):
    """The row of a statement that returns nothing (set_session_context)."""


# ------------------------------------------------------------------ sessions (session.cypher)
class GuardRow(TypedDict):
    """The session guard's columns (touch_session): null when a statement's guard found no session."""

    scope: str | None
    status: str | None


class SessionCallRow(GuardRow):
    """session_for_call: the guarded session and its stored task_context (JSON text)."""

    task_context: str | None


class SessionReadRow(TypedDict):
    """session_for_read: recall's read-only look at its session and which searches can find something."""

    scope: str
    status: str
    task_context: str | None
    expired: bool | None
    has_procedures: bool
    has_learned: bool


class ScopeStateRow(TypedDict):
    """scope_state: what a scope holds before activate searches it, and its variant spellings."""

    has_memories: bool
    has_procedures: bool
    has_learned: bool
    variants: list[str]


class ContinuityOwner(TypedDict):
    """continuity_scope: a continuity line's scope and owner (null owner: a line from before owners)."""

    scope: str
    client_name: str | None
    principal: str | None


class ActivatedRow(TypedDict):
    """activate_session: the opened (or replayed) session and its line; null: line not usable."""

    session_id: str | None
    continuity_id: str | None


class ClosedSessionRow(TypedDict):
    """close_idle_sessions: one row per session the reaper closed."""

    session_id: str


# ------------------------------------------------------------------ remember (memory.cypher)
class StoredMemory(TypedDict):
    """An item of remember_call's ``written``: the memory an item created or matched, and its event."""

    memory_id: str
    created: bool
    type: str
    event_id: str


class RememberCallRow(GuardRow):
    """remember_call: the guard's columns and ``written`` (null when the guard refused)."""

    written: list[StoredMemory] | None


# ------------------------------------------------------------------ retrieval (retrieval.cypher)
class RecallRetrievalRow(GuardRow):
    """recall_retrieval: the guard's columns and the frozen retrieval's id (null when refused)."""

    retrieval_id: str | None


class RetrievalIdRow(TypedDict):
    """create_retrieval, expose_page: the retrieval written to (the repository needs no more)."""

    retrieval_id: str


class CursorRow(TypedDict):
    """cursor_for_call: a continuation cursor and the frozen catalog it pages through."""

    session_id: str
    scope: str
    page: int
    retrieval_id: str
    catalog_ids: list[str]
    catalog_pathways: list[str]
    catalog_associations: list[str] | None  # null: frozen before associations kept their reasons
    catalog_links: list[str] | None  # null: nothing folded (or frozen before folding)
    catalog_procedures: list[str] | None  # null: frozen before procedures were paged
    page_size: int
    relevant_total: int
    catalog_truncated: bool
    policy_version: str
    query: str | None


class PageMemory(TypedDict):
    """memories_for_page: a catalog memory with what a page and the size hint show."""

    id: str
    content: str
    type: str
    integration: str | None
    integration_version: str | None


class PageMemoryHome(PageMemory):
    """memories_for_page also says where a memory lives and how far it travels (a lesson from
    another scope is marked so on every page; services/generalisation.py)."""

    scope: str
    stage: int | None


class MemoryFields(PageMemory):
    """The memory columns every search below returns (PageMemory's, and salience)."""

    salience: float


class SearchHit(MemoryFields):
    """The columns the memory searches share (vector_search_*, vector_scan_scope, fulltext_search)."""

    occurred_at: int | None  # epoch seconds: when it happened, else when it was recorded


class VectorHit(SearchHit):
    """A hit of vector_search_filtered, vector_search_overfetch or vector_scan_scope (per cue, memory)."""

    qi: int  # the query vector (cue) it answers
    cosine: float


class FulltextHit(SearchHit):
    """A hit of fulltext_search: its BM25 score and its cosine to every cue."""

    bm25: float
    similarities: list[float]


class HitsRow(TypedDict, Generic[H]):
    """The one row of a memory search (vector_search_*, fulltext_search): its hits as one list."""

    hits: list[H]


class ScopeScanRow(HitsRow[VectorHit]):
    """vector_scan_scope: the scope's exact top-k (or none) and the sizes an over-fetch needs."""

    live: int
    scope_count: int | None  # only for a scope too large to scan
    total_count: int


class Neighbour(TypedDict):
    """An item of candidate_context's ``neighbours``: a NEXT neighbour of a candidate, best cosine."""

    id: str
    neighbour: str
    cosine: float


class AssociationLink(TypedDict):
    """A link of candidate_context's associations: the seed candidate and the decayed strength."""

    seed: str
    strength: float


class AssociatedMemory(MemoryFields):
    """An item of candidate_context's ``associations``: a memory linked to candidates by co-use."""

    links: list[AssociationLink]


class CandidateContextRow(TypedDict):
    """candidate_context: the candidates' episodic neighbours and learned associations."""

    neighbours: list[Neighbour]
    associations: list[AssociatedMemory]


class WalkPath(TypedDict):
    """A path of concept_walk: a concept a walked memory was reached through, and from which seeds."""

    key: str
    name: str
    share: float
    seeds: list[str]


class WalkedMemory(TypedDict):
    """An item of concept_walk's ``walked``; one outside the pool is described in full (NotRequired)."""

    id: str
    walk: float
    paths: list[WalkPath]
    similarities: NotRequired[list[float]]
    content: NotRequired[str]
    type: NotRequired[str]
    salience: NotRequired[float]
    integration: NotRequired[str | None]
    integration_version: NotRequired[str | None]


class ConceptWalkRow(TypedDict):
    """concept_walk: the memories the walk over concepts reached."""

    walked: list[WalkedMemory]


class ExperienceRow(MemoryFields):
    """experience / experience_search: an effective assessment from a similar past question."""

    similarity: float  # of the past question to the cues
    assessment: str
    effect: str | None
    similarities: list[float]  # of the memory to each cue


class EvidenceRow(TypedDict):
    """evidence_for_memories: a source record (event or episode) behind a page's memories."""

    id: str
    is_episode: bool
    recorded_at: DateTime | None
    occurred_at: DateTime | None
    content: str | None


class ProcedureHit(TypedDict):
    """procedure_search / procedure_search_filtered: an applicable procedure and its record."""

    id: str
    cosine: float
    similarities: list[float]
    goal: str
    summary: str
    outcome: str | None
    outcome_summary: str | None
    caveats: list[str] | None
    helped: int
    harmed: int


class TalliesRow(TypedDict):
    """procedure_details' ``tallies``: the use/effect counts of a procedure's effective assessments."""

    used: int
    not_used: int
    unassessable: int
    helped: int
    no_effect: int
    harmed: int
    unknown: int


class ContributionRow(TypedDict):
    """An item of procedure_details' ``contributions``: a recent observed use of the procedure."""

    effect: str
    contribution: str | None
    outcome: str | None
    outcome_summary: str | None
    occurred_at: DateTime | None


class ProcedureDetailsRow(TypedDict):
    """procedure_details: a full procedure for recall."""

    id: str
    goal: str
    summary: str
    context: str | None  # JSON text
    steps: list[str] | None
    caveats: list[str] | None
    outcome: str | None
    outcome_summary: str | None
    created_at: DateTime | None
    tallies: TalliesRow
    contributions: list[ContributionRow]


# ------------------------------------------------------------------ feedback (feedback.cypher)
class NamedMemory(TypedDict):
    """An item of feedback_context's ``memories``: a memory the call names, found."""

    id: str
    scope: str
    status: str


class NamedProcedure(TypedDict):
    """An item of feedback_context's ``procedures``: a procedure the call names, found."""

    id: str
    scope: str


class FeedbackContextRow(TypedDict):
    """feedback_context: what a retrieval exposed, and which named targets exist."""

    scope: str
    session_id: str | None
    exposed_memories: list[str]
    exposed_procedures: list[str]
    memories: list[NamedMemory]
    procedures: list[NamedProcedure]


class RecordedEvent(TypedDict):
    """An item of write_feedback's ``recorded``: a ledger event written."""

    index: int  # of the entry in $events
    event_id: str
    status: str


class LearningChange(TypedDict):
    """An item of write_feedback's ``learning``: a memory's salience before and after."""

    id: str
    before: float | None
    after: float


class CoverageRow(TypedDict):
    """write_feedback's ``coverage``: what the retrieval still lacks, and whether it is complete."""

    memory_ids: list[str]
    procedure_ids: list[str]
    complete: bool


class WriteFeedbackRow(TypedDict):
    """write_feedback: what one feedback call wrote."""

    recorded: list[RecordedEvent]
    retired: list[str]
    learning: list[LearningChange]
    coverage: CoverageRow
    experience_pending: bool


class MovedRow(TypedDict):
    """index_pending_experience: how many retrievals it moved into the experience index."""

    moved: int


# ------------------------------------------------------------------ commit (commit.cypher)
class SessionForCommitRow(TypedDict):
    """session_for_commit: the session a commit names, open or ended."""

    scope: str
    status: str
    end_reason: str | None
    task: str | None
    has_episode: bool


class OutstandingRow(TypedDict):
    """An item of commit_session's ``outstanding``: a retrieval whose feedback is incomplete."""

    retrieval_id: str
    memory_ids: list[str]
    procedure_ids: list[str]
    coverage_declared_complete: bool


class CommitSessionRow(TypedDict):
    """commit_session: the status under the lock, the preflight, and what the writes produced."""

    status_before: str
    outstanding: list[OutstandingRow]
    episode_id: str | None  # null when outstanding feedback stopped the writes
    formed: int | None
    procedure_id: str | None


# ------------------------------------------------------------------ parameters
class GuardParams(TypedDict):
    """touch_session's parameters, in every statement that guards a session (session_for_call,
    remember_call, recall_retrieval): the call's session, principal and scope, and when a session
    last touched before ``idle_before`` counts as idle."""

    session_id: str
    principal: str
    scope: str
    now: datetime
    idle_before: datetime


class SimilarLink(TypedDict):
    """A claim's near-duplicate or update (link_similar): a stored memory by id, or an earlier
    claim of the same call by its position."""

    target_id: str | None
    target_position: int | None
    kind: str  # duplicate | update
    score: float  # the cosine of the two claims


class MemoryClaim(TypedDict):
    """A claim as remember_call ($items) and bulk_remember_memories store it (remember.memory_row)."""

    content: str
    type: str
    occurred_at: datetime | None
    active_key: str
    content_hash: str
    embedding: list[float]
    links: list[SimilarLink]
    similar_version: int | None  # consolidation.SIMILAR_VERSION when judged at this write, else None


class RememberItem(MemoryClaim):
    """An item of remember_call's $items: a claim and its position in the call."""

    index: int


class ConceptMention(TypedDict):
    """A mention in link_concepts' $concept_links: the item (by position) and its weight."""

    position: int
    weight: float


class ConceptLink(TypedDict):
    """A row of link_concepts' $concept_links: a concept of a scope and the items that mention it."""

    scope: str
    key: str
    name: str
    kind: str
    mentions: list[ConceptMention]


class WalkSeed(TypedDict):
    """An item of concept_walk's $seeds: a best direct candidate and its weight (weights sum to 1)."""

    id: str
    weight: float


class PageExposure(TypedDict):
    """An item of $page_memories (freeze_retrieval, expose_page): a memory shown, where and why."""

    id: str
    rank: int
    pathway: str
    association: str | None  # why an associated hit came (JSON), null for a direct one


class ProcedureExposure(TypedDict):
    """An item of $page_procedures (freeze_retrieval, expose_page): a procedure shown, and where."""

    id: str
    rank: int


class FrozenCatalog(TypedDict):
    """The catalog parameters of freeze_retrieval, page 1 served (retrieval.Catalog.freeze)."""

    retrieval_id: str
    catalog_ids: list[str]
    catalog_pathways: list[str]
    catalog_associations: list[str] | None  # None: no associated hit
    catalog_links: list[str] | None  # per item: what folding noted (JSON), "" for none; None: nothing
    catalog_procedures: list[str]
    relevant_total: int
    catalog_truncated: bool
    page_size: int
    page_memories: list[PageExposure]
    page_procedures: list[ProcedureExposure]
    cursor_id: str | None  # page 2's, when there is one
    query_embedding: list[float] | None


class RetrievalParams(FrozenCatalog):
    """freeze_retrieval's parameters of a retrieval (create_retrieval, recall_retrieval)."""

    kind: str  # activate or recall
    query: str
    policy_version: str


class ActivateRetrievalParams(RetrievalParams):
    """freeze_retrieval's parameters within activate_session."""

    scope: str
    now: datetime


class SessionParams(TypedDict):
    """start_session's parameters within activate_session."""

    scope: str
    scope_kind: str
    scope_name: str
    norm_key: str
    session_id: str
    principal: str
    continuity_id: str | None
    new_continuity_id: str
    task: str
    initial_goal: str
    task_context: str | None  # JSON text
    semantic_context: str | None
    client_name: str | None
    client_version: str | None
    now: datetime


class FeedbackEvent(TypedDict):
    """An item of write_feedback's $events: one ledger event."""

    index: int
    target_kind: str  # memory or procedure
    target_id: str
    # set whole onto the ASSESSED relationship: the entry's fields that were given, and its status
    properties: dict[str, str]


class RetireItem(TypedDict):
    """An item of write_feedback's $retire: a memory a stale assessment retires."""

    index: int  # of its event in $events
    memory_id: str
    stale_reason: str | None
    reason: str | None
    replacement_id: str | None


class TrajectoryStep(TypedDict):
    """An item of commit_writes' $entries: a task step of the trajectory, numbered."""

    kind: str
    summary: str
    status: str
    position: int


class EpisodeParams(TypedDict):
    """commit_writes' $episode: the episode's text after its first line, and the outcome."""

    details: str
    outcome: str


class ProcedureParams(TypedDict):
    """commit_writes' $procedure: the procedure a commit records."""

    goal: str
    summary: str
    context: str  # JSON text
    context_text: str
    steps: list[str]
    steps_text: str
    caveats: list[str]
    deduplication_key: str | None
    outcome: str
    outcome_summary: str
    embedding: list[float]
    scope_token: str
    verification_status: str


class CloseParams(TypedDict):
    """commit_writes' $close: the session's outcome and verification."""

    final_goal: str
    outcome: str
    outcome_summary: str
    verification_status: str
    verification_summary: str
    verification_refs: list[str]


class SimilarEnd(TypedDict):
    """An end of a catalog_links link: what folding and a page need of the memory."""

    id: str
    content: str
    type: str
    created_at: int | None
    integration: str | None
    integration_version: str | None


class PromotedHit(TypedDict):
    """promoted_search: a lesson of another scope that may travel here, with its cosine per cue."""

    id: str
    scope: str
    stage: int
    content: str
    type: str
    salience: float | None
    integration: str | None
    integration_version: str | None
    occurred_at: int | None
    cosines: list[dict[str, float]]  # {qi, cosine}


class CatalogLinkRow(TypedDict):
    """catalog_links: a SIMILAR_TO link with an end in the catalog (newer repeats or updates older)."""

    newer: str
    older: str
    kind: str
    ends: list[SimilarEnd]
