// Operator statements: deleting a scope (benchmarks clean up after themselves) and forgetting —
// `slowave-graph forget` (slowave_graph/operator/forget.py) deletes a whole scope or one memory,
// with everything that belongs only to it, and leaves an audit record of it.
// What a scope or a memory owns is written once, as a fragment (scope_nodes, memory_nodes), that
// the dry run (forget_*_count), the deletion (forget_*) and delete_scope all include: what the dry
// run counts is exactly what the deletion removes.

// name: delete_scope
// Removes one scope and everything in it (scope_nodes): sessions and what they recorded,
// retrieved and formed, memories, procedures, concepts and continuity lines. No audit record:
// `forget_scope` is the operator's way, with one.
MATCH (s:Scope {id: $scope})
// include: scope_nodes
// include: delete_doomed
RETURN $scope AS scope;

// name: scope_nodes
// fragment: expects `s` (a Scope) bound; leaves `s` and `doomed` (every node of the scope, once) bound.
// The nodes of one scope, reached by traversal from its Scope node as export_scope_nodes
// (operator.cypher) reaches them, never by scanning a label for a scope property: the Scope node,
// what is IN_SCOPE of it (sessions, memories, procedures, concepts, continuity lines), what its
// sessions recorded, formed and retrieved (events, episodes, retrievals) and the cursors of those
// retrievals. The feedback ledger, exposures, associations and NEXT links are relationships among
// them. Collected before anything is deleted: the walk must not run over half-deleted nodes.
CALL (s) {
  CALL (s) {
    RETURN s AS n
    UNION ALL
    MATCH (s)<-[:IN_SCOPE]-(n)
    RETURN n
    UNION ALL
    MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RECORDED|FORMED|RETRIEVED]->(n)
    RETURN n
    UNION ALL
    MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)<-[:CONTINUES]-(n:Cursor)
    RETURN n
  }
  RETURN collect(DISTINCT n) AS doomed
}

// name: delete_doomed
// fragment: expects `doomed` (a list of nodes) bound.
// The nodes go with every relationship that touches them.
CALL (doomed) {
  UNWIND doomed AS n
  DETACH DELETE n
}

// name: doomed_counts
// fragment: expects `doomed` (a list of nodes) bound; leaves `node_counts` ([{label, count}]) and
// `relationship_counts` ([{type, count}]) bound: what deleting them removes, per label and per
// relationship type (each relationship once, though both its ends may be among them).
WITH *,
     COLLECT { UNWIND doomed AS n
               WITH labels(n)[0] AS label, count(*) AS count
               RETURN {label: label, count: count} ORDER BY label } AS node_counts,
     COLLECT { UNWIND doomed AS n
               MATCH (n)-[r]-()
               WITH DISTINCT r
               WITH type(r) AS type, count(*) AS count
               RETURN {type: type, count: count} ORDER BY type } AS relationship_counts

// name: forget_scope_count
// The dry run of forget_scope: what forgetting the scope would delete. No row: no such scope.
MATCH (s:Scope {id: $scope})
// include: scope_nodes
// include: doomed_counts
RETURN s.id AS scope, node_counts, relationship_counts;

// name: forget_scope
// Forgets a scope: everything delete_scope removes, counted first (doomed_counts), and the audit
// record (record_forgetting), in one statement and so one transaction. The Scope node's write lock
// comes first: an activate or remember, which links a new session or memory to it, waits until it
// is gone (an activate then starts the scope afresh; a remember finds its session gone), so what
// was counted is what goes. No row: no such scope (nothing written).
MATCH (s:Scope {id: $scope})
SET s._forgetting = true
WITH s
// include: scope_nodes
// include: doomed_counts
WITH s.id AS home, doomed, node_counts, relationship_counts
// include: lessons_leave_other_scopes
// include: delete_doomed
// include: record_forgetting
RETURN home AS scope, node_counts, relationship_counts, {} AS updated, f.id AS forgetting_id;

// name: memory_nodes
// fragment: expects `m` (a Memory) bound; leaves `m` and `doomed` bound.
// What belongs to one memory alone: the memory; the events it derives from that no other memory
// does (the remember events that recorded it — they hold its text; an episode that also derives
// from one only loses that link); the concepts no other memory mentions, active or stale (the rule
// of concepts_recount, which keeps a concept while anything mentions it); a person's corrections
// of it (cypher/corrections.cypher). Its relationships —
// IN_SCOPE, DERIVED_FROM, MENTIONS, NEXT, ASSOCIATED, SUPERSEDES, and the EXPOSED and ASSESSED
// (feedback ledger) edges of the retrievals that showed it — go with it.
CALL (m) {
  CALL (m) {
    RETURN m AS n
    UNION ALL
    MATCH (m)-[:DERIVED_FROM]->(n:Event)
    WHERE NOT EXISTS { MATCH (n)<-[:DERIVED_FROM]-(other:Memory) WHERE other <> m }
    RETURN n
    UNION ALL
    MATCH (m)-[:MENTIONS]->(n:Concept)
    WHERE NOT EXISTS { MATCH (n)<-[:MENTIONS]-(other:Memory) WHERE other <> m }
    RETURN n
    UNION ALL
    // a person's corrections of it (they hold the person's reasons about its text)
    MATCH (m)<-[:CORRECTED]-(n:Correction)
    RETURN n
  }
  RETURN collect(DISTINCT n) AS doomed
}

// name: memory_references
// fragment: expects `m` and `doomed` (memory_nodes) bound; leaves bound what outside the memory
// names it and has to change when it goes:
// - bridges: [before, after] pairs around it on a NEXT chain (what a session remembered in
//   sequence): they become neighbours, as if it had never been said (a claim remembered again in
//   another session has neighbours there too: each one before it meets each one after);
// - catalogs: retrievals whose frozen catalog lists it (served or not), or names it beside an item
//   (folding's also_stored_as, conflicts_with) — in its scope, and in others where it travelled as
//   a lesson. Its place is kept — pages
//   are cut from the catalog by position, so what was shown stays on its page and rank — and its id
//   becomes the tombstone $forgotten, which later pages skip and the audit expects unexposed;
// - covered: retrievals whose complete-coverage declaration counted its exposure (made no later
//   than the declaration): complete_exposures counts one exposure fewer, as the preflight of a
//   commit compares it with the exposures left;
// - heads: sessions whose last remembered memory it is (the next remember links to it with NEXT):
//   they point at the memory of their latest other remember event, or at none;
// - recounted: the concepts it mentions that stay, each counted (df) one active memory fewer when
//   it is active.
WITH *,
     COLLECT { MATCH (before:Memory)-[:NEXT]->(m)-[:NEXT]->(after:Memory)
               WHERE before <> after
               RETURN [before, after] } AS bridges,
     COLLECT { MATCH (:Scope {id: m.scope})<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(r:Retrieval)
               WHERE m.id IN r.catalog_ids
                  OR any(x IN coalesce(r.catalog_links, []) WHERE x CONTAINS '"' + m.id + '"')
               RETURN r
               UNION
               // a memory that has been a lesson's origin (generalisation.cypher) may be listed
               // by other scopes' catalogs too: only then are all retrievals read
               WITH m WHERE m.scope_kind IS NOT NULL
               MATCH (r:Retrieval)
               WHERE r.scope <> m.scope AND m.id IN r.catalog_ids
               RETURN r } AS catalogs,
     COLLECT { MATCH (r:Retrieval)-[x:EXPOSED]->(m)
               WHERE r.complete_exposures IS NOT NULL
                 AND coalesce(x.at <= r.complete_declared_at, true)
               RETURN r } AS covered,
     COLLECT { MATCH (m)-[:DERIVED_FROM]->(:Event)<-[:RECORDED]-(ses:Session)
               WHERE ses.last_memory_id = m.id
               RETURN DISTINCT ses } AS heads,
     COLLECT { MATCH (m)-[:MENTIONS]->(c:Concept)
               WHERE m.status = 'active' AND NOT c IN doomed
               RETURN c } AS recounted

// name: forget_memory_count
// The dry run of forget_memory: what forgetting the memory would delete and change, and its scope
// (which the caller compares with a scope it was given). No row: no such memory.
MATCH (m:Memory {id: $memory_id})
// include: memory_nodes
// include: doomed_counts
// include: memory_references
RETURN m.scope AS scope, node_counts, relationship_counts,
       {next_bridged: size(bridges), retrieval_catalogs: size(catalogs),
        coverage_declarations: size(covered), session_heads: size(heads),
        concept_counts: size(recounted)} AS updated;

// name: forget_memory
// Forgets one memory (memory_nodes) and mends what names it (memory_references), counted first,
// with the audit record (record_forgetting), in one statement and so one transaction. The
// memory's write lock comes first: feedback on it, a remember that reinforces it or a page that
// shows it waits, then finds it gone. No row: no such memory, or not in $scope (nothing written).
MATCH (m:Memory {id: $memory_id})
WHERE $scope IS NULL OR m.scope = $scope
SET m._forgetting = true
WITH m
// include: memory_nodes
// include: doomed_counts
// include: memory_references
// the concept counts first (unlink_concepts, as retiring a memory does): a stale memory is not
// counted any more
CALL (m) {
  WITH m WHERE m.status = 'active'
  // include: unlink_concepts
}
CALL (bridges) {
  UNWIND bridges AS pair
  WITH pair[0] AS before, pair[1] AS after
  MERGE (before)-[:NEXT]->(after)
}
CALL (m, catalogs) {
  UNWIND catalogs AS r
  // include: forget_in_catalog
}
CALL (covered) {
  UNWIND covered AS r
  SET r.complete_exposures = r.complete_exposures - 1
}
CALL (m, heads) {
  UNWIND heads AS ses
  OPTIONAL CALL (ses, m) {
    MATCH (ses)-[:RECORDED]->(e:Event)<-[:DERIVED_FROM]-(previous:Memory)
    WHERE previous <> m
    RETURN previous ORDER BY toInteger(substring(e.id, 4)) DESC LIMIT 1
  }
  SET ses.last_memory_id = previous.id
}
WITH m.scope AS home, doomed, node_counts, relationship_counts,
     {next_bridged: size(bridges), retrieval_catalogs: size(catalogs),
      coverage_declarations: size(covered), session_heads: size(heads),
      concept_counts: size(recounted)} AS updated
// include: delete_doomed
// include: record_forgetting
RETURN home AS scope, node_counts, relationship_counts, updated, f.id AS forgetting_id;

// name: forget_in_catalog
// fragment: expects `m` (a memory being forgotten) and `r` (a retrieval whose frozen catalog lists
// or names it) bound.
// Its place in the catalog is kept and its id becomes the tombstone $forgotten.
WITH m, r, r.catalog_ids AS ids
// the association (why an associated hit came) names concepts of the memory's text
SET r.catalog_associations = CASE WHEN r.catalog_associations IS NOT NULL
      THEN [i IN range(0, size(ids) - 1) |
            CASE WHEN ids[i] = m.id THEN '' ELSE r.catalog_associations[i] END] END
SET r.catalog_ids = [id IN ids | CASE WHEN id = m.id THEN $forgotten ELSE id END]
// the duplicates and updates folding named beside other items (JSON lists of ids)
SET r.catalog_links = CASE WHEN r.catalog_links IS NOT NULL
      THEN [x IN r.catalog_links | replace(x, '"' + m.id + '"', '"' + $forgotten + '"')] END

// name: lessons_leave_other_scopes
// fragment: expects `doomed` (the nodes of a scope being forgotten) bound.
// The scope's memories that travelled as lessons (generalisation.cypher) leave what other scopes
// hold of them as forgetting one memory would: their place in those scopes' catalogs becomes
// $forgotten, and a complete-coverage declaration that counted one's exposure counts one fewer.
CALL (doomed) {
  UNWIND [n IN doomed WHERE n:Memory AND n.scope_kind IS NOT NULL] AS m
  CALL (m) {
    MATCH (r:Retrieval)
    WHERE r.scope <> m.scope AND m.id IN r.catalog_ids
    // include: forget_in_catalog
  }
  CALL (m) {
    MATCH (r:Retrieval)-[x:EXPOSED]->(m)
    WHERE r.scope <> m.scope AND r.complete_exposures IS NOT NULL
      AND coalesce(x.at <= r.complete_declared_at, true)
    SET r.complete_exposures = r.complete_exposures - 1
  }
}

// name: record_forgetting
// fragment: expects `home` (the scope's id), `node_counts` and `relationship_counts`
// (doomed_counts) bound; leaves `f` (the record) bound.
// The audit record of a forgetting: who ($actor, on $host, with slowave-graph $version), when
// ($now), what ($target 'scope' or 'memory', $target_id, the scope) and how much went, per label
// and relationship type — never what it said. It is in no scope (no IN_SCOPE, no `scope`
// property), so it outlives the scope it records and no scope's walk, export or audit meets it.
CREATE (f:Forgetting {
  id: $forgetting_id, target: $target, target_id: $target_id, scope_id: home,
  actor: $actor, host: $host, version: $version, at: $now,
  node_labels: [x IN node_counts | x.label], node_counts: [x IN node_counts | x.count],
  relationship_types: [x IN relationship_counts | x.type],
  relationship_counts: [x IN relationship_counts | x.count],
  nodes: reduce(total = 0, x IN node_counts | total + x.count),
  relationships: reduce(total = 0, x IN relationship_counts | total + x.count)
})
