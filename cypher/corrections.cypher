// A person's corrections of the memory: `slowave-graph memory suppress|restore|supersede` and the
// dashboard's memory page (slowave_graph/operator/corrections.py). Never MCP tools: hiding and
// correcting what agents remember are a person's decisions.
// Every action leaves a (:Correction) record IN_SCOPE of the memory's scope and CORRECTED → the
// memory: who ($actor, on $host, with slowave-graph $version), when, why ($reason), what
// (action, from_status → to_status, and for a supersede the replacement). The record travels with
// the scope (export, import, forget) and goes with the memory when the memory is forgotten; it
// holds the person's reason, never the memory's text.
// Each statement takes the memory's write lock before it reads its status (SET then REMOVE a
// marker, as touch_session does), so a concurrent feedback, remember or correction waits and then
// sees the new status. A refusal (status not one the action applies to) writes nothing and says
// why: the row's `previous` is the status found.

// name: suppress_memory
// Hides a memory from every later retrieval without deleting anything: status 'suppressed', the
// status it had kept in suppressed_from. An active memory keeps its duplicate key (active_key),
// so an agent remembering the same claim again reinforces the hidden memory ("matched") instead
// of bringing the claim back as a new one: the person's decision holds until a person restores
// it. It leaves the active set, so its concepts and scope count it no more (unlink_concepts).
// Catalogs frozen before the suppression keep it in place, as they keep a stale memory.
// No row: no such memory (or not in $scope).
MATCH (m:Memory {id: $memory_id})
WHERE $scope IS NULL OR m.scope = $scope
SET m._correcting = true
REMOVE m._correcting
WITH m, m.status AS previous
MATCH (home:Scope {id: m.scope})
OPTIONAL CALL (m, previous, home) {
  WITH m, previous, home WHERE previous IN ['active', 'stale']
  CALL (m, previous) {
    WITH m WHERE previous = 'active'
    // include: unlink_concepts
  }
  SET m.status = 'suppressed', m.suppressed_from = previous, m.suppressed_at = $now
  WITH m, previous, home, 'suppress' AS action, 'suppressed' AS next, null AS replacement
  // include: record_correction
  RETURN c
}
RETURN m.id AS memory_id, m.scope AS scope, previous, m.status AS status, c.id AS correction_id;

// name: restore_memory
// Undoes a suppression: the memory returns to the status it had (active or stale) and, if active,
// is counted by its concepts and scope again (relink_concepts). Only a suppressed memory can be
// restored; a stale one is corrected with supersede. No row: no such memory (or not in $scope).
MATCH (m:Memory {id: $memory_id})
WHERE $scope IS NULL OR m.scope = $scope
SET m._correcting = true
REMOVE m._correcting
WITH m, m.status AS previous
MATCH (home:Scope {id: m.scope})
OPTIONAL CALL (m, previous, home) {
  WITH m, previous, home WHERE previous = 'suppressed'
  WITH m, previous, home, coalesce(m.suppressed_from, 'active') AS next
  SET m.status = next
  REMOVE m.suppressed_from, m.suppressed_at
  WITH m, previous, home, next
  CALL (m, next) {
    WITH m WHERE next = 'active'
    // include: relink_concepts
  }
  WITH m, previous, home, next, 'restore' AS action, null AS replacement
  // include: record_correction
  RETURN c
}
RETURN m.id AS memory_id, m.scope AS scope, previous, m.status AS status, c.id AS correction_id;

// name: supersede_memory
// The second half of a person's supersede, in the transaction whose first half remembered the
// corrected text (bulk_remember_memories, under the correction's own session $session_id, whose
// last memory is the replacement): the old memory retires as an agent's stale + superseded
// feedback retires it — status stale, stale_reason superseded, active_key removed, concepts no
// longer counting it — and (:newer)-[:SUPERSEDES]->(:old) names the correction instead of
// a feedback event. The session ends (end_reason correction; not committed: there is no task
// outcome to form an episode from). Only an active memory is superseded; a replacement that is
// the memory itself (the corrected text normalises to the old one) is refused. The caller rolls
// the transaction back on any refusal, so nothing of the first half stays either.
// No row: no such memory (or not in $scope), or the session is missing.
MATCH (m:Memory {id: $memory_id})
WHERE $scope IS NULL OR m.scope = $scope
SET m._correcting = true
REMOVE m._correcting
WITH m, m.status AS previous
MATCH (home:Scope {id: m.scope})
MATCH (ses:Session {id: $session_id})
OPTIONAL MATCH (newer:Memory {id: ses.last_memory_id})
SET ses.status = 'ended', ses.outcome = 'success', ses.end_reason = 'correction', ses.ended_at = $now,
    ses.outcome_summary = $summary
WITH m, previous, newer, home
OPTIONAL CALL (m, previous, newer, home) {
  WITH m, previous, newer, home
  WHERE previous = 'active' AND newer IS NOT NULL AND newer <> m
    AND newer.scope = m.scope AND newer.status = 'active'
  CALL (m) {
    WITH m
    // include: unlink_concepts
  }
  SET m.status = 'stale', m.stale_reason = 'superseded', m.stale_at = $now,
      m.stale_correction_id = $correction_id
  REMOVE m.active_key
  CREATE (newer)-[:SUPERSEDES {reason: 'superseded', at: $now, correction_id: $correction_id,
                               actor: $actor}]->(m)
  WITH m, previous, home, 'supersede' AS action, 'stale' AS next, newer.id AS replacement
  // include: record_correction
  RETURN c
}
RETURN m.id AS memory_id, m.scope AS scope, previous, m.status AS status, c.id AS correction_id,
       newer.id AS replacement_id, newer = m AS same;

// name: record_correction
// fragment: expects `m` (the memory), `home` (its Scope), `previous` and `next` (its status before
// and after), `action` and `replacement` (the new memory's id, or null) bound; leaves `c` (the
// record) bound. The Scope is matched before anything changes, so a change without its record
// cannot happen.
CREATE (c:Correction {
  id: $correction_id, action: action, memory_id: m.id, scope: m.scope, from_status: previous,
  to_status: next, replacement_id: replacement, reason: $reason, actor: $actor, host: $host,
  version: $version, at: $now
})
CREATE (c)-[:CORRECTED]->(m), (c)-[:IN_SCOPE]->(home)

// name: memory_corrections
// A memory's correction history, oldest first: every suppress, restore and supersede a person
// made of it, and the supersede that made it (when it is a person's replacement of another).
MATCH (m:Memory {id: $id})
CALL (m) {
  MATCH (c:Correction)-[:CORRECTED]->(m)
  RETURN c
  UNION
  MATCH (m)-[s:SUPERSEDES]->(:Memory)
  MATCH (c:Correction {id: s.correction_id})
  RETURN c
}
RETURN c.id AS id, c.action AS action, c.memory_id AS memory_id, c.from_status AS from_status,
       c.to_status AS to_status, c.replacement_id AS replacement_id, c.reason AS reason,
       c.actor AS actor, c.host AS host, c.version AS version, c.at AS at
ORDER BY at, id;
