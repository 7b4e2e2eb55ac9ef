// The concept layer: what memories are about (services/concepts.py extracts it; link_concepts in
// memory.cypher writes it with every new memory). These statements build it for memories stored
// before it existed or by an older extractor (`slowave-graph concepts backfill`, and the server's
// start-up), and show it to analysts.

// name: concepts_state
// How far the store's concept layer is: the extractor version the last complete backfill reached
// (kept on the EmbeddingSpace node, which every store has), and whether any memory still waits.
OPTIONAL MATCH (e:EmbeddingSpace {name: 'memory'})
RETURN e.concepts_version AS version,
       COUNT { MATCH (m:Memory)
               WHERE m.concepts_version IS NULL OR m.concepts_version < $concepts_version
               RETURN m LIMIT 1 } > 0 AS pending;

// name: concepts_pending_page
// The next memories (in id order, after $after) whose concepts are missing or from an older
// extractor, with the text they are extracted from. Keyset paging over the id constraint's index.
MATCH (m:Memory)
WHERE m.id > $after AND (m.concepts_version IS NULL OR m.concepts_version < $concepts_version)
WITH m ORDER BY m.id LIMIT $limit
RETURN m.id AS id, m.scope AS scope, m.content AS content;

// name: concepts_pending_count
// How many memories the backfill has left (its progress bar's total).
MATCH (m:Memory)
WHERE m.concepts_version IS NULL OR m.concepts_version < $concepts_version
RETURN count(m) AS pending;

// name: concepts_relink
// A page of the backfill, one transaction: each memory's MENTIONS ($ids) are replaced by the ones
// the current extractor finds ($concept_links, as link_concepts in memory.cypher takes them, the
// positions in $ids) and it is marked with the extractor's version. Counts are not kept here:
// concepts_recount sets them for the scopes the backfill touched. Idempotent: a page written twice
// leaves the same graph.
CALL () {
  UNWIND $ids AS id
  MATCH (m:Memory {id: id})
  SET m.concepts_version = $concepts_version
  WITH m
  MATCH (m)-[old:MENTIONS]->(:Concept)
  DELETE old
}
UNWIND $concept_links AS g
// include: merge_concept
WITH c, g
UNWIND g.mentions AS x
MATCH (m:Memory {id: $ids[x.position]})
CREATE (m)-[:MENTIONS {weight: x.weight}]->(c)
RETURN count(*) AS mentions;

// name: concepts_recount
// The counts retrieval weighs concepts by, recomputed for one scope from the graph: each concept's
// df (active memories that mention it; a concept nothing mentions any more goes) and the scope's
// active_memories. Each node is locked before it is counted, so a write that adds a mention at the
// same time is counted once: before the lock by this count, or after it by its own increment.
MATCH (s:Scope {id: $scope})
SET s._recount = true
WITH s
CALL (s) {
  MATCH (c:Concept)-[:IN_SCOPE]->(s)
  WITH c ORDER BY c.key
  SET c._recount = true
  WITH c, COUNT { (c)<-[:MENTIONS]-(:Memory {status: 'active'}) } AS df,
       EXISTS { (c)<-[:MENTIONS]-() } AS mentioned
  CALL (c, df, mentioned) {
    WITH c WHERE NOT mentioned
    DETACH DELETE c
  }
  CALL (c, df, mentioned) {
    WITH c WHERE mentioned
    SET c.df = df
    REMOVE c._recount
  }
  RETURN count(*) AS concepts
}
SET s.active_memories = COUNT { (s)<-[:IN_SCOPE]-(:Memory {status: 'active'}) }
REMOVE s._recount
RETURN s.active_memories AS active_memories, concepts;

// name: concepts_mark_complete
// The backfill reached every memory: later start-ups skip the check.
MATCH (e:EmbeddingSpace {name: 'memory'})
SET e.concepts_version = $concepts_version;

// name: concepts_of_memory
// A memory's concepts with how much each says about a scope (df: how many active memories
// mention it): the dashboard's memory page.
MATCH (m:Memory {id: $id})-[r:MENTIONS]->(c:Concept)
RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df, r.weight AS weight
ORDER BY c.kind, c.df, c.name;
