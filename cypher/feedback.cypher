// The feedback ledger: every assessment is an immutable ASSESSED relationship from a retrieval to
// the memory or procedure it exposed. The latest accepted one per (retrieval, target) is effective;
// salience, procedure tallies and co-use associations are recomputed from the effective ones, so
// repeating a call changes nothing and a later not_used retracts an earlier used.

// name: feedback_context
// What a feedback call is checked against: the retrieval's scope and exactly what it exposed
// (pages served so far), plus which of the named targets exist in that scope. A retrieval belongs
// to the principal whose session made it: another principal's is not found (see touch_session).
MATCH (r:Retrieval {id: $retrieval_id})
WHERE coalesce(r.principal, 'local') = $principal
RETURN r.scope AS scope, r.session_id AS session_id,
       COLLECT { MATCH (r)-[:EXPOSED]->(m:Memory) RETURN m.id } AS exposed_memories,
       COLLECT { MATCH (r)-[:EXPOSED]->(p:Procedure) RETURN p.id } AS exposed_procedures,
       COLLECT { UNWIND $memory_ids AS mid MATCH (m:Memory {id: mid})
                 RETURN {id: m.id, scope: m.scope, status: m.status} } AS memories,
       COLLECT { UNWIND $procedure_ids AS pid MATCH (p:Procedure {id: pid})
                 RETURN {id: p.id, scope: p.scope} } AS procedures;

// name: write_feedback
// The writes of one feedback call, after its check (feedback_context) in the same transaction, as
// one statement: one round trip instead of up to six. The parts run in order and each sees what
// the parts before it wrote; each aggregates to one row, so an empty part (no events, nothing to
// retire, no memory or procedure to relearn) passes the row on and writes nothing.
// The 'feedback' counter's write lock, taken in part 1 and held until commit, also serialises the
// read-then-write recomputations of parts 3-5 between concurrent calls (docs/performance.md).
MATCH (r:Retrieval {id: $retrieval_id})
// 1. The ledger events of the call. Ids come as one block from the 'feedback' counter (one locked
// bump per call, none for a call without events), and seq orders events for "latest wins". refines
// names the event a new accepted assessment replaces as effective. Targets are matched by label,
// never by a bare id.
CALL (r) {
  CALL (r) {
    WITH r WHERE size($events) > 0
    MERGE (c:Counter {name: 'feedback'}) ON CREATE SET c.value = 0
    SET c.value = c.value + size($events)
    WITH r, c.value - size($events) AS base
    UNWIND range(0, size($events) - 1) AS i
    WITH r, $events[i] AS ev, base + i + 1 AS seq
    CALL (r, ev) {
      OPTIONAL MATCH (m:Memory {id: ev.target_id}) WHERE ev.target_kind = 'memory'
      OPTIONAL MATCH (p:Procedure {id: ev.target_id}) WHERE ev.target_kind = 'procedure'
      RETURN coalesce(m, p) AS target
    }
    WITH r, ev, seq, target WHERE target IS NOT NULL
    OPTIONAL MATCH (r)-[prev:ASSESSED {status: 'accepted'}]->(target)
    WITH r, ev, seq, target, prev ORDER BY prev.seq DESC
    WITH r, ev, seq, target, collect(prev)[0] AS effective
    CREATE (r)-[a:ASSESSED]->(target)
    SET a = ev.properties, a.event_id = 'fbe_' + toString(seq), a.seq = seq, a.created_at = $now,
        a.client_name = $client_name, a.client_version = $client_version,
        a.refines = CASE WHEN ev.properties.status = 'accepted' THEN effective.event_id END
    RETURN ev.index AS index, a.event_id AS event_id, a.status AS status
  }
  RETURN collect({index: index, event_id: event_id, status: status}) AS recorded
}
// 2. stale assessments retire memories ($retire items name their event by its index in $events):
// status stale, active_key removed (an identical claim may be remembered again later), and when a
// replacement is named (required for superseded, allowed for any stale_reason) a SUPERSEDES edge
// from it. The old memory stays in the graph, only its
// status changes. Already-retired memories are left alone.
CALL (recorded) {
  UNWIND $retire AS item
  WITH item, [x IN recorded WHERE x.index = item.index | x.event_id][0] AS event_id
  MATCH (m:Memory {id: item.memory_id})
  WHERE m.status = 'active'
  SET m.status = 'stale', m.stale_reason = item.stale_reason, m.stale_at = $now,
      m.stale_event_id = event_id
  REMOVE m.active_key
  WITH m, item, event_id
  CALL (m, item, event_id) {
    WITH m, item, event_id WHERE item.replacement_id IS NOT NULL
    MATCH (n:Memory {id: item.replacement_id})
    CREATE (n)-[:SUPERSEDES {reason: item.reason, at: $now, feedback_event_id: event_id}]->(m)
  }
  // include: unlink_concepts
  RETURN collect(m.id) AS retired
}
// 3. Salience of each memory ($memory_ids: those with a new accepted assessment) from its
// effective assessments across all retrievals: used+helped raises it, used+harmed lowers it
// (weighted more), everything else is neutral — irrelevant is about one question, not the memory,
// so it does not move salience. salience = 0.5 + 0.5 * tanh((helped - 1.5 * harmed) / 3).
CALL () {
  UNWIND $memory_ids AS mid
  MATCH (m:Memory {id: mid})
  CALL (m) {
    OPTIONAL MATCH (r:Retrieval)-[a:ASSESSED {status: 'accepted'}]->(m)
    WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq }
    RETURN sum(CASE WHEN a.assessment = 'used' AND coalesce(a.effect, 'helped') = 'helped' THEN 1 ELSE 0 END)
             AS helped,
           sum(CASE WHEN a.assessment = 'used' AND a.effect = 'harmed' THEN 1 ELSE 0 END) AS harmed,
           sum(CASE WHEN a.assessment = 'used' THEN 1 ELSE 0 END) AS used
  }
  WITH m, m.salience AS before, helped, harmed, used, (helped - 1.5 * harmed) / 3.0 AS x
  SET m.salience = 0.5 + 0.5 * (1.0 - 2.0 / (exp(2.0 * x) + 1.0)), // 0.5 + 0.5 * tanh(x)
      m.helped_count = helped, m.harmed_count = harmed, m.used_count = used
  RETURN collect({id: m.id, before: before, after: m.salience}) AS learning
}
// 4. Association learning for this retrieval (when a memory was assessed): memories it exposed
// that are effectively 'used' together get an ASSOCIATED edge (one per pair, directed from the
// smaller id) that lists the retrievals of their co-use, weight = 1 - 0.5^count. A retraction
// removes the retrieval from the edges it no longer supports. Anchored on the retrieval's
// exposures, never a scan of all edges. The maintenance pass later stores the weight decayed by the
// edge's age (co_use_strength in retrieval.cypher), and a new co-use or retraction restarts it here.
CALL (r) {
  CALL (r) {
    WITH r WHERE size($memory_ids) > 0
    CALL (r) {
      MATCH (r)-[a:ASSESSED {status: 'accepted'}]->(m:Memory)
      WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq }
        AND a.assessment = 'used' AND m.status = 'active'
        // a lesson of another scope shown here joins no co-use of this scope (no edge joins scopes)
        AND m.scope = r.scope
      RETURN collect(m) AS used
    }
    CALL (r, used) {
      UNWIND used AS x
      UNWIND used AS y
      WITH r, x, y WHERE x.id < y.id
      MERGE (x)-[e:ASSOCIATED]->(y)
        ON CREATE SET e.retrievals = [], e.created_at = $now, e.source = 'co_use'
      WITH r, e WHERE NOT r.id IN e.retrievals
      SET e.retrievals = e.retrievals + r.id, e.updated_at = $now
      SET e.weight = 1.0 - 0.5 ^ size(e.retrievals)
    }
    CALL (r, used) {
      MATCH (r)-[:EXPOSED]->(x:Memory)-[e:ASSOCIATED]-(y:Memory)
      WHERE r.id IN e.retrievals AND NOT (x IN used AND y IN used)
      WITH DISTINCT r, e
      SET e.retrievals = [id IN e.retrievals WHERE id <> r.id], e.updated_at = $now
      SET e.weight = CASE WHEN size(e.retrievals) = 0 THEN 0.0 ELSE 1.0 - 0.5 ^ size(e.retrievals) END
    }
    RETURN size(used) AS used
  }
  RETURN sum(used) AS co_used
}
// 5. Use/effect tallies of each procedure ($procedure_ids) from its effective assessments across
// all retrievals.
CALL () {
  UNWIND $procedure_ids AS pid
  MATCH (p:Procedure {id: pid})
  CALL (p) {
    OPTIONAL MATCH (r:Retrieval)-[a:ASSESSED {status: 'accepted'}]->(p)
    WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(p) WHERE b.seq > a.seq }
    RETURN sum(CASE WHEN a.use = 'used' THEN 1 ELSE 0 END) AS used,
           sum(CASE WHEN a.use = 'not_used' THEN 1 ELSE 0 END) AS not_used,
           sum(CASE WHEN a.use = 'unassessable' THEN 1 ELSE 0 END) AS unassessable,
           sum(CASE WHEN a.use = 'used' AND a.effect = 'helped' THEN 1 ELSE 0 END) AS helped,
           sum(CASE WHEN a.use = 'used' AND a.effect = 'no_effect' THEN 1 ELSE 0 END) AS no_effect,
           sum(CASE WHEN a.use = 'used' AND a.effect = 'harmed' THEN 1 ELSE 0 END) AS harmed,
           sum(CASE WHEN a.use = 'used' AND coalesce(a.effect, 'unknown') = 'unknown' THEN 1 ELSE 0 END)
             AS unknown
  }
  SET p.tally_used = used, p.tally_not_used = not_used, p.tally_unassessable = unassessable,
      p.tally_helped = helped, p.tally_no_effect = no_effect, p.tally_harmed = harmed,
      p.tally_unknown = unknown
  RETURN count(p) AS tallied
}
// 6. Whole-result notes and the coverage state after the call. learned marks retrievals whose
// feedback later questions can inherit (experience_lessons in retrieval.cypher): those with an
// effective used or irrelevant mark on a memory. Neutral marks (not_used, unassessable,
// already_known) teach nothing and leave a retrieval unlearned, and one whose last lesson they
// replaced is unlearned again and leaves the experience index. A retrieval that becomes learned
// is marked experience_pending: index_pending_experience moves it into the experience vector
// index later, in a batch (experience_search compares pending ones exactly, so the lesson counts
// from the next question on). complete_exposures records how many exposures a successful complete
// declaration covered: pages served later reopen the retrieval.
// include: holds_lesson
SET r.learned = CASE WHEN size($memory_ids) = 0 THEN r.learned ELSE holds_lesson END,
    r.retrieval_quality = coalesce($retrieval_quality, r.retrieval_quality),
    r.missing = coalesce(r.missing, []) + coalesce($missing, [])
WITH r, recorded, retired, learning
CALL (r) {
  WITH r WHERE r.learned = true AND r.experience_embedding IS NULL AND r.query_embedding IS NOT NULL
  SET r.experience_pending = true
}
CALL (r) {
  WITH r WHERE r.learned = false AND (r.experience_embedding IS NOT NULL OR r.experience_pending)
  REMOVE r.experience_embedding, r.experience_pending
}
WITH r, recorded, retired, learning,
     COLLECT { MATCH (r)-[:EXPOSED]->(m:Memory)
               WHERE NOT EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(m) } RETURN m.id } AS memory_ids,
     COLLECT { MATCH (r)-[:EXPOSED]->(p:Procedure)
               WHERE NOT EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(p) } RETURN p.id } AS procedure_ids,
     COUNT { (r)-[:EXPOSED]->() } AS exposures
WITH r, recorded, retired, learning, memory_ids, procedure_ids, exposures,
     $declare_complete AND size(memory_ids) = 0 AND size(procedure_ids) = 0 AS completes
SET r.complete_exposures = CASE WHEN completes THEN exposures ELSE r.complete_exposures END,
    r.complete_declared_at = CASE WHEN completes THEN $now ELSE r.complete_declared_at END
RETURN recorded, retired, learning,
       {memory_ids: memory_ids, procedure_ids: procedure_ids,
        complete: coalesce(r.complete_exposures, -1) = exposures} AS coverage,
       r.experience_pending IS NOT NULL AS experience_pending;

// name: holds_lesson
// fragment: expects `r` (a retrieval) bound, keeps every variable bound and adds `holds_lesson`.
// Whether r holds a lesson later questions can inherit (experience_lessons in retrieval.cypher): an
// effective (latest accepted) used or irrelevant mark on a memory (neutral marks teach nothing).
// write_feedback sets r.learned from it, and the maintenance pass clears learned where it is false
// (stores written before this rule marked every retrieval with feedback).
WITH *, EXISTS {
  MATCH (r)-[lesson:ASSESSED {status: 'accepted'}]->(taught:Memory)
  WHERE lesson.assessment IN ['used', 'irrelevant']
    AND NOT EXISTS { (r)-[later:ASSESSED {status: 'accepted'}]->(taught) WHERE later.seq > lesson.seq }
} AS holds_lesson

// name: index_pending_experience
// Moves up to $limit retrievals marked experience_pending by write_feedback into the experience
// vector index: their query vector copied to experience_embedding (float32, see schema.cypher).
// Why later and in batches: a vector index commits each write transaction as a Lucene segment of
// its own (flushed, then merged), a cost a copy per feedback call would pay on every call; a batch
// pays it once (docs/performance.md, "Design choices, with their measured effect"). The (scope,
// experience_pending) index holds exactly the pending retrievals. Locks are taken in id order, and
// the copy is re-checked once the lock is held: two servers' indexers moving the same batch wait for
// each other instead of deadlocking, and the second writes nothing. Returns how many it took off
// the pending list (fewer than $limit: none left).
MATCH (r:Retrieval)
WHERE r.scope IS NOT NULL AND r.experience_pending = true
WITH r ORDER BY r.id LIMIT $limit
REMOVE r.experience_pending
WITH r, r.experience_embedding IS NULL AND r.query_embedding IS NOT NULL AS copy
CALL (r, copy) {
  WITH r WHERE copy
  CALL db.create.setNodeVectorProperty(r, 'experience_embedding', r.query_embedding)
}
RETURN count(r) AS moved;
