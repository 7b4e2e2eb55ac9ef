// Finding memories: direct hits (vector + full-text), associated hits (graph traversal).
// Every memory search returns one row, `hits`: a list of maps with the same keys, so the ranking
// code treats them alike. One list instead of a row per hit because the Python driver builds a
// Record for every row, and its CPU grows with the rows (docs/performance.md, "Design choices,
// with their measured effect").
// occurred_at is the memory's time (when it happened, else when it was recorded), in epoch
// seconds, for questions that name a date.
// A stored vector is read once per row (`WITH m, m.embedding AS v`) before it is compared with
// the cues: `[e IN $embeddings | vector.similarity.cosine(m.embedding, e)]` reads the property
// again for every cue, and each read of a 384-d vector costs Neo4j CPU (docs/performance.md,
// "Design choices, with their measured effect").

// name: vector_search_filtered
// Neo4j 2026.01+: Cypher 25 SEARCH filters on scope and status inside the vector index, so the
// k nearest are the k nearest of this scope. One hit per (query vector, memory); the vector index
// reports (1 + cosine) / 2, converted back to cosine here.
// The live count is load-bearing: on Neo4j 2026.09.0 a filtered SEARCH whose LIMIT exceeds the
// live nodes its filter matches, in an index that has seen deletions, fails inside the server and
// never answers — the client waits forever (docs/managed-neo4j.md). So the scope's active
// memories are counted, reading at most $search_from (= 2 * $k) index entries, and SEARCH only
// runs for a scope that has at least that many; a smaller scope is scanned exactly, which returns
// its true top-k and, for a few dozen memories, costs about as much as the search.
// The scan's seek is keyed on the guard (its scope is null unless the scan is the branch taken):
// with a plain {scope: $scope} the planner seeks first and tests `live` on every row after, so a
// search would also read every index entry of the scope, only to drop them (docs/performance.md,
// "Design choices, with their measured effect").
CYPHER 25
WITH size(COLLECT { MATCH (m:Memory {scope: $scope, status: 'active'}) RETURN m.id LIMIT $search_from })
     AS live
CALL (live) {
  WITH live WHERE live >= $search_from
  UNWIND range(0, size($embeddings) - 1) AS qi
  MATCH (m:Memory)
    SEARCH m IN (
      VECTOR INDEX memory_embedding FOR $embeddings[qi]
      WHERE m.scope = $scope AND m.status = 'active'
      LIMIT $k
    ) SCORE AS score
  RETURN qi, m, score
  UNION ALL
  WITH live WHERE 0 < live AND live < $search_from
  MATCH (m:Memory {scope: CASE WHEN live < $search_from THEN $scope END, status: 'active'})
  WITH m, m.embedding AS v
  UNWIND range(0, size($embeddings) - 1) AS qi
  WITH qi, m, vector.similarity.cosine(v, $embeddings[qi]) AS score ORDER BY score DESC
  WITH qi, collect({m: m, score: score})[..$k] AS hits
  UNWIND hits AS hit
  RETURN qi, hit.m AS m, hit.score AS score
}
RETURN collect({
  qi: qi, id: m.id, cosine: 2 * score - 1, content: m.content, type: m.type, salience: m.salience,
  integration: m.integration, integration_version: m.integration_version,
  occurred_at: coalesce(m.occurred_at, m.created_at).epochSeconds
}) AS hits;

// name: vector_search_overfetch
// Neo4j 5.26, a scope too large to scan: the index cannot filter, so fetch more neighbours than
// needed ($fetch ≥ $k, chosen from the scope's share of all memories, see vector_scan_scope) and
// filter afterwards. The caller widens $fetch until $k hits survive or the whole index was read.
// queryNodes scores come from the (quantized) index and are approximate: survivors are rescored
// exactly, so this path ranks on the same scale as the others.
UNWIND range(0, size($embeddings) - 1) AS qi
CALL db.index.vector.queryNodes('memory_embedding', $fetch, $embeddings[qi]) YIELD node AS m
WITH qi, m
WHERE m.scope = $scope AND m.status = 'active'
WITH qi, m, vector.similarity.cosine(m.embedding, $embeddings[qi]) AS score ORDER BY score DESC
WITH qi, collect({m: m, score: score})[..$k] AS hits
UNWIND hits AS hit
WITH qi, hit.m AS m, hit.score AS score
RETURN collect({
  qi: qi, id: m.id, cosine: 2 * score - 1, content: m.content, type: m.type, salience: m.salience,
  integration: m.integration, integration_version: m.integration_version,
  occurred_at: coalesce(m.occurred_at, m.created_at).epochSeconds
}) AS hits;

// name: vector_scan_scope
// Neo4j 5.26, one auto-commit round trip for most scopes. The scope's active memories are counted
// up to $scan_max + 1 from index entries alone (returning m.id here would read every node), and a
// scope of at most $scan_max is compared exactly — its true top-k per query vector — in the same
// statement. A larger scope gets no hits (its seek key is null) but its full size and the
// database's, which the caller's over-fetch from the global index needs
// (vector_search_overfetch); the CASE counts it only then. Exact is cheaper up to a few thousand
// memories, the over-fetch beyond (docs/performance.md, "Design choices, with their measured
// effect"). $scan_max -1 asks for the sizes alone.
WITH COUNT { MATCH (m:Memory {scope: $scope, status: 'active'}) RETURN m LIMIT $scan_max + 1 } AS live
RETURN live,
  CASE WHEN live > $scan_max THEN COUNT { MATCH (m:Memory {scope: $scope, status: 'active'}) } END
    AS scope_count,
  COUNT { MATCH (:Memory) } AS total_count,
  COLLECT {
    MATCH (m:Memory {scope: CASE WHEN live <= $scan_max THEN $scope END, status: 'active'})
    WITH m, m.embedding AS v
    UNWIND range(0, size($embeddings) - 1) AS qi
    WITH qi, m, vector.similarity.cosine(v, $embeddings[qi]) AS similarity
    ORDER BY similarity DESC
    WITH qi, collect({m: m, similarity: similarity})[..$k] AS top
    UNWIND top AS hit
    WITH qi, hit.m AS m, hit.similarity AS similarity
    // vector.similarity.cosine also reports (1 + cosine) / 2
    RETURN {
      qi: qi, id: m.id, cosine: 2 * similarity - 1, content: m.content, type: m.type,
      salience: m.salience, integration: m.integration, integration_version: m.integration_version,
      occurred_at: coalesce(m.occurred_at, m.created_at).epochSeconds
    }
  } AS hits;

// name: fulltext_search
// BM25 over memory text. $lucene requires scope_token and status:active inside the index (see
// fulltext_memory in schema.cypher); the WHERE repeats the check on the real properties.
// Each lexical hit also gets its cosine to every query vector (cue), so admission judges it on
// the same scale as the vector hits.
CALL db.index.fulltext.queryNodes('memory_text', $lucene, {limit: $k}) YIELD node AS m, score
WHERE m.scope = $scope AND m.status = 'active'
WITH m, score, m.embedding AS v
RETURN collect({
  id: m.id, bm25: score, similarities: [e IN $embeddings | 2 * vector.similarity.cosine(v, e) - 1],
  content: m.content, type: m.type, salience: m.salience, integration: m.integration,
  integration_version: m.integration_version,
  occurred_at: coalesce(m.occurred_at, m.created_at).epochSeconds
}) AS hits;

// name: candidate_context
// What the graph says around the candidates, in one round trip (concept_walk runs beside it):
// - neighbours: the episodic context of the best candidates ($context_ids) — memories recorded
//   right before or after them in a session (NEXT), active and in the scope, with their best
//   cosine to the cues. Retrieval lets a strong neighbour lift a candidate's rank (the answer
//   often sits next to the turn that names the topic) and admit it at a lower floor.
// - associations: memories linked by learned ASSOCIATED edges to any candidate ($associate_ids), same
//   scope, active, each with the links whose decayed strength (co_use_strength: half-life
//   $half_life_days since the edge last changed) reaches $min_strength. Associated hits hang off
//   *admitted* direct hits, which are a subset of the pool not known until the neighbours are
//   ranked; the caller keeps the links of admitted seeds — so one read replaces two dependent ones.
// Each cosine is computed once per (memory, cue), on the stored vector read once per memory.
CALL () {
  UNWIND $context_ids AS id
  MATCH (:Memory {id: id})-[:NEXT]-(n:Memory)
  WHERE n.status = 'active' AND n.scope = $scope
  WITH id, n, n.embedding AS v
  WITH id, n, [e IN $embeddings | vector.similarity.cosine(v, e)] AS similarities
  // vector.similarity.cosine reports (1 + cosine) / 2 in [0, 1], so no cue at all gives -1
  RETURN collect({
    id: id, neighbour: n.id,
    cosine: 2 * reduce(best = 0.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) - 1
  }) AS neighbours
}
CALL () {
  UNWIND $associate_ids AS seed_id
  MATCH (:Memory {id: seed_id})-[e:ASSOCIATED]-(m:Memory)
  WHERE m.scope = $scope AND m.status = 'active'
  // include: co_use_strength
  WITH m, seed_id, strength
  WHERE strength >= $min_strength
  WITH m, collect({seed: seed_id, strength: strength}) AS links
  RETURN collect({
    id: m.id, links: links, content: m.content, type: m.type, salience: m.salience,
    integration: m.integration, integration_version: m.integration_version
  }) AS associations
}
RETURN neighbours, associations;

// name: co_use_strength
// fragment: expects `e` (an ASSOCIATED edge) bound, keeps every variable bound and adds `strength`.
// Learned co-use as retrieval weighs it and the maintenance pass stores it in e.weight: the base
// 1 - 0.5^(retrievals that used the pair together), halved every $half_life_days since the edge
// last changed (updated_at: write_feedback sets it whenever it adds or retracts a co-use, and
// writes the base as the weight then). $half_life_days 0: no decay. Computed from the base, never
// from e.weight, so a stored weight is not decayed twice and passes never compound. An edge dated
// after $now (another server's clock) is not decayed.
WITH *,
     CASE WHEN size(coalesce(e.retrievals, [])) = 0 THEN 0.0 ELSE 1.0 - 0.5 ^ size(e.retrievals) END
     * CASE WHEN $half_life_days > 0 AND e.updated_at < $now
            THEN 0.5 ^ (duration.inSeconds(e.updated_at, $now).seconds / 86400.0 / $half_life_days)
            ELSE 1.0 END AS strength

// name: concept_walk
// Spreading activation over concepts, from the seeds ($seeds: the best direct
// candidates, weights summing to 1) to the concepts they mention, each seed's weight shared
// among its concepts by IDF (log((N + 1) / (df + 0.5)) in a scope of N active memories), then
// from each concept to every active memory of the scope that mentions it, shared among them
// (1 / df). A concept of one memory connects nothing; a hub — in more than $hub_share of the
// scope (and 2) or $hub_max memories, a speaker or the project's name — is not walked at all, so it
// neither dilutes the walk nor costs a read of half the scope. At most $concept_fanout concepts
// (the most activated) and $walk_k memories (the most reached): the walk's cost is bounded
// however large the scope grows. Each walked memory comes with the concepts it was reached
// through (its provenance as an associated hit) and its cosine to each cue.
// A statement of its own, sent at the same time as candidate_context (each on its own pooled
// connection): the walk then costs its own time or the context's, whichever is longer, not both.
OPTIONAL MATCH (home:Scope {id: $scope})
WITH toFloat(coalesce(home.active_memories, 0)) AS total
// the hub bound: $hub_share of the scope, but at least 2 (in a small scope every concept
// would be a hub: there a concept of two memories still connects them, the project's name in
// three of ten does not) and at most $hub_max (the fan-out of one concept)
WITH total, CASE WHEN total * $hub_share < 2 THEN 2
                 WHEN total * $hub_share > $hub_max THEN $hub_max
                 ELSE total * $hub_share END AS hub
UNWIND $seeds AS seed
MATCH (:Memory {id: seed.id})-[r:MENTIONS]->(c:Concept)
WHERE c.df >= 2 AND c.df <= hub
WITH total, seed, c, r.weight * log((total + 1.0) / (c.df + 0.5)) AS w
WITH seed, collect({c: c, w: w}) AS links, sum(w) AS spread
UNWIND links AS link
WITH link.c AS c, sum(seed.weight * link.w / spread) AS activation, collect(seed.id) AS seeds
ORDER BY activation DESC, c.key
LIMIT $concept_fanout
MATCH (c)<-[:MENTIONS]-(m:Memory)
WHERE m.status = 'active' AND m.scope = $scope
WITH m, c, activation / c.df AS share, seeds
ORDER BY share DESC
WITH m, sum(share) AS walk, collect({key: c.key, name: c.name, share: share, seeds: seeds})[..3] AS paths
ORDER BY walk DESC, m.id
LIMIT $walk_k
// candidates already in the pool need their activation only (their cosines are known), of the
// others, the $outside_k most reached — possible associated hits — come with what an answer shows
WITH collect({m: m, walk: walk, paths: paths}) AS reached
WITH reached, [r IN reached WHERE NOT r.m.id IN $pool_ids][..$outside_k] AS outside
CALL (outside) {
  UNWIND outside AS r
  WITH r, r.m AS m, r.m.embedding AS v
  RETURN collect({
    id: m.id, walk: r.walk, paths: r.paths,
    similarities: [e IN $embeddings | 2 * vector.similarity.cosine(v, e) - 1],
    content: m.content, type: m.type, salience: m.salience, integration: m.integration,
    integration_version: m.integration_version
  }) AS described
}
RETURN [r IN reached WHERE r.m.id IN $pool_ids | {id: r.m.id, walk: r.walk, paths: r.paths}] + described
       AS walked;

// name: experience_lessons
// fragment: expects `r` (a learned retrieval of $scope) and `similarity` (its question's to the
// closest cue, on the model's question scale) bound, one row per retrieval.
// What the $k most similar earlier questions taught, one row per lesson: the effective (latest
// accepted) assessment of a memory still active, when it is a lesson for this question — used
// (helped, no_effect or harmed), or irrelevant from a question at least $irrelevant_at similar
// (irrelevant is about one question: for a less similar one it says nothing). Neutral
// assessments (not_used, unassessable, already_known) teach nothing, so a retrieval that holds
// only them neither takes one of the $k places nor brings its memories into the candidate pool:
// honest not_used feedback leaves every later catalog as it was. Ties go to the retrieval id, so
// equal stores give equal catalogs.
CALL (r, similarity) {
  MATCH (r)-[a:ASSESSED {status: 'accepted'}]->(m:Memory)
  WHERE m.status = 'active' AND m.scope = $scope
    AND (a.assessment = 'used' OR (a.assessment = 'irrelevant' AND similarity >= $irrelevant_at))
    AND NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq }
  RETURN collect({m: m, a: a}) AS lessons
}
WITH r, similarity, lessons WHERE size(lessons) > 0
WITH similarity, lessons ORDER BY similarity DESC, r.id LIMIT $k
UNWIND lessons AS lesson
WITH lesson.m AS m, lesson.a AS a, similarity
WITH m, a, similarity, m.embedding AS v
RETURN m.id AS id, similarity, a.assessment AS assessment, a.effect AS effect,
       [e IN $embeddings | 2 * vector.similarity.cosine(v, e) - 1] AS similarities,
       m.content AS content, m.type AS type, m.salience AS salience,
       m.integration AS integration, m.integration_version AS integration_version;

// name: experience
// What feedback on earlier, similar questions of this scope taught (experience_lessons): the
// lessons of the most similar past retrievals that have any, for memories that are still active.
// This form, for Neo4j 5.26, is an exact cosine scan; on 2026.01+ experience_search finds them
// through a vector index. The scan reads the $window most recent learned retrievals of the scope
// (newest first through the (scope, learned, created_at) index): each read costs Neo4j CPU, and a
// scope gains one with every feedback that teaches something, so an unbounded scan would grow
// without end (docs/performance.md, "Design choices, with their measured effect"). Older lessons
// still act through the learning stored on the memories themselves.
MATCH (r:Retrieval {scope: $scope, learned: true})
WHERE r.created_at IS NOT NULL
WITH r ORDER BY r.created_at DESC LIMIT $window
WITH r, r.query_embedding AS v
WITH r, [e IN $embeddings | vector.similarity.cosine(v, e)] AS similarities
WITH r, 2 * reduce(best = 0.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) - 1
        AS similarity
WHERE similarity >= $min_similarity
// include: experience_lessons

// name: experience_search
// experience through the vector index of learned retrievals' query vectors (Neo4j 2026.01+): per
// cue the $search_k nearest learned retrievals of this scope, filtered inside the index; the best
// over the cues is each one's similarity. Their union holds the scan's top-$k (a retrieval in that
// top-$k is within its best cue's nearest) unless more than $search_k - $k retrievals nearer to that
// cue teach nothing for this question (irrelevant marks from a less similar one): $search_k is
// 4 * $k, so lessons found agree with the scan's. The scan reads every learned retrieval of the
// scope and grows with every feedback ever given; the search stays cheap (docs/performance.md,
// "Design choices, with their measured effect"). Like vector_search_filtered, SEARCH only runs
// when the scope has at least $search_from (= 2 * $search_k) learned retrievals (a LIMIT above the
// live matches can hang Neo4j 2026.09.0); fewer are compared exactly, through a seek keyed on the
// guard (see vector_search_filtered: otherwise every search also read all of the scope's learned
// retrievals).
// Retrievals whose feedback has not yet been moved into the index (experience_pending, see
// index_pending_experience) are compared exactly too, so a lesson counts from the next question
// on. One that the batch moves while this statement runs may come from two branches: its best
// similarity is kept.
CYPHER 25
WITH size(COLLECT {
       MATCH (r:Retrieval {scope: $scope, learned: true}) WHERE r.experience_embedding IS NOT NULL
       RETURN r.id LIMIT $search_from
     }) AS live
CALL (live) {
  WITH live WHERE live >= $search_from
  UNWIND $embeddings AS e
  MATCH (r:Retrieval)
    SEARCH r IN (
      VECTOR INDEX retrieval_experience_embedding FOR e
      WHERE r.scope = $scope
      LIMIT $search_k
    ) SCORE AS score
  RETURN r, max(2 * score - 1) AS similarity
  UNION ALL
  WITH live WHERE 0 < live AND live < $search_from
  MATCH (r:Retrieval {scope: CASE WHEN live < $search_from THEN $scope END, learned: true})
  WHERE r.experience_embedding IS NOT NULL
  WITH r, r.experience_embedding AS v
  WITH r, [e IN $embeddings | vector.similarity.cosine(v, e)] AS similarities
  RETURN r, 2 * reduce(best = 0.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) - 1
         AS similarity
  UNION ALL
  MATCH (r:Retrieval {scope: $scope, experience_pending: true})
  WITH r, r.query_embedding AS v
  WITH r, [e IN $embeddings | vector.similarity.cosine(v, e)] AS similarities
  RETURN r, 2 * reduce(best = 0.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) - 1
         AS similarity
}
WITH r, max(similarity) AS similarity
WHERE similarity >= $min_similarity
// include: experience_lessons

// name: freeze_retrieval
// fragment: expects `ses` (an open session) bound; leaves `r` (the new retrieval) bound.
// Freezes a retrieval of an open session: the ordered catalog (memory ids + pathways, procedure
// ids; pages are cut from it by a pure function, so replays are identical), the exposures of page
// 1 — exactly what the agent is shown, memories and procedures — and, when more is available, the
// cursor for page 2.
CREATE (r:Retrieval {
  id: $retrieval_id, principal: $principal, kind: $kind, query: $query, policy_version: $policy_version,
  scope: $scope, session_id: ses.id, page_size: $page_size, created_at: $now,
  catalog_ids: $catalog_ids, catalog_pathways: $catalog_pathways,
  catalog_associations: $catalog_associations, catalog_links: $catalog_links,
  catalog_procedures: $catalog_procedures,
  relevant_total: $relevant_total, catalog_truncated: $catalog_truncated, pages_served: 1
})
CREATE (ses)-[:RETRIEVED]->(r)
WITH *
CALL (r) { // the first cue's vector, float32 (schema.cypher), none when nothing was searched
  WITH r WHERE $query_embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(r, 'query_embedding', $query_embedding)
}
CALL (r) {
  UNWIND $page_memories AS item
  MATCH (m:Memory {id: item.id})
  CREATE (r)-[:EXPOSED {rank: item.rank, pathway: item.pathway, association: item.association, page: 1,
                        at: $now}]->(m)
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

// name: create_retrieval
// A recall's retrieval, frozen (freeze_retrieval) in the transaction that guards its session and
// merges the call's task_context into it (activate freezes its first one in activate_session; a
// recall without a task_context in recall_retrieval).
MATCH (ses:Session {id: $session_id})
// include: freeze_retrieval
RETURN r.id AS retrieval_id;

// name: recall_retrieval
// A recall without a task_context, stored in one auto-commit statement (one round trip instead of
// BEGIN, two statements and COMMIT): the session guard (touch_session), then, if the session is
// this scope's and open, the retrieval frozen (freeze_retrieval). The caller turns a refusal
// (no row values, another scope, not open) into its error; a refused call writes nothing but the
// guard's lazy close of a session found idle.
// Idempotent on $retrieval_id, so a retry after a connection lost mid-commit stores nothing twice:
// a stored retrieval is reported as stored.
OPTIONAL MATCH (done:Retrieval {id: $retrieval_id})
OPTIONAL CALL (done) {
  WITH done WHERE done IS NULL
  // include: touch_session
  WITH s
  OPTIONAL CALL (s) {
    WITH s AS ses WHERE ses.scope = $scope AND ses.status = 'open'
    // include: freeze_retrieval
    RETURN r.id AS stored
  }
  RETURN s.scope AS scope, s.status AS status, stored
}
RETURN CASE WHEN done IS NULL THEN scope ELSE done.scope END AS scope,
       CASE WHEN done IS NULL THEN status ELSE 'open' END AS status,
       coalesce(done.id, stored) AS retrieval_id;

// name: cursor_for_call
// A continuation cursor and the frozen retrieval it pages through; another principal's is not
// found (see touch_session).
MATCH (cur:Cursor {id: $cursor_id})-[:CONTINUES]->(r:Retrieval)
WHERE coalesce(r.principal, 'local') = $principal
RETURN cur.session_id AS session_id, cur.scope AS scope, cur.page AS page,
       r.id AS retrieval_id, r.catalog_ids AS catalog_ids, r.catalog_pathways AS catalog_pathways,
       r.catalog_associations AS catalog_associations, r.catalog_links AS catalog_links,
       // before procedures were paged: none in the catalog (the exposed ones were all on page 1)
       r.catalog_procedures AS catalog_procedures,
       r.page_size AS page_size, r.relevant_total AS relevant_total,
       r.catalog_truncated AS catalog_truncated, r.policy_version AS policy_version, r.query AS query;

// name: expose_page
// Serves page $page of a frozen retrieval: its items become exposed (and so feedback-eligible).
// MERGE makes a replayed cursor a no-op; the next page's cursor id is derived from the retrieval
// and page number, so every replay hands out the same one.
MATCH (r:Retrieval {id: $retrieval_id})
CALL (r) {
  UNWIND $page_memories AS item
  MATCH (m:Memory {id: item.id})
  MERGE (r)-[x:EXPOSED]->(m)
    ON CREATE SET x.rank = item.rank, x.pathway = item.pathway, x.association = item.association,
                  x.page = $page, x.at = $now
}
CALL (r) {
  UNWIND $page_procedures AS item
  MATCH (p:Procedure {id: item.id})
  MERGE (r)-[x:EXPOSED]->(p)
    ON CREATE SET x.rank = item.rank, x.pathway = 'procedure', x.page = $page, x.at = $now
}
SET r.pages_served = CASE WHEN coalesce(r.pages_served, 1) < $page THEN $page ELSE r.pages_served END
WITH r
CALL (r) {
  WITH r WHERE $next_cursor_id IS NOT NULL
  MERGE (n:Cursor {id: $next_cursor_id})
    ON CREATE SET n.retrieval_id = r.id, n.session_id = r.session_id, n.scope = r.scope,
                  n.page = $page + 1, n.created_at = $now
  MERGE (n)-[:CONTINUES]->(r)
}
RETURN r.id AS retrieval_id;

// name: catalog_links
// The SIMILAR_TO links of a catalog's memories, for folding (services/folding.py): duplicates
// among them, and updates with either end among them — the other end comes along, if active, with
// what a page shows of it, since an update pair is shown together. created_at (epoch
// milliseconds) orders an update group newest first.
UNWIND $ids AS id
MATCH (m:Memory {id: id})-[s:SIMILAR_TO]-(o:Memory)
WHERE o.status = 'active' AND o.scope = m.scope AND (s.kind = 'update' OR o.id IN $ids)
WITH DISTINCT s
WITH s, startNode(s) AS newer, endNode(s) AS older
RETURN newer.id AS newer, older.id AS older, s.kind AS kind,
       [x IN [newer, older] | {id: x.id, content: x.content, type: x.type,
                               created_at: x.created_at.epochMillis, integration: x.integration,
                               integration_version: x.integration_version}] AS ends;

// name: memories_for_page
// Catalog items in catalog order, with what a page and the accessible_field hint need, and where
// each lives (a lesson of another scope says so on every page: generalisation.cypher).
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory {id: $ids[i]})
RETURN m.id AS id, m.content AS content, m.type AS type,
       m.integration AS integration, m.integration_version AS integration_version,
       m.scope AS scope, m.stage AS stage
ORDER BY i;

// name: evidence_for_memories
// The source records (events, and episodes of committed sessions) behind the memories of a page,
// in page order, newest first per memory, each record once; one more than $limit tells the caller
// whether the list was cut.
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory {id: $ids[i]})-[:DERIVED_FROM]->(src)
WHERE src:Event OR src:Episode
WITH src, min(i) AS first
RETURN src.id AS id, src:Episode AS is_episode, src.recorded_at AS recorded_at,
       src.occurred_at AS occurred_at, src.content AS content
ORDER BY first, recorded_at DESC, id
LIMIT $limit + 1;

// name: procedure_search
// Procedures of the scope applicable to the cues, with their stored helped/harmed record. This
// form is an exact cosine scan over the scope's active procedures ((scope, status) index): Neo4j
// 5.26; on 2026.01+ procedure_search_filtered finds them through a vector index.
MATCH (p:Procedure {scope: $scope, status: 'active'})
WITH p, p.embedding AS v
WITH p, [e IN $embeddings | 2 * vector.similarity.cosine(v, e) - 1] AS similarities
WITH p, similarities, reduce(best = -1.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END)
     AS cosine
WHERE cosine >= $floor
RETURN p.id AS id, cosine, similarities, p.goal AS goal, p.summary AS summary, p.outcome AS outcome,
       p.outcome_summary AS outcome_summary, p.caveats AS caveats,
       coalesce(p.tally_helped, 0) AS helped, coalesce(p.tally_harmed, 0) AS harmed
ORDER BY cosine DESC, id
LIMIT $k;

// name: procedure_search_filtered
// procedure_search through the procedure vector index (Neo4j 2026.01+): per cue the $k nearest
// active procedures of the scope, filtered inside the index; a procedure's cosine is its best over
// the cues, and the union holds the scan's top-$k. A scope's procedures grow with every commit
// that records one, so the scan's cost would too. Like vector_search_filtered, SEARCH only runs
// when the scope has at least $search_from (= 2 * $k) active procedures; fewer are compared
// exactly, through a seek keyed on the guard (see vector_search_filtered).
CYPHER 25
WITH size(COLLECT {
       MATCH (p:Procedure {scope: $scope, status: 'active'}) RETURN p.id LIMIT $search_from
     }) AS live
CALL (live) {
  WITH live WHERE live >= $search_from
  UNWIND $embeddings AS e
  MATCH (p:Procedure)
    SEARCH p IN (
      VECTOR INDEX procedure_embedding FOR e
      WHERE p.scope = $scope AND p.status = 'active'
      LIMIT $k
    ) SCORE AS score
  RETURN p, max(2 * score - 1) AS cosine
  UNION ALL
  WITH live WHERE 0 < live AND live < $search_from
  MATCH (p:Procedure {scope: CASE WHEN live < $search_from THEN $scope END, status: 'active'})
  WITH p, p.embedding AS v
  UNWIND $embeddings AS e
  RETURN p, max(2 * vector.similarity.cosine(v, e) - 1) AS cosine
}
WITH p, max(cosine) AS cosine
WHERE cosine >= $floor
WITH p, cosine, p.embedding AS v
RETURN p.id AS id, cosine, [e IN $embeddings | 2 * vector.similarity.cosine(v, e) - 1] AS similarities,
       p.goal AS goal, p.summary AS summary, p.outcome AS outcome,
       p.outcome_summary AS outcome_summary, p.caveats AS caveats,
       coalesce(p.tally_helped, 0) AS helped, coalesce(p.tally_harmed, 0) AS harmed
ORDER BY cosine DESC, id
LIMIT $k;

// name: procedure_details
// Full procedure objects for recall: fields, tallies, and the three latest observed contributions
// (effective 'used' assessments, with the outcome of the session that gave them).
UNWIND range(0, size($ids) - 1) AS i
MATCH (p:Procedure {id: $ids[i]})
CALL (p) {
  OPTIONAL MATCH (r:Retrieval)-[a:ASSESSED {status: 'accepted', use: 'used'}]->(p)
  WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(p) WHERE b.seq > a.seq }
  OPTIONAL MATCH (s:Session {id: r.session_id})
  WITH a, s ORDER BY a.seq DESC
  WITH a, s LIMIT 3
  RETURN collect(CASE WHEN a IS NULL THEN null ELSE {
    effect: coalesce(a.effect, 'unknown'), contribution: a.contribution, outcome: s.outcome,
    outcome_summary: s.outcome_summary, occurred_at: a.created_at
  } END) AS contributions
}
RETURN p.id AS id, p.goal AS goal, p.summary AS summary, p.context AS context, p.steps AS steps,
       p.caveats AS caveats, p.outcome AS outcome, p.outcome_summary AS outcome_summary,
       p.created_at AS created_at,
       {used: coalesce(p.tally_used, 0), not_used: coalesce(p.tally_not_used, 0),
        unassessable: coalesce(p.tally_unassessable, 0), helped: coalesce(p.tally_helped, 0),
        no_effect: coalesce(p.tally_no_effect, 0), harmed: coalesce(p.tally_harmed, 0),
        unknown: coalesce(p.tally_unknown, 0)} AS tallies,
       contributions
ORDER BY i;
