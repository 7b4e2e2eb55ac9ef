// Invariants of the memory graph, checked by `slowave-graph audit` (slowave_graph/operator/audit.py) and by
// the soak, fault and fuzz tests. Every check returns one row per violation — subject, problem,
// detail — so an empty result means the invariant holds. $scopes limits a check to those scopes
// (null: the whole database); $limit bounds the rows returned, not the work done.

// name: audit_feedback_event_ids
// The ledger holds every feedback event exactly once: no two ASSESSED relationships share an
// event id (relationship properties have no uniqueness constraint, so this is checked here).
// Ids of the chosen scopes are compared with those of the whole database.
CALL () {
  MATCH (r:Retrieval)-[a:ASSESSED]->()
  WHERE $scopes IS NULL OR r.scope IN $scopes
  RETURN collect(a.event_id) AS ids
}
MATCH ()-[b:ASSESSED]->()
WHERE b.event_id IN ids
WITH b.event_id AS event_id, count(b) AS n
WHERE n > 1
RETURN event_id AS subject, 'feedback event id recorded ' + toString(n) + ' times' AS problem,
       {copies: n} AS detail
LIMIT $limit;

// name: audit_feedback_ledger
// Each ledger event is well formed (fbe_<seq>, a known status), points from a retrieval to a
// memory or procedure of the same scope (or, accepted only, a lesson of another scope the retrieval
// showed: a memory marked scope_kind by generalisation.cypher), and — when accepted — to a target
// the retrieval exposed with a value the contract allows. Rejected events may name unexposed
// targets of the scope.
MATCH (r:Retrieval)-[a:ASSESSED]->(t)
WHERE $scopes IS NULL OR r.scope IN $scopes
WITH r, a, t, CASE
  WHEN a.event_id IS NULL OR a.seq IS NULL OR a.event_id <> 'fbe_' + toString(a.seq)
    THEN 'malformed feedback event id'
  WHEN NOT a.status IN ['accepted', 'rejected'] THEN 'feedback event with unknown status'
  WHEN NOT (t:Memory OR t:Procedure) THEN 'feedback event on something that is not a memory or procedure'
  WHEN t.scope IS NULL OR (t.scope <> r.scope AND NOT (t:Memory AND t.scope_kind IS NOT NULL
                                                       AND a.status = 'accepted'))
    THEN 'feedback event on a target of another scope'
  WHEN a.status = 'accepted' AND NOT EXISTS { (r)-[:EXPOSED]->(t) }
    THEN 'accepted feedback on a target the retrieval never exposed'
  WHEN a.status = 'accepted' AND t:Memory
       AND NOT a.assessment IN ['used', 'not_used', 'unassessable', 'irrelevant', 'already_known', 'stale']
    THEN 'accepted memory feedback with an invalid assessment'
  WHEN a.status = 'accepted' AND t:Procedure AND NOT a.use IN ['used', 'not_used', 'unassessable']
    THEN 'accepted procedure feedback with an invalid use'
  WHEN a.status = 'rejected' AND a.rejection_reason IS NULL THEN 'rejected feedback without a reason'
END AS problem
WHERE problem IS NOT NULL
RETURN coalesce(a.event_id, '(no id)') AS subject, problem,
       {retrieval_id: r.id, target_id: t.id, status: a.status} AS detail
LIMIT $limit;

// name: audit_exposures
// What a retrieval showed: one EXPOSED per (retrieval, target), only memories and procedures of
// the retrieval's scope — or a lesson of another scope (a memory that has been a lesson's origin,
// marked scope_kind: generalisation.cypher) — memories and procedures only from its frozen
// catalog (pages: see audit_retrieval_pages).
MATCH (r:Retrieval)-[x:EXPOSED]->(t)
WHERE $scopes IS NULL OR r.scope IN $scopes
WITH r, t, count(x) AS copies, collect(x.page) AS pages
WITH r, t, copies, pages, CASE
  WHEN copies > 1 THEN 'target exposed ' + toString(copies) + ' times by one retrieval'
  WHEN NOT (t:Memory OR t:Procedure) THEN 'exposure of something that is not a memory or procedure'
  WHEN t.scope IS NULL OR (t.scope <> r.scope AND NOT (t:Memory AND t.scope_kind IS NOT NULL))
    THEN 'exposure of a target of another scope'
  WHEN t:Memory AND NOT t.id IN coalesce(r.catalog_ids, []) THEN 'exposed memory is not in the frozen catalog'
  WHEN t:Procedure AND r.catalog_procedures IS NOT NULL AND NOT t.id IN r.catalog_procedures
    THEN 'exposed procedure is not in the frozen catalog'
  // retrievals frozen before procedures were paged showed all of theirs on page 1
  WHEN t:Procedure AND r.catalog_procedures IS NULL AND pages[0] <> 1 THEN 'procedure exposed after page 1'
END AS problem
WHERE problem IS NOT NULL
RETURN r.id AS subject, problem, {target_id: t.id, pages: pages} AS detail
LIMIT $limit;

// name: audit_retrieval_pages
// Per retrieval, its frozen catalog and what it exposed; the audit recomputes the pages (a pure
// function of the catalog) and checks that exactly the served pages were exposed.
MATCH (r:Retrieval)
WHERE $scopes IS NULL OR r.scope IN $scopes
RETURN r.id AS id, r.catalog_ids AS catalog_ids, r.catalog_pathways AS pathways,
       r.page_size AS page_size, coalesce(r.pages_served, 1) AS pages_served,
       r.catalog_procedures AS catalog_procedures,
       COLLECT { MATCH (r)-[x:EXPOSED]->(m:Memory) RETURN {id: m.id, page: x.page, rank: x.rank} } AS exposed,
       COLLECT { MATCH (r)-[x:EXPOSED]->(p:Procedure) RETURN {id: p.id, page: x.page, rank: x.rank} }
         AS exposed_procedures;

// name: audit_retrievals
// Every retrieval belongs to exactly one session — the one it names, in the same scope, of the
// same principal — and its id says what made it (ctx_ activate, rec_ recall). Cursors page through
// a retrieval of their own session and scope.
MATCH (r:Retrieval)
WHERE $scopes IS NULL OR r.scope IN $scopes
WITH r, COLLECT { MATCH (s:Session)-[:RETRIEVED]->(r) RETURN s } AS sessions,
     COLLECT { MATCH (c:Cursor)-[:CONTINUES]->(r) RETURN c } AS cursors
WITH r, sessions, cursors, CASE
  WHEN size(sessions) <> 1 THEN 'retrieval belongs to ' + toString(size(sessions)) + ' sessions'
  WHEN sessions[0].id <> r.session_id THEN 'retrieval names another session than the one that made it'
  WHEN sessions[0].scope <> r.scope THEN 'retrieval and its session are in different scopes'
  WHEN coalesce(sessions[0].principal, 'local') <> coalesce(r.principal, 'local')
    THEN 'retrieval and its session belong to different principals'
  WHEN NOT ((r.kind = 'activate' AND r.id =~ 'ctx_[0-9a-f]+') OR (r.kind = 'recall' AND r.id =~ 'rec_[0-9a-f]+'))
    THEN 'retrieval id does not match its kind'
  WHEN any(c IN cursors WHERE c.scope <> r.scope OR c.session_id <> r.session_id OR c.retrieval_id <> r.id)
    THEN 'cursor bound to another session, scope or retrieval'
END AS problem
WHERE problem IS NOT NULL
RETURN r.id AS subject, problem, {sessions: [s IN sessions | s.id], kind: r.kind} AS detail
LIMIT $limit;

// name: audit_sessions
// Session life cycle: open or ended; an ended session has an end time; a session is closed once
// (at most one episode, exactly one once committed); it sits in its scope on one continuity line.
MATCH (s:Session)
WHERE $scopes IS NULL OR s.scope IN $scopes
WITH s, COUNT { (s)-[:FORMED]->(:Episode) } AS episodes,
     COUNT { (s)-[:IN_SCOPE]->(:Scope) } AS scopes, EXISTS { (s)-[:IN_SCOPE]->(:Scope {id: s.scope}) } AS home,
     COLLECT { MATCH (s)-[:CONTINUES]->(c:Continuity) RETURN c } AS lines
WITH s, episodes, CASE
  // random ids (128 bits), or the counted ones of stores made before sessions had random ids
  WHEN s.id IS NULL OR NOT s.id =~ 'sess_([0-9a-f]{32}|[0-9]+)' THEN 'malformed session id'
  WHEN NOT s.status IN ['open', 'ended'] THEN 'session with unknown status'
  WHEN episodes > 1 THEN 'session closed more than once: ' + toString(episodes) + ' episodes'
  WHEN s.committed_at IS NOT NULL AND episodes <> 1 THEN 'committed session without its episode'
  WHEN s.committed_at IS NOT NULL AND s.status <> 'ended' THEN 'committed session still open'
  WHEN s.status = 'ended' AND s.ended_at IS NULL THEN 'ended session without an end time'
  WHEN s.status = 'open' AND (s.ended_at IS NOT NULL OR episodes > 0) THEN 'open session that was closed'
  WHEN scopes <> 1 OR NOT home THEN 'session not in exactly its own scope'
  WHEN size(lines) <> 1 OR lines[0].scope <> s.scope THEN 'session not on one continuity line of its scope'
END AS problem
WHERE problem IS NOT NULL
RETURN coalesce(s.id, '(no id)') AS subject, problem, {status: s.status, episodes: episodes} AS detail
LIMIT $limit;

// name: audit_commit_feedback
// A commit is refused while feedback is outstanding, and nothing can be exposed once a session
// has ended — so every retrieval of a committed session must still have every exposed target
// assessed (an accepted event) and a complete declaration covering all its exposures.
MATCH (s:Session)-[:RETRIEVED]->(r:Retrieval)
WHERE s.committed_at IS NOT NULL AND ($scopes IS NULL OR s.scope IN $scopes)
WITH s, r,
     COLLECT { MATCH (r)-[:EXPOSED]->(t) WHERE NOT EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(t) }
               RETURN t.id } AS unassessed,
     coalesce(r.complete_exposures, -1) = COUNT { (r)-[:EXPOSED]->() } AS declared
WHERE size(unassessed) > 0 OR NOT declared
RETURN s.id AS subject, 'committed with feedback outstanding' AS problem,
       {retrieval_id: r.id, unassessed: unassessed, coverage_declared_complete: declared} AS detail
LIMIT $limit;

// name: audit_memories
// No half-written memory: an id from the counter, content, type, status, embedding; provenance
// (DERIVED_FROM its origin event, every event of its own scope); exactly its own scope; the
// duplicate key present exactly while the memory is active — or suppressed from active, as a
// person's suppression keeps it (cypher/corrections.cypher).
MATCH (m:Memory)
WHERE $scopes IS NULL OR m.scope IN $scopes
WITH m, COLLECT { MATCH (m)-[:DERIVED_FROM]->(e:Event) RETURN e } AS events,
     COUNT { (m)-[:IN_SCOPE]->(:Scope) } AS scopes, EXISTS { (m)-[:IN_SCOPE]->(:Scope {id: m.scope}) } AS home
WITH m, events, CASE
  WHEN m.id IS NULL OR NOT m.id =~ 'sch_[0-9]+' THEN 'memory without a counter id'
  WHEN m.content IS NULL OR m.type IS NULL OR m.embedding IS NULL OR m.scope IS NULL
    THEN 'half-written memory (content, type, embedding or scope missing)'
  WHEN NOT m.status IN ['active', 'stale', 'suppressed'] THEN 'memory with unknown status'
  WHEN m.status = 'suppressed' AND NOT m.suppressed_from IN ['active', 'stale']
    THEN 'suppressed memory without the status to restore'
  WHEN size(events) = 0 THEN 'memory without a provenance event'
  WHEN NOT m.origin_event_id IN [e IN events | e.id] THEN 'memory not derived from its origin event'
  WHEN any(e IN events WHERE e.scope <> m.scope) THEN 'memory derived from an event of another scope'
  WHEN scopes <> 1 OR NOT home THEN 'memory not in exactly its own scope'
  WHEN m.status = 'active' AND m.active_key IS NULL THEN 'active memory without its duplicate key'
  WHEN m.status = 'stale' AND m.active_key IS NOT NULL THEN 'stale memory still holding its duplicate key'
  WHEN m.status = 'suppressed' AND (m.active_key IS NOT NULL) <> (m.suppressed_from = 'active')
    THEN 'suppressed memory with its duplicate key out of step'
END AS problem
WHERE problem IS NOT NULL
RETURN coalesce(m.id, elementId(m)) AS subject, problem, {scope: m.scope, status: m.status} AS detail
LIMIT $limit;

// name: audit_evidence
// Events are recorded by exactly one session (the one they name, same scope); episodes are formed
// by exactly one session; procedures are proc_<session>, derived from that session's episode, in
// exactly their own scope; a person's corrections name their actor and time and correct exactly
// the one memory they name, in their own scope.
CALL () {
  MATCH (e:Event)
  WHERE $scopes IS NULL OR e.scope IN $scopes
  WITH e, COLLECT { MATCH (s:Session)-[:RECORDED]->(e) RETURN s } AS sessions
  WITH e, CASE
    WHEN e.id IS NULL OR NOT e.id =~ 'evt_[0-9]+' THEN 'event without a counter id'
    WHEN size(sessions) <> 1 THEN 'event recorded by ' + toString(size(sessions)) + ' sessions'
    WHEN sessions[0].id <> e.session_id OR sessions[0].scope <> e.scope
      THEN 'event recorded by another session or scope than it names'
  END AS problem
  WHERE problem IS NOT NULL
  RETURN coalesce(e.id, elementId(e)) AS subject, problem
  UNION ALL
  MATCH (ep:Episode)
  WHERE $scopes IS NULL OR ep.scope IN $scopes
  WITH ep, COLLECT { MATCH (s:Session)-[:FORMED]->(ep) RETURN s } AS sessions
  WITH ep, CASE
    WHEN ep.id IS NULL OR NOT ep.id =~ 'ep_[0-9]+' THEN 'episode without a counter id'
    WHEN size(sessions) <> 1 THEN 'episode formed by ' + toString(size(sessions)) + ' sessions'
    WHEN sessions[0].id <> ep.session_id OR sessions[0].scope <> ep.scope
      THEN 'episode formed by another session or scope than it names'
  END AS problem
  WHERE problem IS NOT NULL
  RETURN coalesce(ep.id, elementId(ep)) AS subject, problem
  UNION ALL
  MATCH (p:Procedure)
  WHERE $scopes IS NULL OR p.scope IN $scopes
  WITH p, COLLECT { MATCH (p)-[:DERIVED_FROM]->(ep:Episode) RETURN ep } AS episodes,
       COUNT { (p)-[:IN_SCOPE]->(:Scope) } AS scopes, EXISTS { (p)-[:IN_SCOPE]->(:Scope {id: p.scope}) } AS home
  WITH p, episodes, scopes, home, CASE
    WHEN p.id IS NULL OR p.id <> 'proc_' + p.session_id THEN 'procedure id does not name its session'
    WHEN size(episodes) = 0 THEN 'procedure without its episode'
    WHEN any(ep IN episodes WHERE ep.session_id <> p.session_id OR ep.scope <> p.scope)
      THEN 'procedure derived from another session or scope'
    WHEN scopes <> 1 OR NOT home THEN 'procedure not in exactly its own scope'
  END AS problem
  WHERE problem IS NOT NULL
  RETURN coalesce(p.id, elementId(p)) AS subject, problem
  UNION ALL
  MATCH (c:Correction)
  WHERE $scopes IS NULL OR c.scope IN $scopes
  WITH c, COLLECT { MATCH (c)-[:CORRECTED]->(m:Memory) RETURN m } AS memories,
       COUNT { (c)-[:IN_SCOPE]->(:Scope) } AS scopes, EXISTS { (c)-[:IN_SCOPE]->(:Scope {id: c.scope}) } AS home
  WITH c, CASE
    WHEN c.id IS NULL OR NOT c.id =~ 'cor_[0-9a-f]{32}' THEN 'malformed correction id'
    WHEN NOT c.action IN ['suppress', 'restore', 'supersede'] THEN 'correction with unknown action'
    WHEN c.actor IS NULL OR c.at IS NULL THEN 'correction without its actor or time'
    WHEN size(memories) <> 1 OR memories[0].id <> c.memory_id THEN 'correction not of exactly the memory it names'
    WHEN scopes <> 1 OR NOT home THEN 'correction not in exactly its own scope'
  END AS problem
  WHERE problem IS NOT NULL
  RETURN coalesce(c.id, elementId(c)) AS subject, problem
}
RETURN subject, problem, {} AS detail
LIMIT $limit;

// name: audit_scope_isolation
// Only validation evidence joins two scopes: a lesson's VALIDATED_IN from its origin memory to a
// Scope that validated it, and the ledger of a lesson shown in another scope — EXPOSED and
// ASSESSED from a retrieval there to a memory that has been a lesson's origin (scope_kind,
// generalisation.cypher). Nothing else joins two
// objects of different scopes (or an object to another scope's Scope node); and evidence holds
// its shape: VALIDATED_IN only from a memory to a Scope with sessions, the ledger only from a
// retrieval to a memory. Any relationship touching the chosen scopes is checked, in either
// direction, so a link from outside into them is found too.
MATCH (a)-[rel]->(b)
WHERE ($scopes IS NULL OR a.scope IN $scopes OR b.scope IN $scopes OR (b:Scope AND b.id IN $scopes))
  AND a.scope IS NOT NULL
  AND ((b.scope IS NOT NULL AND b.scope <> a.scope) OR (b:Scope AND b.id <> a.scope))
WITH a, rel, b, CASE
  WHEN type(rel) = 'VALIDATED_IN' AND a:Memory AND b:Scope AND rel.sessions >= 1 THEN null
  WHEN type(rel) IN ['EXPOSED', 'ASSESSED'] AND a:Retrieval AND b:Memory AND b.scope_kind IS NOT NULL
    THEN null
  WHEN type(rel) = 'VALIDATED_IN' THEN 'VALIDATED_IN that is not the evidence of a lesson'
  ELSE type(rel) + ' crosses scopes'
END AS problem
WHERE problem IS NOT NULL
RETURN coalesce(a.id, elementId(a)) AS subject, problem,
       {from_scope: a.scope, to: coalesce(b.id, elementId(b)), to_scope: coalesce(b.scope, b.id)} AS detail
LIMIT $limit;

// name: audit_concepts
// The concept layer keeps its counts and its scope: a concept sits in exactly its own scope and
// its df is the number of active memories that mention it; a scope's active_memories, once set,
// is its number of active memories (retrieval weighs concepts by both).
CALL () {
  MATCH (c:Concept)
  WHERE $scopes IS NULL OR c.scope IN $scopes
  WITH c, COUNT { (c)<-[:MENTIONS]-(:Memory {status: 'active'}) } AS active,
       COUNT { (c)-[:IN_SCOPE]->(:Scope) } AS homes, EXISTS { (c)-[:IN_SCOPE]->(:Scope {id: c.scope}) } AS home
  WITH c, active, CASE
    WHEN homes <> 1 OR NOT home THEN 'concept not in exactly its own scope'
    WHEN c.df IS NULL OR c.df <> active THEN 'concept count out of step with its active mentions'
  END AS problem
  WHERE problem IS NOT NULL
  RETURN c.scope + ' / ' + c.key AS subject, problem, {df: c.df, active_mentions: active} AS detail
  UNION ALL
  MATCH (s:Scope)
  WHERE ($scopes IS NULL OR s.id IN $scopes) AND s.active_memories IS NOT NULL
  WITH s, COUNT { (s)<-[:IN_SCOPE]-(:Memory {status: 'active'}) } AS active
  WHERE s.active_memories <> active
  RETURN s.id AS subject, 'scope count of active memories out of step' AS problem,
         {counted: s.active_memories, active: active} AS detail
}
RETURN subject, problem, detail
LIMIT $limit;

// name: audit_id_sequences
// Per counter: the highest number handed out, how many ids carry its prefix and how many are
// distinct (nodes are also protected by uniqueness constraints; feedback events are not).
// Read before the counters themselves (audit_counter_values): counters only grow, so a counter
// behind its highest id means a future id would collide.
CALL () {
  MATCH (m:Memory) WHERE m.id STARTS WITH 'sch_'
  RETURN 'memory' AS counter, max(toInteger(substring(m.id, 4))) AS top, count(m) AS ids,
         count(DISTINCT m.id) AS distinct_ids
  UNION ALL
  MATCH (e:Event) WHERE e.id STARTS WITH 'evt_'
  RETURN 'event' AS counter, max(toInteger(substring(e.id, 4))) AS top, count(e) AS ids,
         count(DISTINCT e.id) AS distinct_ids
  UNION ALL
  MATCH (ep:Episode) WHERE ep.id STARTS WITH 'ep_'
  RETURN 'episode' AS counter, max(toInteger(substring(ep.id, 3))) AS top, count(ep) AS ids,
         count(DISTINCT ep.id) AS distinct_ids
  UNION ALL
  // only counted ids (stores made before sessions had random ids) come from the counter
  MATCH (s:Session) WHERE s.id =~ 'sess_[0-9]+'
  RETURN 'session' AS counter, max(toInteger(substring(s.id, 5))) AS top, count(s) AS ids,
         count(DISTINCT s.id) AS distinct_ids
  UNION ALL
  MATCH ()-[a:ASSESSED]->()
  RETURN 'feedback' AS counter, max(a.seq) AS top, count(a) AS ids, count(DISTINCT a.event_id) AS distinct_ids
}
RETURN counter, top, ids, distinct_ids;

// name: audit_counter_values
// The id counters (see audit_id_sequences).
MATCH (c:Counter)
RETURN c.name AS counter, c.value AS value;

// name: audit_acknowledged_memories
// Acknowledged writes are durable: every memory a remember call answered with is in the graph,
// in the scope it was stored in, derived from the event the call reported.
UNWIND range(0, size($items) - 1) AS i
WITH i, $items[i] AS item
OPTIONAL MATCH (m:Memory {id: item.memory_id})
RETURN i, m IS NOT NULL AS found, m.scope AS scope, m.content AS content,
       EXISTS { (m)-[:DERIVED_FROM]->(:Event {id: item.event_id}) } AS from_event
ORDER BY i;

// name: audit_acknowledged_feedback
// Every feedback event id a call reported as accepted is in the ledger exactly once, accepted,
// from the retrieval and on the target the call named.
UNWIND range(0, size($items) - 1) AS i
WITH i, $items[i] AS item
OPTIONAL MATCH (r:Retrieval {id: item.retrieval_id})-[a:ASSESSED]->(t)
WHERE a.event_id = item.event_id
RETURN i, count(a) AS copies, collect(a.status) AS statuses, collect(t.id) AS targets
ORDER BY i;

// name: audit_acknowledged_sessions
// Sessions whose commit was acknowledged: ended, committed, with exactly one episode.
UNWIND $session_ids AS sid
OPTIONAL MATCH (s:Session {id: sid})
RETURN sid AS session_id, s IS NOT NULL AS found, s.status AS status,
       s.committed_at IS NOT NULL AS committed, COUNT { (s)-[:FORMED]->(:Episode) } AS episodes;
