// Read-only queries behind the dashboard (/ui). Every page is anchored on an id or on a Scope node
// (index-backed), pages through results with $skip/$limit, and never returns embeddings.
// The scope overview reuses stats_scopes (stats.cypher); procedure details reuse procedure_details
// (retrieval.cypher).

// name: dashboard_memories
// Memories of a scope, newest first, optionally of one status (active, stale). Reached from the
// Scope node, so a scope with few memories in a large database stays cheap.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
WHERE $status IS NULL OR m.status = $status
RETURN m.id AS id, m.content AS content, m.type AS type, m.status AS status,
       m.salience AS salience, m.created_at AS created_at,
       coalesce(m.used_count, 0) AS used, coalesce(m.helped_count, 0) AS helped,
       coalesce(m.harmed_count, 0) AS harmed, coalesce(m.reinforced_count, 0) AS reinforced,
       null AS score
ORDER BY m.created_at DESC, toInteger(substring(m.id, 4)) DESC
SKIP $skip
LIMIT $limit;

// name: dashboard_memory_search
// Full-text search over a scope's memories (BM25, memory_text index). $lucene requires the
// scope's token inside the index (see fulltext_memory in schema.cypher) and carries only quoted
// \w+ terms built by the caller; the WHERE repeats the scope check on the real property and applies
// the optional status filter.
CALL db.index.fulltext.queryNodes('memory_text', $lucene, {limit: $limit}) YIELD node AS m, score
WHERE m.scope = $scope AND ($status IS NULL OR m.status = $status)
RETURN m.id AS id, m.content AS content, m.type AS type, m.status AS status,
       m.salience AS salience, m.created_at AS created_at,
       coalesce(m.used_count, 0) AS used, coalesce(m.helped_count, 0) AS helped,
       coalesce(m.harmed_count, 0) AS harmed, coalesce(m.reinforced_count, 0) AS reinforced,
       score
ORDER BY score DESC, id;

// name: dashboard_memory_status_counts
// How many memories of a scope are in each status (the filter tabs show these numbers).
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
RETURN m.status AS status, count(*) AS count
ORDER BY status;

// name: dashboard_memory
// One memory's own properties (without its embedding) and how often it was shown.
MATCH (m:Memory {id: $id})
RETURN m {.id, .content, .type, .status, .scope, .salience, .confidence, .created_at, .occurred_at,
          .stale_reason, .stale_at, .stale_event_id, .stale_correction_id, .suppressed_from,
          .suppressed_at, .stage, .validated_scopes, .validated_sessions, .reinforced_count,
          .last_reinforced_at,
          .integration, .integration_version, .used_count, .helped_count, .harmed_count} AS memory,
       COUNT { (:Retrieval)-[:EXPOSED]->(m) } AS exposures;

// name: dashboard_memory_provenance
// Where a memory comes from: the events (who said it, when, through which client) and the episodes
// of committed sessions it derives from, oldest first, with the task of the session.
MATCH (m:Memory {id: $id})-[:DERIVED_FROM]->(src)
WHERE src:Event OR src:Episode
OPTIONAL MATCH (ses:Session {id: src.session_id})
RETURN src.id AS id, CASE WHEN src:Episode THEN 'episode' ELSE 'event' END AS kind,
       src.type AS type, src.content AS content, src.recorded_at AS recorded_at,
       src.occurred_at AS occurred_at, src.client_name AS client_name,
       src.client_version AS client_version, src.session_id AS session_id, ses.task AS task
ORDER BY recorded_at, id;

// name: dashboard_memory_supersession
// The whole correction chain a memory belongs to (SUPERSEDES edges in either direction, up to 10
// hops): each edge says which memory replaced which, why and through which feedback event.
MATCH (m:Memory {id: $id})
CALL (m) {
  MATCH (m)-[:SUPERSEDES*0..10]-(x:Memory)
  RETURN collect(DISTINCT x) AS chain
}
UNWIND chain AS newer
MATCH (newer)-[s:SUPERSEDES]->(older:Memory)
WHERE older IN chain
RETURN newer.id AS newer_id, newer.content AS newer_content, newer.status AS newer_status,
       older.id AS older_id, older.content AS older_content, older.status AS older_status,
       s.reason AS reason, s.at AS at, s.feedback_event_id AS feedback_event_id
ORDER BY at;

// name: dashboard_memory_ledger
// The feedback history of a memory: every assessment event (accepted and rejected), newest first,
// with the retrieval that exposed it; effective marks the latest accepted event per retrieval —
// the one learning counts.
MATCH (r:Retrieval)-[a:ASSESSED]->(m:Memory {id: $id})
RETURN a.event_id AS event_id, a.seq AS seq, a.status AS status, a.assessment AS assessment,
       a.effect AS effect, a.relevance AS relevance, a.stale_reason AS stale_reason,
       a.replacement_memory_id AS replacement_memory_id, a.reason AS reason,
       a.rejection_reason AS rejection_reason, a.created_at AS created_at,
       a.client_name AS client_name, r.id AS retrieval_id, r.kind AS retrieval_kind,
       r.query AS query, r.session_id AS session_id,
       // a lesson is assessed from other scopes too: the page shows a token only its granted ones
       r.scope AS retrieval_scope,
       a.status = 'accepted'
         AND NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq } AS effective
ORDER BY a.seq DESC
LIMIT $limit;

// name: dashboard_memory_neighbourhood
// A memory's neighbourhood for the graph view: memories one hop away over ASSOCIATED (learned
// co-use), NEXT (remembered in sequence) and SUPERSEDES (corrections), the strongest first, then
// one more hop from those; and every such edge among the nodes shown. At most $limit per hop.
MATCH (m:Memory {id: $id})
CALL (m) {
  OPTIONAL MATCH (m)-[r:ASSOCIATED|NEXT|SUPERSEDES]-(n:Memory)
  WITH n, max(coalesce(r.weight, 0.5)) AS strength ORDER BY strength DESC, n.id
  LIMIT $limit
  RETURN collect(n) AS ring1
}
CALL (m, ring1) {
  UNWIND ring1 AS n1
  MATCH (n1)-[r:ASSOCIATED|NEXT|SUPERSEDES]-(n2:Memory)
  WHERE n2 <> m AND NOT n2 IN ring1
  WITH n2, max(coalesce(r.weight, 0.5)) AS strength ORDER BY strength DESC, n2.id
  LIMIT $limit
  RETURN collect(n2) AS ring2
}
WITH m, ring1, ring2, [m] + ring1 + ring2 AS shown
CALL (shown) {
  UNWIND shown AS a
  MATCH (a)-[r:ASSOCIATED|NEXT|SUPERSEDES]->(b:Memory)
  WHERE b IN shown
  RETURN collect({source: a.id, target: b.id, type: type(r), weight: r.weight}) AS edges
}
RETURN [x IN shown | {id: x.id, content: x.content, status: x.status, type: x.type,
                      hop: CASE WHEN x = m THEN 0 WHEN x IN ring1 THEN 1 ELSE 2 END}] AS nodes,
       edges;

// name: dashboard_retrievals
// The retrievals (activations and recalls) of a scope, newest first, with how much of what they
// exposed has an accepted assessment and whether coverage was declared complete.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(r:Retrieval)
RETURN r.id AS id, r.kind AS kind, r.query AS query, r.created_at AS created_at,
       r.session_id AS session_id, r.relevant_total AS relevant_total,
       r.pages_served AS pages_served, r.retrieval_quality AS retrieval_quality,
       COUNT { (r)-[:EXPOSED]->() } AS exposed,
       COUNT { (r)-[:EXPOSED]->(t) WHERE EXISTS { (r)-[:ASSESSED {status: 'accepted'}]->(t) } } AS assessed,
       coalesce(r.complete_exposures, -1) = COUNT { (r)-[:EXPOSED]->() } AS complete
ORDER BY r.created_at DESC, r.id DESC
SKIP $skip
LIMIT $limit;

// name: dashboard_retrieval
// One retrieval: its question, policy and coverage state, and the task of its session.
MATCH (r:Retrieval {id: $id})
OPTIONAL MATCH (s:Session {id: r.session_id})
RETURN r {.id, .kind, .query, .scope, .session_id, .created_at, .policy_version, .relevant_total,
          .catalog_truncated, .pages_served, .page_size, .retrieval_quality, .missing,
          .complete_exposures, .complete_declared_at} AS retrieval,
       size(coalesce(r.catalog_ids, [])) AS catalog_size, s.task AS task, s.status AS session_status;

// name: dashboard_retrieval_exposures
// Exactly what a retrieval showed — page, rank, pathway — and every assessment of each shown item,
// in ledger order (the last accepted one is effective), with the scope each item lives in.
MATCH (r:Retrieval {id: $id})-[x:EXPOSED]->(t)
CALL (r, t) {
  OPTIONAL MATCH (r)-[a:ASSESSED]->(t)
  WITH a ORDER BY a.seq
  RETURN collect(a {.event_id, .seq, .status, .assessment, .use, .effect, .relevance, .stale_reason,
                    .replacement_memory_id, .reason, .contribution, .rejection_reason, .coverage,
                    .created_at}) AS events
}
RETURN t.id AS target_id, CASE WHEN t:Procedure THEN 'procedure' ELSE 'memory' END AS kind,
       coalesce(t.content, t.goal) AS content, t.status AS status, x.page AS page, x.rank AS rank,
       x.pathway AS pathway, x.at AS at, events,
       // a lesson of another scope shown here (generalisation.cypher): the page hides it from
       // a token not granted that scope
       t.scope AS scope
ORDER BY page, rank;

// name: dashboard_procedures
// The procedures of a scope, newest first, with what superseded what (deduplication_key); the page
// loads their full details and helped/harmed tallies with procedure_details.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(p:Procedure)
RETURN p.id AS id, p.status AS status, p.session_id AS session_id, p.updated_at AS updated_at,
       p.last_used_at AS last_used_at, p.verification_status AS verification_status,
       COUNT { (:Retrieval)-[:EXPOSED]->(p) } AS exposures,
       [(p)-[:SUPERSEDES]->(o:Procedure) | o.id] AS supersedes,
       [(n:Procedure)-[:SUPERSEDES]->(p) | n.id] AS superseded_by
ORDER BY p.created_at DESC, p.id DESC
LIMIT $limit;

// name: dashboard_sessions
// Sessions of a scope as a timeline, newest first: task, outcome, how it ended, and how much it
// retrieved and recorded.
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(s:Session)
RETURN s {.id, .task, .initial_goal, .final_goal, .status, .outcome, .outcome_summary, .started_at,
          .ended_at, .end_reason, .client_name, .client_version, .verification_status,
          .verification_summary} AS session,
       COUNT { (s)-[:RETRIEVED]->() } AS retrievals, COUNT { (s)-[:RECORDED]->() } AS events,
       [(s)-[:FORMED]->(e:Episode) | e.id][0] AS episode_id,
       [(s)-[:CONTINUES]->(c:Continuity) | c.id][0] AS continuity_id,
       EXISTS { MATCH (p:Procedure {id: 'proc_' + s.id}) } AS has_procedure
ORDER BY s.started_at DESC, s.id DESC
SKIP $skip
LIMIT $limit;

// name: dashboard_session
// One session with its episode (formed at commit) and its continuity line.
MATCH (s:Session {id: $id})
OPTIONAL MATCH (s)-[:FORMED]->(e:Episode)
OPTIONAL MATCH (s)-[:CONTINUES]->(c:Continuity)
RETURN s {.id, .scope, .task, .initial_goal, .final_goal, .status, .outcome, .outcome_summary,
          .started_at, .ended_at, .end_reason, .client_name, .client_version, .verification_status,
          .verification_summary, .verification_refs, .task_context} AS session,
       e {.id, .content, .outcome} AS episode, c.id AS continuity_id,
       EXISTS { MATCH (p:Procedure {id: 'proc_' + s.id}) } AS has_procedure;

// name: dashboard_session_timeline
// What happened in a session, in time order: the events it recorded (remembered claims with the
// memories they produced, trajectory steps) and the retrievals it made.
MATCH (s:Session {id: $id})
CALL (s) {
  MATCH (s)-[:RECORDED]->(e:Event)
  RETURN e.recorded_at AS at, 'event' AS kind, e.id AS id, coalesce(e.kind, e.type) AS type,
         e.content AS text, e.status AS status, [(m:Memory)-[:DERIVED_FROM]->(e) | m.id] AS links
  UNION ALL
  MATCH (s)-[:RETRIEVED]->(r:Retrieval)
  RETURN r.created_at AS at, 'retrieval' AS kind, r.id AS id, r.kind AS type, r.query AS text,
         null AS status, [] AS links
}
RETURN at, kind, id, type, text, status, links
ORDER BY at, id
LIMIT $limit;
