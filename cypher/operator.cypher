// Operator statements behind `slowave-graph export / import / backup / restore / reembed`.
// Export and import move whole scopes: every node reached from a Scope node (as delete_scope in
// admin.cypher reaches them) and every relationship among them, with all properties; the
// counters travel with them so ids handed out later never collide with imported ones.

// name: export_scopes
// Every scope, in id order: a full export walks them one by one.
MATCH (s:Scope)
RETURN s.id AS scope
ORDER BY scope;

// name: export_scope_nodes
// All nodes of one scope: the Scope node, what is IN_SCOPE of it (memories, procedures, sessions,
// continuity lines), what its sessions recorded, formed and retrieved, and the cursors of those
// retrievals. The branches are disjoint, so each node comes once; rows stream as they are read.
MATCH (s:Scope {id: $scope})
CALL (s) {
  RETURN s AS n
  UNION ALL
  // concepts are derived from the memories' text: an import links them again
  MATCH (s)<-[:IN_SCOPE]-(n) WHERE NOT n:Concept
  RETURN n
  UNION ALL
  MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RECORDED|FORMED|RETRIEVED]->(n)
  RETURN n
  UNION ALL
  MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)<-[:CONTINUES]-(n:Cursor)
  RETURN n
}
RETURN labels(n) AS labels, properties(n) AS props;

// name: export_scope_relationships
// All relationships among the nodes of one scope (the same walk as export_scope_nodes), each
// with its type, both ends as (label, id) and all its properties. The few that join two scopes
// (a lesson's evidence and ledger) are export_scope_crossings.
MATCH (s:Scope {id: $scope})
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(n) WHERE NOT n:Concept
  RETURN n
  UNION ALL
  MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RECORDED|FORMED|RETRIEVED]->(n)
  RETURN n
  UNION ALL
  MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)<-[:CONTINUES]-(n:Cursor)
  RETURN n
}
MATCH (n)-[r]->(m)
WHERE (m = s OR m.scope = $scope) AND NOT m:Concept
RETURN type(r) AS type, labels(n) AS from_labels, n.id AS from_id, labels(m) AS to_labels,
       m.id AS to_id, properties(r) AS props;

// name: export_scope_crossings
// The relationships that leave one scope for another exported with it ($scopes): a lesson's
// evidence (VALIDATED_IN to the scopes that validated it) and the ledger of a lesson shown in this
// scope (EXPOSED/ASSESSED from its retrievals to the lesson's memory). They come after every
// scope's nodes, so an import finds both ends; to a scope not exported they are left out.
MATCH (s:Scope {id: $scope})
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(n:Memory)
  RETURN n
  UNION ALL
  MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(n:Retrieval)
  RETURN n
}
MATCH (n)-[r:VALIDATED_IN|EXPOSED|ASSESSED]->(m)
WITH n, r, m, CASE WHEN m:Scope THEN m.id ELSE m.scope END AS other
WHERE other <> $scope AND other IN $scopes
RETURN type(r) AS type, labels(n) AS from_labels, n.id AS from_id, labels(m) AS to_labels,
       m.id AS to_id, properties(r) AS props;

// name: export_counters
// The id counters (one per id kind): imported as a maximum, never lowered.
MATCH (c:Counter)
RETURN c.name AS name, c.value AS value
ORDER BY name;

// name: export_totals
// What the whole database holds per label and relationship type (count store, instant): a full
// export compares them with what it wrote, to report nodes outside every scope.
RETURN COUNT { (:Scope) } AS Scope, COUNT { (:Memory) } AS Memory,
       COUNT { (:Procedure) } AS Procedure, COUNT { (:Episode) } AS Episode,
       COUNT { (:Event) } AS Event, COUNT { (:Session) } AS Session,
       COUNT { (:Continuity) } AS Continuity, COUNT { (:Retrieval) } AS Retrieval,
       COUNT { (:Cursor) } AS Cursor, COUNT { (:Correction) } AS Correction;

// name: import_counters
// Counters move up to the imported value, never down: ids of the database's own later writes
// stay clear of the imported ones.
UNWIND $rows AS row
MERGE (c:Counter {name: row.name})
  ON CREATE SET c.value = row.value
  ON MATCH SET c.value = CASE WHEN c.value < row.value THEN row.value ELSE c.value END
RETURN count(c) AS counters;

// name: import_nodes
// Restores nodes by their id (MERGE: importing the same file twice changes nothing) and replaces
// all their properties with the exported ones. A node that exists under the same id in another
// scope is left alone and reported: the caller aborts the transaction, nothing is overwritten.
// Labels are spelled out per branch so each MERGE is an index seek on that label's id constraint.
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.label = 'Scope'
  MERGE (n:Scope {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Memory'
  MERGE (n:Memory {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Procedure'
  MERGE (n:Procedure {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Episode'
  MERGE (n:Episode {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Event'
  MERGE (n:Event {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Session'
  MERGE (n:Session {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Continuity'
  MERGE (n:Continuity {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Retrieval'
  MERGE (n:Retrieval {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Cursor'
  MERGE (n:Cursor {id: row.id})
  RETURN n
  UNION ALL
  WITH row WHERE row.label = 'Correction'
  MERGE (n:Correction {id: row.id})
  RETURN n
}
WITH row, n, row.label = 'Scope' OR coalesce(n.scope, row.props.scope) = row.props.scope AS own
CALL (row, n, own) {
  WITH row, n WHERE own
  SET n = row.props
  // the stored vectors, sent apart from the other properties so each is written once, as float32
  // (schema.cypher)
  WITH row, n
  UNWIND keys(row.vectors) AS key
  CALL db.create.setNodeVectorProperty(n, key, row.vectors[key])
}
RETURN count(CASE WHEN own THEN 1 END) AS nodes,
       collect(CASE WHEN NOT own THEN row.label + ' ' + row.id END)[..10] AS conflicts;

// name: import_relationships
// Restores relationships between already imported nodes, found by (label, id) with an index seek
// per end. The label test sits outside the inner CALL so the planner cannot seek every label's
// index first and filter afterwards (it does, written flat). Types are spelled out too: a MERGE
// on a dynamic type scans every relationship of that type when it has to create one. MERGE keeps
// the import idempotent: one relationship per (type, ends), except ASSESSED, the append-only
// ledger, where several may join the same ends — each is its own event_id. Returns how many rows
// found both ends; fewer than sent means the file names a node that is nowhere to be found.
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.from_label = 'Scope'
  CALL (row) { MATCH (n:Scope {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Memory'
  CALL (row) { MATCH (n:Memory {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Procedure'
  CALL (row) { MATCH (n:Procedure {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Episode'
  CALL (row) { MATCH (n:Episode {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Event'
  CALL (row) { MATCH (n:Event {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Session'
  CALL (row) { MATCH (n:Session {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Continuity'
  CALL (row) { MATCH (n:Continuity {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Retrieval'
  CALL (row) { MATCH (n:Retrieval {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Cursor'
  CALL (row) { MATCH (n:Cursor {id: row.from_id}) RETURN n }
  RETURN n AS a
  UNION ALL
  WITH row WHERE row.from_label = 'Correction'
  CALL (row) { MATCH (n:Correction {id: row.from_id}) RETURN n }
  RETURN n AS a
}
CALL (row) {
  WITH row WHERE row.to_label = 'Scope'
  CALL (row) { MATCH (n:Scope {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Memory'
  CALL (row) { MATCH (n:Memory {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Procedure'
  CALL (row) { MATCH (n:Procedure {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Episode'
  CALL (row) { MATCH (n:Episode {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Event'
  CALL (row) { MATCH (n:Event {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Session'
  CALL (row) { MATCH (n:Session {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Continuity'
  CALL (row) { MATCH (n:Continuity {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Retrieval'
  CALL (row) { MATCH (n:Retrieval {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Cursor'
  CALL (row) { MATCH (n:Cursor {id: row.to_id}) RETURN n }
  RETURN n AS b
  UNION ALL
  WITH row WHERE row.to_label = 'Correction'
  CALL (row) { MATCH (n:Correction {id: row.to_id}) RETURN n }
  RETURN n AS b
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'IN_SCOPE'
  MERGE (a)-[r:IN_SCOPE]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'CONTINUES'
  MERGE (a)-[r:CONTINUES]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'RETRIEVED'
  MERGE (a)-[r:RETRIEVED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'RECORDED'
  MERGE (a)-[r:RECORDED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'FORMED'
  MERGE (a)-[r:FORMED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'DERIVED_FROM'
  MERGE (a)-[r:DERIVED_FROM]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'EXPOSED'
  MERGE (a)-[r:EXPOSED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'SUPERSEDES'
  MERGE (a)-[r:SUPERSEDES]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'ASSOCIATED'
  MERGE (a)-[r:ASSOCIATED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'NEXT'
  MERGE (a)-[r:NEXT]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'SIMILAR_TO'
  MERGE (a)-[r:SIMILAR_TO]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'CORRECTED'
  MERGE (a)-[r:CORRECTED]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'VALIDATED_IN'
  MERGE (a)-[r:VALIDATED_IN]->(b)
  SET r = row.props
}
CALL (row, a, b) {
  WITH row, a, b WHERE row.type = 'ASSESSED'
  MERGE (a)-[r:ASSESSED {event_id: row.props.event_id}]->(b)
  SET r = row.props
}
RETURN count(*) AS relationships;

// name: bulk_remember_memories
// remember_call's write for a whole bulk-import batch in one statement, however many scopes it
// spans: the same nodes, properties, edges, ids and duplicate handling (the same fragments).
// call_id names the batch, as it names the tool call of a remember.
// Items come grouped by scope, each with its scope, scope_token and session_id, index = its
// position in the batch. The counters are bumped once per batch (event by the batch size,
// memory by the memories created) under their write locks, so ids are handed out exactly as
// per-scope remember calls in the same order would hand them out. NEXT chains each
// session from its last memory through its items in order. Returns counts, not a row per item:
// the driver's per-record cost was a good share of an import's client time.
MERGE (ec:Counter {name: 'event'}) ON CREATE SET ec.value = 0
SET ec.value = ec.value + size($items)
WITH ec.value - size($items) AS event_base
UNWIND $items AS item
MATCH (ses:Session {id: item.session_id})
MATCH (scope:Scope {id: item.scope})
WITH ses, scope, item, event_base + item.index + 1 AS n
// include: remember_event
WITH collect({item: item, scope: scope, m: m, created: m.origin_event_id = e.id}) AS written
WITH written, [w IN written WHERE w.created] AS fresh
MERGE (mc:Counter {name: 'memory'}) ON CREATE SET mc.value = 0
SET mc.value = mc.value + size(fresh)
WITH written, fresh, mc.value - size(fresh) AS memory_base
CALL (fresh, memory_base) {
  UNWIND range(0, size(fresh) - 1) AS i
  WITH fresh[i].scope AS scope, fresh[i].m AS m, fresh[i].item AS item, memory_base + i + 1 AS n
  // include: new_memory
}
WITH written, [w IN written | CASE WHEN w.created THEN w.m END] AS made
// include: link_concepts
// include: link_similar
CALL (written) {
  UNWIND $sessions AS session_id
  MATCH (ses:Session {id: session_id})
  OPTIONAL MATCH (last:Memory {id: ses.last_memory_id})
  WITH [x IN [last] WHERE x IS NOT NULL] + [w IN written WHERE w.item.session_id = session_id | w.m]
       AS chain
  UNWIND range(1, size(chain) - 1) AS i
  WITH chain[i - 1] AS a, chain[i] AS b WHERE a <> b
  MERGE (a)-[:NEXT]->(b)
}
CALL (written) {
  UNWIND $sessions AS session_id
  MATCH (ses:Session {id: session_id})
  SET ses.last_memory_id = [w IN written WHERE w.item.session_id = session_id][-1].m.id
}
RETURN size(written) AS written, size([w IN written WHERE w.created]) AS created;

// name: bulk_close_session
// Ends the session a bulk import wrote its memories under (opened with open_session, like an
// activate): outcome success, end_reason import, how many records it took in. Ended, not
// committed: a commit forms the session's episode, and an import has no task outcome to form one.
MATCH (s:Session {id: $session_id})
SET s.status = 'ended', s.outcome = 'success', s.outcome_summary = $summary, s.end_reason = 'import',
    s.ended_at = $now
RETURN s.id AS session_id;

// name: reembed_memory_page
// One page of memories in id order (keyset: after the last id of the previous page) with the text
// their embedding is computed from.
MATCH (m:Memory)
WHERE m.id > $after
RETURN m.id AS id, m.content AS text
ORDER BY id
LIMIT $limit;

// name: reembed_procedure_page
// One page of procedures with the parts their embedding is computed from (see CommitService).
MATCH (p:Procedure)
WHERE p.id > $after
RETURN p.id AS id, p.goal AS goal, p.summary AS summary, p.context_text AS context_text
ORDER BY id
LIMIT $limit;

// name: reembed_retrieval_page
// One page of retrievals that carry a query embedding (experience lookups compare it with cues).
MATCH (r:Retrieval)
WHERE r.id > $after AND r.query_embedding IS NOT NULL
RETURN r.id AS id, r.query AS text
ORDER BY id
LIMIT $limit;

// name: reembed_set_memories
// Writes a page of recomputed memory vectors (the vector index follows).
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding) // float32 (schema.cypher)
RETURN count(m) AS updated;

// name: reembed_set_procedures
// Writes a page of recomputed procedure vectors.
UNWIND $rows AS row
MATCH (p:Procedure {id: row.id})
CALL db.create.setNodeVectorProperty(p, 'embedding', row.embedding) // float32 (schema.cypher)
RETURN count(p) AS updated;

// name: reembed_set_retrievals
// Writes a page of recomputed retrieval query vectors, and their indexed copy on learned ones.
UNWIND $rows AS row
MATCH (r:Retrieval {id: row.id})
CALL db.create.setNodeVectorProperty(r, 'query_embedding', row.embedding) // float32 (schema.cypher)
CALL (r, row) {
  WITH r, row WHERE r.experience_embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(r, 'experience_embedding', row.embedding)
}
RETURN count(r) AS updated;

// name: reembed_begin
// Marks a re-embedding in progress (visible to operators; cleared by embedding_space_set).
MATCH (e:EmbeddingSpace {name: 'memory'})
SET e.reembedding_to = $model, e.reembedding_started_at = $now
RETURN e.model AS model, e.dimension AS dimension;

// name: embedding_space_set
// Records the model that produced the stored vectors once every one of them was recomputed.
MERGE (e:EmbeddingSpace {name: 'memory'})
SET e.model = $model, e.dimension = $dimension, e.updated_at = $now
REMOVE e.reembedding_to, e.reembedding_started_at
RETURN e.model AS model, e.dimension AS dimension;

// name: drop_vector_index
// The memory vector index is rebuilt at a new dimension by the schema code after re-embedding.
DROP INDEX memory_embedding IF EXISTS;

// name: drop_retrieval_vector_index
// Likewise the vector index of learned retrievals' query vectors (Neo4j 2026.01+; absent on 5.26).
DROP INDEX retrieval_experience_embedding IF EXISTS;

// name: drop_procedure_vector_index
// Likewise the vector index of procedures (Neo4j 2026.01+; absent on 5.26).
DROP INDEX procedure_embedding IF EXISTS;

// name: procedure_modes
// Each procedure's mode (READ, WRITE, SCHEMA, DBMS): `cypher query` runs an analyst's statement
// only when every procedure it calls reads (explore/run.py).
SHOW PROCEDURES YIELD name, mode
RETURN name, mode;
