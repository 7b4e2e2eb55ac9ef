// Closing a task: the feedback preflight, trajectory events, the episode, the procedure.

// name: session_for_commit
// The session a commit names, whether open or already ended (then the commit updates it); another
// principal's is not found (see touch_session).
MATCH (s:Session {id: $session_id})
WHERE coalesce(s.principal, 'local') = $principal
RETURN s.scope AS scope, s.status AS status, s.end_reason AS end_reason, s.task AS task,
       EXISTS { (s)-[:FORMED]->(:Episode) } AS has_episode;

// name: commit_session
// A commit in one statement: the session's lock, the feedback preflight and, only when nothing is
// outstanding, every write (commit_writes) — one round trip instead of three.
// The SET takes the session's write lock before its status is read. A recall or remember in the
// same session (their guard takes the same lock) and a second commit of it wait until this commit
// is done, so the preflight sees every retrieval the session has, and simultaneous commits close
// the session once: the later one sees status ended and reports operation "updated" (and finds the
// episode instead of forming another).
// The preflight: retrievals of the session whose exposed targets lack an accepted assessment, or
// whose exposures were never covered by a complete declaration. With any, nothing is written and
// the caller refuses the commit with them (`outstanding`, oldest first). A session that already
// ended (an earlier commit, or the idle reaper) has no preflight: its commit only updates the
// outcome, since feedback can no longer complete what it showed. No row: unknown session, or
// another principal's (see touch_session).
MATCH (s:Session {id: $session_id})
WHERE coalesce(s.principal, 'local') = $principal
SET s._committing = true
REMOVE s._committing
WITH s, s.status AS status_before
CALL (s, status_before) {
  MATCH (s)-[:RETRIEVED]->(r:Retrieval)
  WHERE status_before = 'open'
  WITH r,
       COLLECT { MATCH (r)-[:EXPOSED]->(m:Memory)
                 WHERE NOT EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(m) } RETURN m.id } AS memory_ids,
       COLLECT { MATCH (r)-[:EXPOSED]->(p:Procedure)
                 WHERE NOT EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(p) } RETURN p.id } AS procedure_ids,
       coalesce(r.complete_exposures, -1) = COUNT { (r)-[:EXPOSED]->() } AS declared
  WHERE size(memory_ids) > 0 OR size(procedure_ids) > 0 OR NOT declared
  WITH r, memory_ids, procedure_ids, declared ORDER BY r.created_at
  // one row even when nothing is outstanding (an aggregate over no rows)
  RETURN collect({retrieval_id: r.id, memory_ids: memory_ids, procedure_ids: procedure_ids,
                  coverage_declared_complete: declared}) AS outstanding
}
OPTIONAL CALL (s, outstanding) {
  WITH s WHERE size(outstanding) = 0
  // include: commit_writes
}
RETURN status_before, outstanding, episode_id, formed, procedure_id;

// name: commit_writes
// fragment: expects `s` (the locked session) bound; returns episode_id, formed, procedure_id.
// The writes of a commit, after its checks, in the one statement of commit_session. The parts run
// in order, each sees what the parts before it wrote, and each aggregates to one row, so an empty
// part (no trajectory, no procedure) passes the row on. Part 1 takes the global 'event' counter's
// write lock, which remember needs too and which is held until commit: round trips after it would
// hold it longer (see write_feedback, docs/performance.md). $episode: {details, outcome}, the text
// after its first line (the session's task, read here);
// $procedure: the learned procedure's fields, or null; $close: the session's outcome and
// verification.
// 1. Trajectory entries become events of the session (ids as one block from the event counter,
// none taken without entries). A repeated commit (safe to retry) does not append them again: a
// session keeps the trajectory it was first committed with.
CALL (s) {
  CALL (s) {
    WITH s WHERE size($entries) > 0
      AND NOT EXISTS { (s)-[:RECORDED]->(:Event {type: 'trajectory'}) }
    MERGE (c:Counter {name: 'event'}) ON CREATE SET c.value = 0
    SET c.value = c.value + size($entries)
    WITH s, c.value - size($entries) AS base
    UNWIND range(0, size($entries) - 1) AS i
    WITH s, $entries[i] AS entry, base + i + 1 AS n
    CREATE (e:Event {
      id: 'evt_' + toString(n), type: 'trajectory', kind: entry.kind, content: entry.summary,
      status: entry.status, position: entry.position, scope: s.scope, session_id: s.id,
      recorded_at: $now, occurred_at: $now, client_name: $client_name, client_version: $client_version
    })
    CREATE (s)-[:RECORDED]->(e)
    RETURN e
  }
  RETURN count(e) AS trajectory_events
}
// 2. One episode per session: a summary of the task, linked to every event of the session, and
// memories remembered in the session derive from it too (their evidence then includes the whole
// task). On a later commit of the same session the existing episode is updated, not duplicated.
CALL (s) {
  OPTIONAL MATCH (s)-[:FORMED]->(existing:Episode)
  CALL (s, existing) {
    WITH s, existing WHERE existing IS NULL
    MERGE (c:Counter {name: 'episode'}) ON CREATE SET c.value = 0
    SET c.value = c.value + 1
    CREATE (ep:Episode {id: 'ep_' + toString(c.value), scope: s.scope, session_id: s.id,
                        recorded_at: $now, occurred_at: s.started_at})
    CREATE (s)-[:FORMED]->(ep)
    RETURN ep, 1 AS formed
    UNION
    WITH existing WHERE existing IS NOT NULL
    RETURN existing AS ep, 0 AS formed
  }
  SET ep.content = 'Task: ' + coalesce(s.task, '(not recorded)') + '\n' + $episode.details,
      ep.outcome = $episode.outcome, ep.updated_at = $now
  WITH s, ep, formed
  CALL (s, ep) {
    MATCH (s)-[:RECORDED]->(e:Event)
    MERGE (ep)-[:DERIVED_FROM]->(e)
  }
  CALL (s, ep) {
    MATCH (s)-[:RECORDED]->(:Event)<-[:DERIVED_FROM]-(m:Memory)
    MERGE (m)-[:DERIVED_FROM]->(ep)
  }
  RETURN ep, formed
}
// 3. The procedure learned in the session: proc_<session_id>, derived from its episode. A newer
// procedure with the same deduplication_key in the scope supersedes the older one.
CALL (s, ep) {
  CALL (s, ep) {
    WITH s, ep, $procedure AS proc WHERE proc IS NOT NULL
    MATCH (scope:Scope {id: s.scope})
    MERGE (p:Procedure {id: 'proc_' + s.id})
      ON CREATE SET p.created_at = $now, p.status = 'active'
    SET p.scope = s.scope, p.session_id = s.id, p.goal = proc.goal, p.summary = proc.summary,
        p.context = proc.context, p.context_text = proc.context_text, p.steps = proc.steps,
        p.steps_text = proc.steps_text, p.caveats = proc.caveats,
        p.deduplication_key = proc.deduplication_key, p.outcome = proc.outcome,
        p.outcome_summary = proc.outcome_summary, p.scope_token = proc.scope_token,
        p.verification_status = proc.verification_status, p.updated_at = $now
    WITH ep, scope, proc, p
    CALL db.create.setNodeVectorProperty(p, 'embedding', proc.embedding) // float32 (schema.cypher)
    MERGE (p)-[:DERIVED_FROM]->(ep)
    MERGE (p)-[:IN_SCOPE]->(scope)
    WITH proc, p
    CALL (proc, p) {
      WITH proc, p WHERE proc.deduplication_key IS NOT NULL
      MATCH (old:Procedure {scope: p.scope, status: 'active'})
      WHERE old.deduplication_key = proc.deduplication_key AND old.id <> p.id
      SET old.status = 'superseded', old.superseded_at = $now
      MERGE (p)-[:SUPERSEDES {reason: 'deduplication_key', at: $now}]->(old)
    }
    RETURN p.id AS procedure_id
  }
  RETURN collect(procedure_id)[0] AS procedure_id
}
// 4. The session ends with its outcome (or the outcome of an ended one is updated). Procedures
// this session effectively used take its outcome as their most recent one — unless the agent said
// the procedure harmed the task: a success despite a procedure must not clear its record.
SET s.status = 'ended', s.final_goal = $close.final_goal, s.outcome = $close.outcome,
    s.outcome_summary = $close.outcome_summary, s.verification_status = $close.verification_status,
    s.verification_summary = $close.verification_summary, s.verification_refs = $close.verification_refs,
    s.ended_at = coalesce(s.ended_at, $now), s.committed_at = $now,
    s.end_reason = coalesce(s.end_reason, 'commit')
WITH s, ep, formed, procedure_id
CALL (s) {
  MATCH (s)-[:RETRIEVED]->(r:Retrieval)-[a:ASSESSED {status: 'accepted'}]->(p:Procedure)
  WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(p) WHERE b.seq > a.seq }
    AND a.use = 'used' AND coalesce(a.effect, 'unknown') <> 'harmed' AND p.id <> 'proc_' + s.id
  SET p.outcome = $close.outcome, p.outcome_summary = $close.outcome_summary, p.last_used_at = $now
}
RETURN ep.id AS episode_id, formed, procedure_id;
