// Writing memories.

// name: remember_call
// slowave_remember's whole write in one auto-commit statement (one round trip instead of BEGIN,
// the guard as a statement of its own, the write and COMMIT; docs/performance.md, "Design choices,
// with their measured effect"): the session guard (touch_session), then, if the session is this
// scope's and open, the claims.
// Each item gets its own Event (provenance: who said what, when) and either a new Memory or —
// when an active memory with the same normalised text already exists in the scope — that memory,
// reinforced ("matched"). MERGE on the unique active_key serialises concurrent duplicates (also
// within one batch).
// Ids come in blocks: each counter is bumped once per statement, under its write lock (the
// SET reads after locking), and numbers are handed out by position — so no id is given twice
// and sch_ numbers move only for memories actually created.
// Idempotent on $call_id: the session keeps the ids of the last 8 remember calls it stored (a
// replay may come after other calls of the same session) and the events carry theirs, so a replay
// of a call (a retry after a connection lost mid-commit) writes nothing and returns what the first
// attempt stored, read back from its events.
// One row: the session's scope and status (the caller turns a refusal into its error; a refused
// call writes nothing but the guard's lazy close of a session found idle) and `written`, one map
// per item in item order (null when refused); no row for an unknown session.
// include: touch_session
WITH s, s.scope = $scope AND s.status = 'open' AS allowed,
     $call_id IN coalesce(s.remember_calls, []) AS replay
CALL (s, allowed, replay) {
  WITH s WHERE allowed AND replay
  MATCH (s)-[:RECORDED]->(e:Event {call_id: $call_id})<-[:DERIVED_FROM]-(m:Memory)
  WITH e, m ORDER BY toInteger(substring(e.id, 4))
  RETURN collect({memory_id: m.id, created: m.origin_event_id = e.id, type: m.type, event_id: e.id})
         AS replayed
}
OPTIONAL CALL (s, allowed, replay) {
  WITH s AS ses WHERE allowed AND NOT replay
  MATCH (scope:Scope {id: $scope})
  MERGE (ec:Counter {name: 'event'}) ON CREATE SET ec.value = 0
  SET ec.value = ec.value + size($items)
  WITH ses, scope, ec.value - size($items) AS event_base
  // numbered by position in $items (not item.index: a batch retried item by item sends one)
  UNWIND range(0, size($items) - 1) AS position
  WITH ses, scope, $items[position] AS raw, event_base + position + 1 AS n
  // the call's scope and session on every item, as the fragments (shared with bulk import) read them
  WITH ses, scope, raw {.*, scope: $scope, scope_token: $scope_token, session_id: $session_id} AS item, n
  // include: remember_event
  WITH ses, scope, collect({item: item, e: e, m: m, created: m.origin_event_id = e.id}) AS written
  WITH ses, scope, written, [w IN written WHERE w.created] AS fresh
  MERGE (mc:Counter {name: 'memory'}) ON CREATE SET mc.value = 0
  SET mc.value = mc.value + size(fresh)
  WITH ses, scope, written, fresh, mc.value - size(fresh) AS memory_base
  CALL (scope, fresh, memory_base) {
    UNWIND range(0, size(fresh) - 1) AS i
    WITH scope, fresh[i].m AS m, fresh[i].item AS item, memory_base + i + 1 AS n
    // include: new_memory
  }
  WITH ses, scope, written, [w IN written | CASE WHEN w.created THEN w.m END] AS made
  // include: link_concepts
  // include: link_similar
  // NEXT links what a session remembered in sequence (across calls, via the session's last
  // memory): episodic context that retrieval uses to let neighbouring memories support each other.
  CALL (ses, written) {
    OPTIONAL MATCH (last:Memory {id: ses.last_memory_id})
    WITH [x IN [last] WHERE x IS NOT NULL] + [w IN written | w.m] AS chain
    UNWIND range(1, size(chain) - 1) AS i
    WITH chain[i - 1] AS a, chain[i] AS b WHERE a <> b
    MERGE (a)-[:NEXT]->(b)
  }
  SET ses.last_memory_id = written[size(written) - 1].m.id,
      ses.remember_calls = ([$call_id] + coalesce(ses.remember_calls, []))[..8]
  RETURN [w IN written | {memory_id: w.m.id, created: w.created, type: w.m.type, event_id: w.e.id}]
         AS stored
}
RETURN s.scope AS scope, s.status AS status, CASE WHEN replay THEN replayed ELSE stored END AS written;

// name: remember_event
// fragment: expects `ses` (the session), `item` (a claim with its scope and session_id) and `n`
// (the event's number) bound; leaves `e` (the Event) and `m` (the Memory: new, or the active one
// with the same normalised text, reinforced) bound.
CREATE (e:Event {
  id: 'evt_' + toString(n), type: 'remember', content: item.content,
  memory_type: item.type, scope: item.scope, session_id: item.session_id, recorded_at: $now,
  occurred_at: item.occurred_at, client_name: $client_name, client_version: $client_version,
  call_id: $call_id
})
CREATE (ses)-[:RECORDED]->(e)
MERGE (m:Memory {active_key: item.active_key})
  ON CREATE SET m.origin_event_id = e.id
  ON MATCH SET m.reinforced_count = coalesce(m.reinforced_count, 0) + 1, m.last_reinforced_at = $now
CREATE (m)-[:DERIVED_FROM]->(e)

// name: new_memory
// fragment: expects `scope` (the Scope node), `m` (a Memory this statement created), `item` (its
// claim, with scope and scope_token) and `n` (its number) bound.
// A new memory's properties, its vector and its scope.
SET m.id = 'sch_' + toString(n), m.content = item.content, m.type = item.type,
    m.status = 'active', m.scope = item.scope, m.scope_token = item.scope_token,
    m.content_hash = item.content_hash,
    m.salience = 0.5, m.confidence = 0.5, m.reinforced_count = 0,
    m.created_at = $now, m.occurred_at = item.occurred_at,
    m.integration = $client_name, m.integration_version = $client_version,
    // judged for near-duplicates and updates at this write, or null (consolidation off): null is
    // what the maintenance pass judges later (operator/maintenance.py)
    m.similar_version = item.similar_version
// float32, as the vector index holds it (see the header of schema.cypher)
WITH scope, m, item
CALL db.create.setNodeVectorProperty(m, 'embedding', item.embedding)
CREATE (m)-[:IN_SCOPE]->(scope)

// name: link_similar
// fragment: expects `made` bound: per position in $items, the memory this statement created for
// it, or null (a claim that matched an existing memory is that memory, already linked).
// The near-duplicates and updates found for each new claim before the write (remember's
// judgement, services/consolidation.py): (:Memory)-[:SIMILAR_TO {kind, score, at}]->(:Memory),
// from the new claim to the memory it repeats (kind duplicate) or updates (kind update) — a stored
// memory (target_id) or an earlier claim of the same call (target_position). Retrieval shows a
// duplicate cluster once and an update pair together.
CALL (made) {
  UNWIND range(0, size($items) - 1) AS position
  WITH made[position] AS m, $items[position].links AS links
  WHERE m IS NOT NULL
  UNWIND coalesce(links, []) AS link
  OPTIONAL MATCH (stored:Memory {id: link.target_id})
  WITH m, link, coalesce(stored, made[link.target_position]) AS target
  // include: similar_edge
}

// name: similar_edge
// fragment: expects `m` (a memory just judged), `link` (one of its links: kind, score) and `target`
// (the memory the link names, or null) bound, keeps them all bound and adds `s` (the edge).
// One judged link as (m)-[:SIMILAR_TO {kind, score, at}]->(target), written once per pair (remember's
// link_similar and the maintenance pass's backfill share it). A target retired or forgotten since
// the judgement, of another scope, or m itself gets none.
WITH * WHERE target IS NOT NULL AND target <> m AND target.status = 'active' AND target.scope = m.scope
MERGE (m)-[s:SIMILAR_TO]->(target)
  ON CREATE SET s.kind = link.kind, s.score = link.score, s.at = $now

// name: link_concepts
// fragment: expects `made` bound: per position in $items, the memory this statement created for
// it, or null (a duplicate matched an existing memory, which has its concepts already).
// The concept layer of new memories, in their own transaction: a (:Concept {scope, key}) per thing
// a memory is about (created on first mention, IN_SCOPE of its scope), MENTIONS {weight} from the
// memory, and the counts retrieval weighs concepts by — c.df, the active memories that mention
// it, and Scope.active_memories — so a name in half the scope (a speaker, the project) weighs
// almost nothing and is not walked at all (candidate_context).
// $concept_links: one row per concept with the memories that mention it ({scope, key, name, kind,
// mentions: [{position, weight}]}), sorted by scope and key (services/concepts.py concept_links):
// each concept is merged and counted once per statement, and concurrent writes take concept locks
// in one order, so they cannot deadlock. Rows carry node references only: a row holding the items
// (vectors and all) was counted once per row by every buffering operator, ~0.4 MB a row against
// Neo4j's transaction memory limit.
CALL (made) {
  UNWIND [m IN made WHERE m IS NOT NULL] AS m
  SET m.concepts_version = $concepts_version
}
CALL (made) {
  UNWIND $concept_links AS g
  WITH g, [x IN g.mentions WHERE made[x.position] IS NOT NULL] AS fresh
  WHERE size(fresh) > 0
  // include: merge_concept
  SET c.df = c.df + size(fresh)
  WITH c, fresh
  UNWIND fresh AS x
  WITH c, x, made[x.position] AS m
  CREATE (m)-[:MENTIONS {weight: x.weight}]->(c)
}
CALL (made) {
  UNWIND [m IN made WHERE m IS NOT NULL] AS m
  WITH m.scope AS sid, count(*) AS created
  MATCH (s:Scope {id: sid})
  SET s.active_memories = coalesce(s.active_memories, 0) + created
}

// name: merge_concept
// fragment: expects `g` (a concept row of $concept_links: scope, key, name, kind) bound; leaves
// `c` (the concept) bound.
// The concept, created on first mention and IN_SCOPE of its scope.
MATCH (s:Scope {id: g.scope})
MERGE (c:Concept {scope: g.scope, key: g.key})
  ON CREATE SET c.name = g.name, c.kind = g.kind, c.df = 0, c.created_at = $now
// an entity's spelling ("Becoming Nicole") names the concept better than a word of it
SET c.name = CASE WHEN g.kind = 'entity' AND c.kind <> 'entity' THEN g.name ELSE c.name END,
    c.kind = CASE WHEN g.kind = 'entity' THEN 'entity' ELSE c.kind END
// a concept has one outgoing IN_SCOPE: checking it is one step however many memories mention it
MERGE (c)-[:IN_SCOPE]->(s)

// name: unlink_concepts
// fragment: expects `m` (a memory that has just left the active set) bound.
// The counts of link_concepts follow: the concepts it mentions and its scope count one active
// memory fewer. Its MENTIONS stay, so the retired memory remains explorable by concept.
CALL (m) {
  MATCH (m)-[:MENTIONS]->(c:Concept)
  WITH c ORDER BY c.key
  SET c.df = c.df - 1
}
CALL (m) {
  MATCH (s:Scope {id: m.scope})
  WHERE m.concepts_version IS NOT NULL
  SET s.active_memories = coalesce(s.active_memories, 1) - 1
}

// name: relink_concepts
// fragment: expects `m` (a memory that has just come back into the active set) bound.
// unlink_concepts undone: the concepts it mentions and its scope count it again.
CALL (m) {
  MATCH (m)-[:MENTIONS]->(c:Concept)
  WITH c ORDER BY c.key
  SET c.df = c.df + 1
}
CALL (m) {
  MATCH (s:Scope {id: m.scope})
  WHERE m.concepts_version IS NOT NULL
  SET s.active_memories = coalesce(s.active_memories, 0) + 1
}
