// Analyst queries behind `slowave-graph demo seed` and the notebooks in notebooks/: the
// association graph, the feedback ledger, procedures and sessions of one scope. Every query is
// anchored on the Scope node (or the scope-indexed properties) and takes the scope as $scope.
// Times are returned as epoch milliseconds so notebooks need no driver-specific types.

// name: demo_scope_census
// What a scope holds before seeding the demo into it: memories, how many of them are not demo
// claims ($contents lists the demo's texts), sessions and procedures. Seeding refuses a scope with
// foreign memories, skips one that holds the demo already, and fills an empty one.
OPTIONAL MATCH (s:Scope {id: $scope})
RETURN s IS NOT NULL AS exists,
       COUNT { (s)<-[:IN_SCOPE]-(:Memory) } AS memories,
       COUNT { (s)<-[:IN_SCOPE]-(m:Memory) WHERE NOT m.content IN $contents } AS foreign,
       COUNT { (s)<-[:IN_SCOPE]-(:Session) } AS sessions,
       COUNT { (s)<-[:IN_SCOPE]-(ses:Session) WHERE ses.status = 'ended' } AS ended_sessions,
       COUNT { (s)<-[:IN_SCOPE]-(:Procedure) } AS procedures;

// name: demo_scope_summary
// One row of totals for a scope: memories by status, supersessions, sessions by outcome,
// retrievals, feedback events by status, co-use edges with their weights, procedures and tallies.
MATCH (s:Scope {id: $scope})
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(m:Memory)
  RETURN count(m) AS memories, count(CASE WHEN m.status = 'active' THEN 1 END) AS active,
         count(CASE WHEN m.status <> 'active' THEN 1 END) AS stale,
         COUNT { (s)<-[:IN_SCOPE]-(:Memory)-[:SUPERSEDES]->(:Memory) } AS supersessions
}
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(ses:Session)
  RETURN count(ses) AS sessions,
         count(CASE WHEN ses.outcome = 'success' THEN 1 END) AS succeeded,
         count(CASE WHEN ses.outcome = 'partial' THEN 1 END) AS partial,
         count(CASE WHEN ses.outcome = 'failure' THEN 1 END) AS failed,
         sum(COUNT { (ses)-[:RETRIEVED]->(:Retrieval) }) AS retrievals,
         sum(COUNT { (ses)-[:FORMED]->(:Episode) }) AS episodes
}
CALL (s) {
  OPTIONAL MATCH (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)-[a:ASSESSED]->()
  RETURN count(a) AS assessments, count(CASE WHEN a.status = 'accepted' THEN 1 END) AS accepted
}
CALL (s) {
  OPTIONAL MATCH (s)<-[:IN_SCOPE]-(:Memory)-[e:ASSOCIATED]->(:Memory)
  WHERE e.weight > 0
  RETURN count(e) AS associations, avg(e.weight) AS mean_weight, max(e.weight) AS max_weight
}
CALL (s) {
  OPTIONAL MATCH (s)<-[:IN_SCOPE]-(p:Procedure)
  RETURN count(p) AS procedures, count(CASE WHEN p.status = 'active' THEN 1 END) AS active_procedures,
         sum(coalesce(p.tally_helped, 0)) AS procedure_helped,
         sum(coalesce(p.tally_harmed, 0)) AS procedure_harmed
}
RETURN memories, active, stale, supersessions, sessions, succeeded, partial, failed, retrievals,
       episodes, assessments, accepted, associations, mean_weight, max_weight, procedures,
       active_procedures, procedure_helped, procedure_harmed;

// name: nb_memories
// Every memory of the scope with what learning made of it (salience and the counts behind it).
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
RETURN m.id AS id, m.content AS content, m.type AS type, m.status AS status,
       m.salience AS salience, coalesce(m.helped_count, 0) AS helped,
       coalesce(m.harmed_count, 0) AS harmed, coalesce(m.used_count, 0) AS used,
       m.stale_reason AS stale_reason, m.created_at.epochMillis AS created_ms
ORDER BY m.created_at, m.id;

// name: nb_association_edges
// The co-use graph: one row per ASSOCIATED edge between two memories of the scope (an edge whose
// supporting retrievals were all retracted keeps weight 0 and is left out).
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(a:Memory)-[e:ASSOCIATED]->(b:Memory)
WHERE e.weight > 0
RETURN a.id AS source, b.id AS target, e.weight AS weight, size(e.retrievals) AS co_uses,
       e.source AS origin, e.updated_at.epochMillis AS updated_ms
ORDER BY weight DESC, source, target;

// name: nb_feedback_ledger
// The feedback ledger of the scope in order: every ASSESSED event (accepted and rejected) on a
// memory or procedure, with the session (task) whose retrieval it judged.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(ses:Session)-[:RETRIEVED]->(r:Retrieval)-[a:ASSESSED]->(t)
RETURN a.seq AS seq, a.event_id AS event_id, a.created_at.epochMillis AS created_ms,
       ses.id AS session_id, ses.started_at.epochMillis AS session_started_ms, r.id AS retrieval_id,
       CASE WHEN t:Memory THEN 'memory' ELSE 'procedure' END AS target_kind, t.id AS target_id,
       coalesce(a.assessment, a.use) AS assessment, a.effect AS effect, a.status AS status,
       a.stale_reason AS stale_reason
ORDER BY seq;

// name: nb_supersessions
// Correction chains: which memory replaced which, why and when (the old one stays, marked stale).
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(new:Memory)-[s:SUPERSEDES]->(old:Memory)
RETURN new.id AS new_id, new.content AS new_content, old.id AS old_id, old.content AS old_content,
       old.status AS old_status, s.reason AS reason, s.at.epochMillis AS at_ms,
       coalesce(old.harmed_count, 0) AS old_harmed
ORDER BY at_ms;

// name: nb_procedures
// Procedures of the scope with their outcome, their replacement status (deduplication_key) and
// the use/effect tallies recomputed from the ledger.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(p:Procedure)
RETURN p.id AS id, p.goal AS goal, p.summary AS summary, p.deduplication_key AS key,
       p.status AS status, p.outcome AS outcome, p.created_at.epochMillis AS created_ms,
       coalesce(p.tally_used, 0) AS used, coalesce(p.tally_not_used, 0) AS not_used,
       coalesce(p.tally_helped, 0) AS helped, coalesce(p.tally_no_effect, 0) AS no_effect,
       coalesce(p.tally_harmed, 0) AS harmed
ORDER BY created_ms;

// name: nb_sessions
// The tasks of the scope in the order they started, with outcome and how much they retrieved.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(ses:Session)
RETURN ses.id AS id, ses.task AS task, ses.status AS status, ses.outcome AS outcome,
       ses.started_at.epochMillis AS started_ms, ses.ended_at.epochMillis AS ended_ms,
       COUNT { (ses)-[:RETRIEVED]->(:Retrieval) } AS retrievals,
       EXISTS { (:Procedure {id: 'proc_' + ses.id}) } AS formed_procedure
ORDER BY started_ms, id;

// name: nb_concepts
// The scope's concepts: what its memories are about, with how many active memories mention each
// (df) and the scope's count of active memories (the N of the walk's log((N + 1) / (df + 0.5))).
MATCH (s:Scope {id: $scope})<-[:IN_SCOPE]-(c:Concept)
RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df, s.active_memories AS active_memories
ORDER BY df DESC, key;

// name: nb_mentions
// The memory-concept graph: one row per MENTIONS edge of an active memory of the scope.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory {status: 'active'})-[r:MENTIONS]->(c:Concept)
RETURN m.id AS memory, c.key AS concept, r.weight AS weight
ORDER BY memory, concept;
