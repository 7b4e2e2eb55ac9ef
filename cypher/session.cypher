// Sessions, continuity lines and the activation that opens them.

// name: session_for_call
// Loads the session a tool call names and refreshes its idle clock. An open session idle for
// longer than the timeout is closed here, lazily, with outcome unknown — the same rule the reaper
// applies — so a late call sees "already ended" whether or not the reaper has run yet.
MATCH (s:Session {id: $session_id})
WITH s, s.status = 'open' AND s.last_seen_at < $idle_before AS expired
FOREACH (_ IN CASE WHEN expired THEN [1] ELSE [] END |
  SET s.status = 'ended', s.outcome = 'unknown', s.ended_at = $now, s.end_reason = 'idle_timeout')
FOREACH (_ IN CASE WHEN s.status = 'open' THEN [1] ELSE [] END | SET s.last_seen_at = $now)
RETURN s.scope AS scope, s.status AS status;

// name: scope_state
// What activate needs to know about a scope before it searches: whether it holds anything, and
// other scopes whose names differ only by case or -/_ (likely the same project, split by typo).
OPTIONAL MATCH (v:Scope {norm_key: $norm_key})
WHERE v.id <> $scope
WITH collect(v.id)[..5] AS variants
RETURN EXISTS { MATCH (m:Memory {scope: $scope, status: 'active'}) } AS has_memories,
       EXISTS { MATCH (p:Procedure {scope: $scope}) } AS has_procedures,
       variants;

// name: continuity_scope
// The scope a continuity line belongs to (activate checks it before searching).
MATCH (c:Continuity {id: $continuity_id})
RETURN c.scope AS scope;

// name: create_activation
// One transaction for everything an activation writes: the scope (created on first use), the
// continuity line (new, or the given one — re-checked here, so a race cannot attach a session to
// another scope's line), a new open session, and the retrieval with its frozen catalog, the
// exposures of page 1 and, when more is available, the cursor for page 2.
// Returns no row if the given continuity line is missing or belongs to another scope; the caller
// then fails the call and the transaction rolls back.
MERGE (scope:Scope {id: $scope})
  ON CREATE SET scope.kind = $scope_kind, scope.name = $scope_name, scope.norm_key = $norm_key,
                scope.created_at = $now
WITH scope
OPTIONAL MATCH (given:Continuity {id: $continuity_id})
WITH scope, given
WHERE $continuity_id IS NULL OR given.scope = $scope
CALL (scope, given) {
  WITH scope, given WHERE given IS NULL
  CREATE (c:Continuity {id: $new_continuity_id, scope: $scope, created_at: $now})-[:IN_SCOPE]->(scope)
  RETURN c
  UNION
  WITH given WHERE given IS NOT NULL
  RETURN given AS c
}
MERGE (counter:Counter {name: 'session'}) ON CREATE SET counter.value = 0
SET counter.value = counter.value + 1 // reads after locking: a direct dependency, no lost update
CREATE (ses:Session {
  id: 'sess_' + toString(counter.value), scope: $scope, status: 'open',
  task: $task, initial_goal: $initial_goal, task_context: $task_context,
  semantic_context: $semantic_context, client_name: $client_name, client_version: $client_version,
  started_at: $now, last_seen_at: $now
})
CREATE (ses)-[:IN_SCOPE]->(scope), (ses)-[:CONTINUES]->(c)
CREATE (r:Retrieval {
  id: $retrieval_id, kind: 'activate', query: $query, policy_version: $policy_version,
  scope: $scope, session_id: ses.id, page_size: $page_size, created_at: $now,
  catalog_ids: $catalog_ids, catalog_pathways: $catalog_pathways,
  relevant_total: $relevant_total, catalog_truncated: $catalog_truncated, pages_served: 1
})
CREATE (ses)-[:RETRIEVED]->(r)
WITH ses, c, r
CALL (r) {
  UNWIND $page_memories AS item
  MATCH (m:Memory {id: item.id})
  CREATE (r)-[:EXPOSED {rank: item.rank, pathway: item.pathway, page: 1, at: $now}]->(m)
}
CALL (r) {
  UNWIND $page_procedures AS item
  MATCH (p:Procedure {id: item.id})
  CREATE (r)-[:EXPOSED {rank: item.rank, pathway: 'procedure', page: 1, at: $now}]->(p)
}
CALL (r, ses) {
  WITH r, ses WHERE $cursor_id IS NOT NULL
  CREATE (:Cursor {id: $cursor_id, retrieval_id: r.id, session_id: ses.id, scope: $scope, page: 2,
                   created_at: $now})-[:CONTINUES]->(r)
}
RETURN ses.id AS session_id, c.id AS continuity_id;
