// The analyst's catalog: read-only questions about the memory graph. Run them in Neo4j Browser or
// cypher-shell (set the parameters first, e.g. `:param memory_id => 'sch_12'`), or by name with
// `slowave-graph cypher run NAME --param memory_id=sch_12` (always in a read transaction).
// Each query declares its parameters on `// param: name type [= default] — meaning` lines
// (types: string, int, float, bool, list, datetime — a datetime is an ISO 8601 string with an
// offset, e.g. 2026-03-01T09:30:00Z). Columns are flat and named for dashboards. Every query is
// anchored on one node found through a uniqueness constraint (a memory, retrieval, session or
// scope id), so none of them scans the whole database.

// name: memory_provenance
// Where a memory came from: one row per source record it derives from — the remember events
// that stated it (several when the same claim was remembered again) and the episodes of the
// sessions that committed — with the session behind each record, its task and outcome, and the
// client that made the call. origin marks the event that created the memory.
// param: memory_id string — the memory, e.g. sch_12
MATCH (m:Memory {id: $memory_id})-[:DERIVED_FROM]->(src)
WHERE src:Event OR src:Episode
OPTIONAL MATCH (ses:Session)-[:RECORDED|FORMED]->(src)
RETURN m.id AS memory_id, m.scope AS scope, m.status AS status, m.content AS content,
       CASE WHEN src:Episode THEN 'episode' ELSE 'event' END AS source_kind, src.id AS source_id,
       src.id = m.origin_event_id AS origin, src.type AS event_type, src.content AS source_content,
       src.recorded_at AS recorded_at, src.occurred_at AS occurred_at,
       ses.id AS session_id, ses.task AS session_task, ses.status AS session_status,
       ses.outcome AS session_outcome, coalesce(src.client_name, ses.client_name) AS client_name,
       coalesce(src.client_version, ses.client_version) AS client_version
ORDER BY recorded_at, source_kind DESC, source_id;

// name: memory_supersession_chain
// The correction chain a memory belongs to: every memory linked to it by SUPERSEDES (newer
// replaces older; the old one stays, stale), oldest first, each with what replaced it, when and
// why, and the feedback event that did it.
// param: memory_id string — any memory of the chain
MATCH (m:Memory {id: $memory_id})
MATCH (m)-[:SUPERSEDES*0..100]-(x:Memory)
WITH DISTINCT x
OPTIONAL MATCH (newer:Memory)-[s:SUPERSEDES]->(x)
RETURN x.id AS memory_id, x.content AS content, x.status AS status, x.created_at AS created_at,
       x.stale_reason AS stale_reason, x.stale_at AS retired_at, newer.id AS superseded_by,
       s.reason AS reason, s.at AS superseded_at, s.feedback_event_id AS feedback_event_id
ORDER BY created_at, memory_id;

// name: beliefs_as_of
// What the scope believed at a moment: memories recorded by then (created_at, the time the
// remember event was recorded) and not yet retired then — a stale or superseded memory counts as
// believed until the feedback that retired it (stale_at = the supersession time). $topic keeps
// memories whose text contains it (case-insensitive); null keeps all. Also shows what happened
// to each belief later.
// param: scope string — e.g. project:shop
// param: as_of datetime — the moment, e.g. 2026-03-01T09:30:00Z
// param: topic string = null — a word or phrase the memory must contain
// param: limit int = 100 — at most this many rows
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
WHERE m.created_at <= datetime($as_of)
  AND (m.stale_at IS NULL OR m.stale_at > datetime($as_of))
  AND ($topic IS NULL OR toLower(m.content) CONTAINS toLower($topic))
OPTIONAL MATCH (newer:Memory)-[:SUPERSEDES]->(m)
RETURN m.id AS memory_id, m.content AS content, m.type AS type, m.created_at AS believed_since,
       m.status AS status_now, m.stale_reason AS stale_reason, m.stale_at AS retired_at,
       newer.id AS superseded_by
ORDER BY believed_since, memory_id
LIMIT $limit;

// name: memory_feedback_ledger
// Every assessment a memory received, in ledger order: accepted and rejected events, with the
// retrieval (and its question) that showed the memory. effective marks the latest accepted event
// per retrieval — the one salience and co-use learning count.
// param: memory_id string — the memory, e.g. sch_12
MATCH (r:Retrieval)-[a:ASSESSED]->(m:Memory {id: $memory_id})
RETURN a.event_id AS event_id, a.seq AS seq, a.created_at AS created_at, r.id AS retrieval_id,
       r.kind AS retrieval_kind, r.query AS query, r.session_id AS session_id, a.status AS status,
       a.rejection_reason AS rejection_reason, a.assessment AS assessment, a.effect AS effect,
       a.relevance AS relevance, a.stale_reason AS stale_reason,
       a.replacement_memory_id AS replacement_memory_id, a.reason AS reason, a.coverage AS coverage,
       a.refines AS refines,
       a.status = 'accepted'
         AND NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq } AS effective,
       a.client_name AS client_name
ORDER BY seq;

// name: retrieval_feedback_ledger
// Every assessment recorded against one retrieval (memories and procedures), in ledger order.
// assessment is the memory assessment or the procedure use; effective as in memory_feedback_ledger.
// param: retrieval_id string — a ctx_… (activate) or rec_… (recall) id
MATCH (r:Retrieval {id: $retrieval_id})-[a:ASSESSED]->(t)
RETURN a.event_id AS event_id, a.seq AS seq, a.created_at AS created_at,
       CASE WHEN t:Procedure THEN 'procedure' ELSE 'memory' END AS target_kind, t.id AS target_id,
       a.status AS status, a.rejection_reason AS rejection_reason,
       coalesce(a.assessment, a.use) AS assessment, a.effect AS effect, a.relevance AS relevance,
       a.stale_reason AS stale_reason, a.replacement_memory_id AS replacement_memory_id,
       a.reason AS reason, a.contribution AS contribution, a.coverage AS coverage, a.refines AS refines,
       a.status = 'accepted'
         AND NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(t) WHERE b.seq > a.seq } AS effective
ORDER BY seq;

// name: retrieval_summary
// One retrieval at a glance: its question, session, policy, catalog size, pages served, what it
// exposed, how much feedback it got and whether coverage was declared complete.
// param: retrieval_id string — a ctx_… (activate) or rec_… (recall) id
MATCH (r:Retrieval {id: $retrieval_id})
OPTIONAL MATCH (ses:Session)-[:RETRIEVED]->(r)
RETURN r.id AS retrieval_id, r.kind AS kind, r.query AS query, r.scope AS scope,
       r.session_id AS session_id, ses.task AS session_task, r.created_at AS created_at,
       r.policy_version AS policy_version, r.relevant_total AS relevant_total,
       r.catalog_truncated AS catalog_truncated, r.page_size AS page_size, r.pages_served AS pages_served,
       COUNT { (r)-[:EXPOSED]->(:Memory) } AS exposed_memories,
       COUNT { (r)-[:EXPOSED]->(:Procedure) } AS exposed_procedures,
       COUNT { (r)-[:ASSESSED {status: 'accepted'}]->() } AS accepted_events,
       COUNT { (r)-[:ASSESSED {status: 'rejected'}]->() } AS rejected_events,
       coalesce(r.complete_exposures, -1) = COUNT { (r)-[:EXPOSED]->() } AS coverage_complete,
       r.retrieval_quality AS retrieval_quality, coalesce(r.missing, []) AS missing;

// name: retrieval_exposures
// Exactly what a retrieval showed, page by page in rank order, and how each item was assessed:
// the effective (latest accepted) assessment, its effect and event, and how many ledger events
// (accepted or rejected) the item got from this retrieval.
// param: retrieval_id string — a ctx_… (activate) or rec_… (recall) id
MATCH (r:Retrieval {id: $retrieval_id})-[x:EXPOSED]->(t)
CALL (r, t) {
  OPTIONAL MATCH (r)-[a:ASSESSED {status: 'accepted'}]->(t)
  WITH a ORDER BY a.seq DESC
  RETURN collect(a)[0] AS effective
}
RETURN x.page AS page, x.rank AS rank, CASE WHEN t:Procedure THEN 'procedure' ELSE 'memory' END AS kind,
       t.id AS target_id, coalesce(t.content, t.goal) AS text, x.pathway AS pathway,
       x.association AS association, x.at AS exposed_at,
       coalesce(effective.assessment, effective.use) AS assessment, effective.effect AS effect,
       effective.event_id AS event_id, COUNT { (r)-[:ASSESSED]->(t) } AS ledger_events,
       t.status AS status_now
ORDER BY page, kind, rank;

// name: memory_associations
// A memory's association neighbourhood: the memories linked to it by learned ASSOCIATED edges
// (co-use: assessed used together), strongest first, with the weight (1 - 0.5^co_uses when it last
// changed, then decayed by its age since updated_at as of the last maintenance pass: co_use_strength
// in retrieval.cypher), how many retrievals support the edge and when it last changed.
// param: memory_id string — the memory, e.g. sch_12
// param: min_weight float = 0.0 — leave out weaker edges
// param: limit int = 25 — at most this many neighbours
MATCH (m:Memory {id: $memory_id})-[e:ASSOCIATED]-(n:Memory)
WHERE e.weight >= $min_weight
RETURN n.id AS memory_id, n.content AS content, n.status AS status, e.weight AS weight,
       size(coalesce(e.retrievals, [])) AS co_uses, e.source AS source, e.created_at AS created_at,
       e.updated_at AS updated_at
ORDER BY weight DESC, memory_id
LIMIT $limit;

// name: memory_neighbourhood
// The association graph around a memory as edges (for drawing): every ASSOCIATED edge among the
// memory and the memories within two association hops of it.
// param: memory_id string — the memory at the centre
// param: min_weight float = 0.0 — leave out weaker edges
// param: limit int = 200 — at most this many edges
MATCH (m:Memory {id: $memory_id})
OPTIONAL MATCH (m)-[:ASSOCIATED*1..2]-(n:Memory)
WITH m, collect(DISTINCT n) AS near
WITH [m] + near AS nodes
UNWIND nodes AS a
MATCH (a)-[e:ASSOCIATED]->(b:Memory)
WHERE b IN nodes AND e.weight >= $min_weight
RETURN a.id AS source_id, b.id AS target_id, e.weight AS weight,
       size(coalesce(e.retrievals, [])) AS co_uses, e.updated_at AS updated_at
ORDER BY weight DESC, source_id, target_id
LIMIT $limit;

// name: memory_concepts
// What a memory is about: the concepts it mentions (named things and key terms, see
// services/concepts.py), each with how many active memories of the scope mention it (df) and the
// weight retrieval's walk gives it, log((N + 1) / (df + 0.5)) for a scope of N active memories —
// a name in half the scope weighs next to nothing.
// param: memory_id string — the memory, e.g. sch_12
MATCH (m:Memory {id: $memory_id})-[r:MENTIONS]->(c:Concept)
OPTIONAL MATCH (s:Scope {id: m.scope})
WITH m, r, c, toFloat(coalesce(s.active_memories, 0)) AS total
RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df, r.weight AS mention_weight,
       CASE WHEN c.df > 0 THEN r.weight * log((total + 1.0) / (c.df + 0.5)) END AS walk_weight
ORDER BY c.df = 0, walk_weight DESC, name;

// name: concept_memories
// The memories that talk about one concept of a scope, newest first. The concept is named as
// stored (any case, e.g. "Keystone vault") or by its key (memory_concepts shows both).
// param: scope string — e.g. project:shop
// param: concept string — the concept's name or key
// param: include_stale bool = false — also memories no longer active
// param: limit int = 50 — at most this many memories
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(c:Concept)
WHERE c.key = $concept OR toLower(c.name) = toLower($concept)
MATCH (c)<-[r:MENTIONS]-(m:Memory)
WHERE $include_stale OR m.status = 'active'
RETURN c.name AS concept, c.df AS df, m.id AS memory_id, m.content AS content, m.status AS status,
       r.weight AS weight, m.created_at AS created_at
ORDER BY created_at DESC, memory_id
LIMIT $limit;

// name: scope_concepts
// A scope's concepts by how many active memories mention them: the hubs at the top (retrieval
// does not walk through those above hub_share of the scope) and what the scope is mostly about.
// param: scope string — e.g. project:shop
// param: kind string = null — entity or term; null for both
// param: limit int = 50 — at most this many concepts
MATCH (s:Scope {id: $scope})<-[:IN_SCOPE]-(c:Concept)
WHERE $kind IS NULL OR c.kind = $kind
RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df,
       toFloat(c.df) / CASE WHEN coalesce(s.active_memories, 0) > 0 THEN s.active_memories ELSE 1 END
         AS share
ORDER BY df DESC, name
LIMIT $limit;

// name: memories_linked_by_concepts
// Why the graph links two memories: the concepts both mention, most specific first (smallest
// df) — what an associated hit's provenance names.
// param: memory_id string — one memory, e.g. sch_12
// param: other_id string — the other, e.g. sch_40
MATCH (a:Memory {id: $memory_id})-[:MENTIONS]->(c:Concept)<-[:MENTIONS]-(b:Memory {id: $other_id})
RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df
ORDER BY df, name;

// name: procedures_by_outcome
// The scope's procedures grouped by the outcome of their most recent recorded use (success first),
// each with its helped/harmed record from the effective feedback, how often it was shown, and the
// procedure that superseded it, if any.
// param: scope string — e.g. project:shop
// param: outcome string = null — only this outcome (success, partial, failure, unknown); null for all
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(p:Procedure)
WHERE $outcome IS NULL OR p.outcome = $outcome
OPTIONAL MATCH (newer:Procedure)-[:SUPERSEDES]->(p)
WITH p, newer, coalesce(p.tally_helped, 0) AS helped, coalesce(p.tally_harmed, 0) AS harmed
RETURN p.id AS procedure_id, p.goal AS goal, p.summary AS summary, p.status AS status,
       p.outcome AS outcome, p.outcome_summary AS outcome_summary,
       p.verification_status AS verification_status, coalesce(p.tally_used, 0) AS used, helped, harmed,
       coalesce(p.tally_no_effect, 0) AS no_effect, coalesce(p.tally_not_used, 0) AS not_used,
       helped - harmed AS net_helped, COUNT { (:Retrieval)-[:EXPOSED]->(p) } AS times_exposed,
       p.session_id AS learned_in_session, p.created_at AS created_at, p.last_used_at AS last_used_at,
       newer.id AS superseded_by
ORDER BY CASE p.outcome WHEN 'success' THEN 0 WHEN 'partial' THEN 1 WHEN 'failure' THEN 2 ELSE 3 END,
         net_helped DESC, created_at, procedure_id;

// name: scope_overview
// One row of totals for a scope: memories by status, supersessions, associations, procedures,
// sessions, retrievals, the feedback ledger, evidence, and the last activity.
// param: scope string — e.g. project:shop
MATCH (s:Scope {id: $scope})
CALL (s) {
  OPTIONAL MATCH (s)<-[:IN_SCOPE]-(ses:Session)
  RETURN count(ses) AS sessions, count(CASE WHEN ses.status = 'open' THEN 1 END) AS open_sessions,
         max(coalesce(ses.ended_at, ses.last_seen_at)) AS last_activity
}
RETURN s.id AS scope, s.kind AS kind, s.created_at AS created_at,
       COUNT { (s)<-[:IN_SCOPE]-(:Memory {status: 'active'}) } AS active_memories,
       COUNT { (s)<-[:IN_SCOPE]-(m:Memory) WHERE m.status <> 'active' } AS stale_memories,
       COUNT { (s)<-[:IN_SCOPE]-(:Memory)-[:SUPERSEDES]->(:Memory) } AS supersessions,
       COUNT { (s)<-[:IN_SCOPE]-(:Memory)-[:ASSOCIATED]->(:Memory) } AS associations,
       COUNT { (s)<-[:IN_SCOPE]-(:Concept) } AS concepts,
       COUNT { (s)<-[:IN_SCOPE]-(:Procedure {status: 'active'}) } AS active_procedures,
       COUNT { (s)<-[:IN_SCOPE]-(p:Procedure) WHERE p.status <> 'active' } AS superseded_procedures,
       sessions, open_sessions,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval) } AS retrievals,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)-[:ASSESSED {status: 'accepted'}]->() }
         AS accepted_feedback,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval)-[:ASSESSED {status: 'rejected'}]->() }
         AS rejected_feedback,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:RECORDED]->(:Event) } AS events,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:FORMED]->(:Episode) } AS episodes,
       last_activity;

// name: scope_sessions
// The scope's sessions, newest first: task, status, outcome, when, and what each one did
// (memories it remembered, retrievals, whether it formed an episode and a procedure).
// param: scope string — e.g. project:shop
// param: limit int = 50 — at most this many sessions
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(ses:Session)
RETURN ses.id AS session_id, ses.task AS task, ses.status AS status, ses.outcome AS outcome,
       ses.end_reason AS end_reason, ses.started_at AS started_at, ses.ended_at AS ended_at,
       COUNT { (ses)-[:RECORDED]->(:Event {type: 'remember'}) } AS remembered,
       COUNT { (ses)-[:RETRIEVED]->(:Retrieval) } AS retrievals,
       EXISTS { (ses)-[:FORMED]->(:Episode) } AS formed_episode,
       EXISTS { MATCH (p:Procedure {id: 'proc_' + ses.id}) } AS learned_procedure,
       ses.client_name AS client_name
ORDER BY started_at DESC, session_id
LIMIT $limit;

// name: session_timeline
// What one session did, in time order: the events it recorded (remember calls, trajectory
// entries), its retrievals (activate, recall) and the episode its commit formed.
// param: session_id string — e.g. sess_7
MATCH (ses:Session {id: $session_id})
CALL (ses) {
  MATCH (ses)-[:RECORDED]->(e:Event)
  RETURN e.recorded_at AS at, 'event' AS kind, e.id AS id, e.type AS detail, e.content AS text
  UNION ALL
  MATCH (ses)-[:RETRIEVED]->(r:Retrieval)
  RETURN r.created_at AS at, 'retrieval' AS kind, r.id AS id, r.kind AS detail, r.query AS text
  UNION ALL
  MATCH (ses)-[:FORMED]->(ep:Episode)
  RETURN ep.recorded_at AS at, 'episode' AS kind, ep.id AS id, ep.outcome AS detail, ep.content AS text
}
RETURN at, kind, id, detail, text
ORDER BY at, kind DESC, id;

// name: stale_memories
// Retired memories of the scope, most recently retired first: why (outdated, superseded, …),
// what replaced them, and the feedback event and retrieval that retired them.
// param: scope string — e.g. project:shop
// param: limit int = 100 — at most this many rows
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
WHERE m.status <> 'active'
OPTIONAL MATCH (newer:Memory)-[:SUPERSEDES]->(m)
OPTIONAL MATCH (r:Retrieval)-[a:ASSESSED]->(m)
WHERE a.event_id = m.stale_event_id
RETURN m.id AS memory_id, m.content AS content, m.stale_reason AS stale_reason, m.stale_at AS retired_at,
       newer.id AS superseded_by, newer.content AS replacement, a.reason AS reason,
       m.stale_event_id AS event_id, r.id AS retrieval_id
ORDER BY retired_at DESC, memory_id
LIMIT $limit;

// name: never_used_memories
// Active memories that no accepted feedback ever marked used, most often shown first: shown and
// passed over (candidates for review), or never shown at all.
// param: scope string — e.g. project:shop
// param: limit int = 100 — at most this many rows
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory {status: 'active'})
WHERE NOT EXISTS { (:Retrieval)-[:ASSESSED {status: 'accepted', assessment: 'used'}]->(m) }
WITH m, COUNT { (:Retrieval)-[:EXPOSED]->(m) } AS times_exposed
RETURN m.id AS memory_id, m.content AS content, m.type AS type, m.created_at AS created_at,
       times_exposed, COUNT { (:Retrieval)-[:ASSESSED {status: 'accepted'}]->(m) } AS assessments,
       m.salience AS salience
ORDER BY times_exposed DESC, created_at, memory_id
LIMIT $limit;

// name: most_used_memories
// The scope's most useful memories: effectively used most often (latest accepted assessment per
// retrieval), with helped/harmed counts, salience, how often shown and when last used.
// param: scope string — e.g. project:shop
// param: limit int = 20 — at most this many rows
MATCH (:Scope {id: $scope})<-[:IN_SCOPE]-(m:Memory)
WHERE coalesce(m.used_count, 0) > 0
CALL (m) {
  MATCH (:Retrieval)-[a:ASSESSED {status: 'accepted', assessment: 'used'}]->(m)
  RETURN max(a.created_at) AS last_used_at
}
RETURN m.id AS memory_id, m.content AS content, m.status AS status, m.used_count AS used,
       coalesce(m.helped_count, 0) AS helped, coalesce(m.harmed_count, 0) AS harmed,
       m.salience AS salience, COUNT { (:Retrieval)-[:EXPOSED]->(m) } AS times_exposed, last_used_at
ORDER BY used DESC, helped DESC, memory_id
LIMIT $limit;
