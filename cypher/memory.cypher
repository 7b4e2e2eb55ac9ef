// Writing memories.

// name: remember_memories
// Stores the claims of one call in one transaction. Each item gets its own Event (provenance:
// who said what, when) and either a new Memory or — when an active memory with the same
// normalised text already exists in the scope — that memory, reinforced ("matched").
// MERGE on the unique active_key serialises concurrent duplicates (also within one batch).
// Ids come in blocks: each counter is bumped once per statement, under its write lock (the
// SET reads after locking), and numbers are handed out by position — so no id is given twice
// and sch_ numbers move only for memories actually created.
MATCH (ses:Session {id: $session_id})
MATCH (scope:Scope {id: $scope})
MERGE (ec:Counter {name: 'event'}) ON CREATE SET ec.value = 0
SET ec.value = ec.value + size($items)
WITH ses, scope, ec.value - size($items) AS event_base
UNWIND $items AS item
CREATE (e:Event {
  id: 'evt_' + toString(event_base + item.index + 1), type: 'remember', content: item.content,
  memory_type: item.type, scope: $scope, session_id: $session_id, recorded_at: $now,
  occurred_at: item.occurred_at, client_name: $client_name, client_version: $client_version
})
CREATE (ses)-[:RECORDED]->(e)
MERGE (m:Memory {active_key: item.active_key})
  ON CREATE SET m.origin_event_id = e.id
  ON MATCH SET m.reinforced_count = coalesce(m.reinforced_count, 0) + 1, m.last_reinforced_at = $now
CREATE (m)-[:DERIVED_FROM]->(e)
WITH scope, collect({item: item, e: e, m: m, created: m.origin_event_id = e.id}) AS written
WITH scope, written, [w IN written WHERE w.created] AS fresh
MERGE (mc:Counter {name: 'memory'}) ON CREATE SET mc.value = 0
SET mc.value = mc.value + size(fresh)
WITH scope, written, fresh, mc.value - size(fresh) AS memory_base
CALL (scope, fresh, memory_base) {
  UNWIND range(0, size(fresh) - 1) AS i
  WITH scope, fresh[i].m AS m, fresh[i].item AS item, memory_base + i + 1 AS n
  SET m.id = 'sch_' + toString(n), m.content = item.content, m.type = item.type,
      m.status = 'active', m.scope = $scope, m.scope_token = $scope_token,
      m.content_hash = item.content_hash,
      m.salience = 0.5, m.confidence = 0.5, m.reinforced_count = 0,
      m.created_at = $now, m.occurred_at = item.occurred_at,
      m.integration = $client_name, m.integration_version = $client_version
  // float32, as the vector index holds it (see the header of schema.cypher)
  WITH scope, m, item
  CALL db.create.setNodeVectorProperty(m, 'embedding', item.embedding)
  CREATE (m)-[:IN_SCOPE]->(scope)
}
// NEXT links what a session remembered in sequence (across calls, via the session's last
// memory): episodic context that retrieval uses to let neighbouring memories support each other.
CALL (written) {
  MATCH (ses:Session {id: $session_id})
  OPTIONAL MATCH (last:Memory {id: ses.last_memory_id})
  WITH ses, [x IN [last] WHERE x IS NOT NULL] + [w IN written | w.m] AS chain
  UNWIND range(1, size(chain) - 1) AS i
  WITH ses, chain[i - 1] AS a, chain[i] AS b WHERE a <> b
  MERGE (a)-[:NEXT]->(b)
}
CALL (written) {
  MATCH (ses:Session {id: $session_id})
  SET ses.last_memory_id = written[size(written) - 1].m.id
}
UNWIND written AS w
RETURN w.item.index AS index, w.m.id AS memory_id, w.created AS created, w.m.type AS type,
       w.e.id AS event_id;
