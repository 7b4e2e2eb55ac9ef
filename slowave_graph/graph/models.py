"""neomodel models of the memory graph (docs/architecture.md) — typed object access for tests and
notebooks (``await Memory.nodes.get(uid="sch_1")``, ``await memory.derived_from.all()``).
neomodel reserves the attribute name ``id``, so the ``id`` property is mapped to ``uid``.

The schema itself is created from ``cypher/schema.cypher`` (it needs features neomodel cannot
express: composite indexes, Cypher 25 filtered vector indexes, multi-property full-text indexes).
Constraint and index names follow neomodel's convention, and a test runs neomodel's
``install_all_labels`` over the created schema to prove the two agree (it must add nothing).
The hot paths do not go through these classes; they run the named Cypher in ``cypher/``.
"""

from __future__ import annotations

from neomodel import (
    ArrayProperty,
    AsyncRelationshipTo,
    AsyncStructuredNode,
    AsyncStructuredRel,
    DateTimeNeo4jFormatProperty,
    FloatProperty,
    IntegerProperty,
    StringProperty,
)


class DerivedFrom(AsyncStructuredRel):
    """(:Memory|:Procedure)-[:DERIVED_FROM]->(:Event|:Episode): provenance."""


class Supersedes(AsyncStructuredRel):
    reason = StringProperty()
    at = DateTimeNeo4jFormatProperty()
    feedback_event_id = StringProperty()  # an agent's stale + superseded feedback
    correction_id = StringProperty()  # or a person's correction (Correction)
    actor = StringProperty()


class Associated(AsyncStructuredRel):
    weight = FloatProperty()
    updated_at = DateTimeNeo4jFormatProperty()


class Exposed(AsyncStructuredRel):
    rank = IntegerProperty()
    pathway = StringProperty()
    association = StringProperty()  # JSON: why an associated hit came
    page = IntegerProperty()
    at = DateTimeNeo4jFormatProperty()


class Mentions(AsyncStructuredRel):
    """(:Memory)-[:MENTIONS]->(:Concept): what a memory is about (services/concepts.py)."""

    weight = FloatProperty()


class Scope(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    kind = StringProperty()
    name = StringProperty()
    norm_key = StringProperty(index=True)
    active_memories = IntegerProperty()  # the N of the concepts' weights (memory.cypher)
    created_at = DateTimeNeo4jFormatProperty()


class Event(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    type = StringProperty()
    content = StringProperty()
    memory_type = StringProperty()
    scope = StringProperty()
    session_id = StringProperty()
    recorded_at = DateTimeNeo4jFormatProperty()
    occurred_at = DateTimeNeo4jFormatProperty()
    client_name = StringProperty()
    client_version = StringProperty()
    call_id = StringProperty()  # the remember call (or import batch) that recorded it


class Episode(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    scope = StringProperty()
    session_id = StringProperty()
    content = StringProperty()
    recorded_at = DateTimeNeo4jFormatProperty()


class Concept(AsyncStructuredNode):
    """A thing memories of one scope talk about; unique per (scope, key) — a composite constraint
    that schema.cypher creates (neomodel declares single-property ones only)."""

    scope = StringProperty()
    key = StringProperty()
    name = StringProperty()
    kind = StringProperty()  # entity | term
    df = IntegerProperty()  # active memories that mention it
    created_at = DateTimeNeo4jFormatProperty()

    in_scope = AsyncRelationshipTo(Scope, "IN_SCOPE")


class Memory(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, db_property="id")
    active_key = StringProperty(unique_index=True)
    content = StringProperty()
    type = StringProperty()
    status = StringProperty()
    scope = StringProperty()
    scope_token = StringProperty()
    salience = FloatProperty()
    confidence = FloatProperty()
    embedding = ArrayProperty(FloatProperty())
    content_hash = StringProperty()
    reinforced_count = IntegerProperty()
    origin_event_id = StringProperty()
    integration = StringProperty()
    integration_version = StringProperty()
    created_at = DateTimeNeo4jFormatProperty()
    occurred_at = DateTimeNeo4jFormatProperty()
    last_reinforced_at = DateTimeNeo4jFormatProperty()
    concepts_version = IntegerProperty()  # the extractor that linked its concepts
    stage = IntegerProperty(index=True)  # a lesson's generalisation stage (1-3), else absent
    similar_version = IntegerProperty()  # the judgement that linked its SIMILAR_TO (null: not yet)

    derived_from = AsyncRelationshipTo(Event, "DERIVED_FROM", model=DerivedFrom)
    mentions = AsyncRelationshipTo(Concept, "MENTIONS", model=Mentions)
    in_scope = AsyncRelationshipTo(Scope, "IN_SCOPE")
    supersedes = AsyncRelationshipTo("Memory", "SUPERSEDES", model=Supersedes)
    associated = AsyncRelationshipTo("Memory", "ASSOCIATED", model=Associated)


class Procedure(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    scope = StringProperty()
    goal = StringProperty()
    summary = StringProperty()
    outcome = StringProperty()
    outcome_summary = StringProperty()
    created_at = DateTimeNeo4jFormatProperty()


class Continuity(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    scope = StringProperty()
    created_at = DateTimeNeo4jFormatProperty()


class Session(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    scope = StringProperty()
    status = StringProperty()
    task = StringProperty()
    initial_goal = StringProperty()
    task_context = StringProperty()  # JSON text: Neo4j properties cannot hold maps
    semantic_context = StringProperty()
    client_name = StringProperty()
    client_version = StringProperty()
    outcome = StringProperty()
    started_at = DateTimeNeo4jFormatProperty()
    last_seen_at = DateTimeNeo4jFormatProperty()
    ended_at = DateTimeNeo4jFormatProperty()

    in_scope = AsyncRelationshipTo(Scope, "IN_SCOPE")
    continues = AsyncRelationshipTo(Continuity, "CONTINUES")
    recorded = AsyncRelationshipTo(Event, "RECORDED")
    retrieved = AsyncRelationshipTo("Retrieval", "RETRIEVED")


class Retrieval(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    kind = StringProperty()
    query = StringProperty()
    policy_version = StringProperty()
    scope = StringProperty()
    session_id = StringProperty()
    page_size = IntegerProperty()
    catalog_ids = ArrayProperty(StringProperty())
    catalog_pathways = ArrayProperty(StringProperty())
    catalog_associations = ArrayProperty(StringProperty())
    catalog_procedures = ArrayProperty(StringProperty())
    relevant_total = IntegerProperty()
    pages_served = IntegerProperty()
    created_at = DateTimeNeo4jFormatProperty()

    exposed = AsyncRelationshipTo(Memory, "EXPOSED", model=Exposed)


class Cursor(AsyncStructuredNode):
    uid = StringProperty(unique_index=True, required=True, db_property="id")
    retrieval_id = StringProperty()
    session_id = StringProperty()
    scope = StringProperty()
    page = IntegerProperty()
    created_at = DateTimeNeo4jFormatProperty()


class Correction(AsyncStructuredNode):
    """A person's suppress, restore or supersede of a memory (cypher/corrections.cypher)."""

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    action = StringProperty()
    memory_id = StringProperty()
    scope = StringProperty()
    from_status = StringProperty()
    to_status = StringProperty()
    replacement_id = StringProperty()
    reason = StringProperty()
    actor = StringProperty()
    host = StringProperty()
    version = StringProperty()
    at = DateTimeNeo4jFormatProperty()

    corrected = AsyncRelationshipTo(Memory, "CORRECTED")
    in_scope = AsyncRelationshipTo(Scope, "IN_SCOPE")


class Counter(AsyncStructuredNode):
    name = StringProperty(unique_index=True, required=True)
    value = IntegerProperty()


class EmbeddingSpace(AsyncStructuredNode):
    name = StringProperty(unique_index=True, required=True)
    model = StringProperty()
    dimension = IntegerProperty()
    created_at = DateTimeNeo4jFormatProperty()


class MaintenanceLease(AsyncStructuredNode):
    """Who runs the maintenance pass now (operator/maintenance.py): one pass at a time per database."""

    name = StringProperty(unique_index=True, required=True)
    holder = StringProperty()
    taken_at = DateTimeNeo4jFormatProperty()
    expires_at = DateTimeNeo4jFormatProperty()
