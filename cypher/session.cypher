// Sessions, continuity lines and the activation that opens them.

// name: touch_session
// fragment: leaves `s` (the session named by $session_id) bound; no row if there is none.
// Loads the session a tool call names and refreshes its idle clock — only for a call of the
// session's own scope: the statements that include this commit on their own, and a refused call
// must leave the session as it was. An open session idle for longer than the timeout is closed
// here, lazily, with outcome unknown — the same rule the reaper applies — so a late call sees
// "already ended" whether or not the reaper has run yet.
// The SET takes the session's write lock before status is read, so a concurrent close is seen.
// A session belongs to the principal that opened it ($principal; sessions stored before
// principals were recorded belong to the local user): another principal's is not found, exactly
// as an unknown one, so a refusal says nothing about whether it exists.
MATCH (s:Session {id: $session_id})
WHERE coalesce(s.principal, 'local') = $principal
SET s._touch = true
WITH s, s.status = 'open' AND s.last_seen_at < $idle_before AS expired
FOREACH (_ IN CASE WHEN expired THEN [1] ELSE [] END |
  SET s.status = 'ended', s.outcome = 'unknown', s.ended_at = $now, s.end_reason = 'idle_timeout')
FOREACH (_ IN CASE WHEN s.status = 'open' AND s.scope = $scope THEN [1] ELSE [] END |
  SET s.last_seen_at = $now)
REMOVE s._touch

// name: session_for_call
// The session guard of a write (touch_session): the caller refuses an unknown session, another
// scope's, or an ended one, and the transaction then rolls back.
// include: touch_session
RETURN s.scope AS scope, s.status AS status, s.task_context AS task_context;

// name: session_for_read
// recall's first look at its session, read-only: the guard that counts (touch_session, under
// the write lock) runs again in the write that stores the retrieval. A session this check
// would refuse — unknown, another scope, ended, or idle past the timeout — goes through
// session_for_call instead, which gives the error (and closes an idle session).
// Also which of recall's searches can find something in the scope (as scope_state tells
// activate): without a procedure or a learned retrieval those two statements are not sent.
MATCH (s:Session {id: $session_id})
WHERE coalesce(s.principal, 'local') = $principal
RETURN s.scope AS scope, s.status AS status, s.task_context AS task_context,
       s.status = 'open' AND s.last_seen_at < $idle_before AS expired,
       // status IS NOT NULL lets the (scope, status) index answer (a composite index needs both)
       EXISTS { MATCH (p:Procedure {scope: $scope}) WHERE p.status IS NOT NULL } AS has_procedures,
       EXISTS { MATCH (r:Retrieval {scope: $scope, learned: true}) } AS has_learned;

// name: scope_state
// What activate needs to know about a scope before it searches: whether it holds anything (and so
// which searches can find something: a scope without procedures or learned retrievals skips those
// two statements), and other scopes whose names differ only by case or -/_ (likely the same
// project, split by typo).
OPTIONAL MATCH (v:Scope {norm_key: $norm_key})
WHERE v.id <> $scope
WITH collect(v.id)[..5] AS variants
RETURN EXISTS { MATCH (m:Memory {scope: $scope, status: 'active'}) } AS has_memories,
       // status IS NOT NULL lets the (scope, status) index answer (a composite index needs both)
       EXISTS { MATCH (p:Procedure {scope: $scope}) WHERE p.status IS NOT NULL } AS has_procedures,
       EXISTS { MATCH (r:Retrieval {scope: $scope, learned: true}) } AS has_learned,
       variants;

// name: continuity_scope
// The scope a continuity line belongs to and the client that started it (activate checks both
// before searching). Lines started before owners were recorded have none and are anyone's.
MATCH (c:Continuity {id: $continuity_id})
RETURN c.scope AS scope, c.client_name AS client_name, c.principal AS principal;

// name: start_session
// fragment: leaves `ses` (the new open session) and `c` (its continuity line) bound.
// Activation, part 1: the scope (created on first use), the continuity line (new, or the given
// one — re-checked here, so a race cannot attach a session to another scope's or client's line) and
// a new open session. A given continuity line that is missing or belongs to another scope or
// client leaves no row, before anything is written.
OPTIONAL MATCH (given:Continuity {id: $continuity_id})
WITH given
WHERE $continuity_id IS NULL
   OR (given.scope = $scope
       AND (given.principal IS NULL
            OR (given.principal = $principal AND coalesce(given.client_name, '') = coalesce($client_name, ''))))
MERGE (scope:Scope {id: $scope})
  ON CREATE SET scope.kind = $scope_kind, scope.name = $scope_name, scope.norm_key = $norm_key,
                scope.created_at = $now
WITH scope, given
CALL (scope, given) {
  WITH scope, given WHERE given IS NULL
  CREATE (c:Continuity {id: $new_continuity_id, scope: $scope, created_at: $now, principal: $principal,
                       client_name: $client_name})-[:IN_SCOPE]->(scope)
  RETURN c
  UNION
  WITH given WHERE given IS NOT NULL
  RETURN given AS c
}
// $session_id is random (services/context.py new_id), never counted up: it is the only handle
// on the session that remember, recall and commit take.
CREATE (ses:Session {
  id: $session_id, principal: $principal, scope: $scope, status: 'open',
  task: $task, initial_goal: $initial_goal, task_context: $task_context,
  semantic_context: $semantic_context, client_name: $client_name, client_version: $client_version,
  started_at: $now, last_seen_at: $now
})
CREATE (ses)-[:IN_SCOPE]->(scope), (ses)-[:CONTINUES]->(c)

// name: open_session
// A new open session (start_session) on its own: the bulk importer opens one per scope this way.
// Returns no row if the given continuity line is missing or belongs to another scope; nothing is
// written then.
// include: start_session
RETURN ses.id AS session_id, c.id AS continuity_id;

// name: activate_session
// slowave_activate's whole write in one auto-commit statement (one round trip instead of BEGIN,
// two statements and COMMIT; docs/performance.md, "Design choices, with their measured effect"):
// start_session, then the session's first retrieval frozen (freeze_retrieval in retrieval.cypher).
// Idempotent on $retrieval_id, so a retry after a connection lost mid-commit cannot open a second
// session: if the retrieval is already stored, the statement writes nothing and returns the
// session and continuity line that hold it. session_id null: the continuity line was not usable
// (nothing written).
OPTIONAL MATCH (done:Retrieval {id: $retrieval_id})<-[:RETRIEVED]-(prior:Session)-[:CONTINUES]->(prior_line:Continuity)
OPTIONAL CALL (done) {
  WITH done WHERE done IS NULL
  // include: start_session
  // include: freeze_retrieval
  RETURN ses.id AS session_id, c.id AS continuity_id
}
RETURN coalesce(prior.id, session_id) AS session_id, coalesce(prior_line.id, continuity_id) AS continuity_id;

// name: set_session_context
// recall merges its task_context into the session's (stored as JSON text).
MATCH (s:Session {id: $session_id})
SET s.task_context = $task_context;

// name: close_idle_sessions
// The reaper: closes open sessions idle since before $idle_before, at most $limit per run.
// Taking the write lock first (SET s._closing) and then re-checking status under it makes two
// server processes reaping at once close each session exactly once.
MATCH (s:Session {status: 'open'})
WHERE s.last_seen_at < $idle_before
WITH s LIMIT $limit
SET s._closing = true
WITH s
WHERE s.status = 'open'
SET s.status = 'ended', s.outcome = 'unknown', s.ended_at = $now, s.end_reason = 'idle_timeout',
    s.closed_by = $closer
REMOVE s._closing
RETURN s.id AS session_id;
