// Lessons that travel between scopes (services/generalisation.py). A memory validated — used with
// effect helped, per the feedback ledger — in several scopes, itself or through a near-duplicate
// remembered there, earns a generalisation stage: 0 its own scope only; 1 every scope of its kind;
// 2 every scope, ranked below local memories; 3 global. The evidence is in the graph as
// (:Memory)-[:VALIDATED_IN {sessions, weight, via}]->(:Scope) from the lesson's origin (the oldest
// memory of the cluster) to each scope it was validated in; the stage and its counts are
// properties of the origin. All of it is a function of the ledger and the store: recomputing
// changes nothing, and a later not_used, harmed or stale takes the evidence back.

// name: lesson_evidence
// The effective assessment of each memory by every retrieval that assessed it (the latest accepted
// event per retrieval), as evidence per retrieval scope and session: +1 used with effect helped,
// -1 used with effect harmed or stale, 0 anything else (neutral marks say nothing about whether a
// lesson holds); with the principal whose session it was. With what a judgement of the memory as a lesson needs: status, scope, age, text.
UNWIND $ids AS id
MATCH (m:Memory {id: id})
CALL (m) {
  OPTIONAL MATCH (r:Retrieval)-[a:ASSESSED {status: 'accepted'}]->(m)
  WHERE NOT EXISTS { (r)-[b:ASSESSED {status: 'accepted'}]->(m) WHERE b.seq > a.seq }
  WITH r, a WHERE r IS NOT NULL
  RETURN collect({scope: r.scope, session_id: r.session_id, principal: coalesce(r.principal, 'local'),
                  sign: CASE WHEN a.assessment = 'used' AND coalesce(a.effect, 'helped') = 'helped' THEN 1
                             WHEN a.assessment = 'stale' OR (a.assessment = 'used' AND a.effect = 'harmed')
                               THEN -1
                             ELSE 0 END}) AS evidence
}
RETURN m.id AS id, m.scope AS scope, m.status AS status, m.content AS content,
       m.created_at.epochMillis AS created_at, evidence,
       COLLECT { MATCH (o:Memory)-[v:VALIDATED_IN]->() WHERE m.id IN v.via OR o = m RETURN DISTINCT o.id }
         AS origins;

// name: lesson_neighbours
// The active memories of other scopes near each memory ($memories: id, and lucene — its names and
// values as a full-text query that leaves its scope out, or null), for the judgement of which are
// the same lesson remembered elsewhere: the $k nearest by cosine (the plain vector index query,
// which both Neo4j lines have, over-fetched to $fetch before the other-scope filter) and the $k
// best BM25 matches of its names. Why both: one rule written in many scopes, each naming its own
// tool ("run X sync before the tests"), sits nearer in embedding than a true paraphrase naming the
// same tool and can fill the $k nearest; the paraphrase must mention the same names.
UNWIND $memories AS q
MATCH (s:Memory {id: q.id})
CALL (s) {
  CALL db.index.vector.queryNodes('memory_embedding', $fetch, s.embedding) YIELD node AS m
  WITH s, m WHERE m.status = 'active' AND m.scope <> s.scope
  WITH m ORDER BY vector.similarity.cosine(m.embedding, s.embedding) DESC
  LIMIT $k
  RETURN collect(m) AS nearest
}
CALL (s, q) {
  WITH q WHERE q.lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes('memory_text', q.lucene, {limit: $k}) YIELD node AS m
  WITH m WHERE m.status = 'active' AND m.scope <> s.scope
  RETURN collect(m) AS matching
}
WITH s, nearest + [m IN matching WHERE NOT m IN nearest] AS near
RETURN s.id AS id, s.embedding AS embedding,
       [m IN near | {id: m.id, scope: m.scope, content: m.content,
                     cosine: 2 * vector.similarity.cosine(m.embedding, s.embedding) - 1,
                     created_at: m.created_at.epochMillis}] AS near;

// name: active_scopes
// Scopes with a session started since $since, per scope kind: the population a lesson's breadth
// is measured against.
MATCH (sc:Scope)
WHERE EXISTS { MATCH (sc)<-[:IN_SCOPE]-(s:Session) WHERE s.started_at >= $since }
RETURN sc.kind AS kind, count(*) AS scopes;

// name: set_lessons
// Writes what services/generalisation.py judged, per lesson origin: its VALIDATED_IN edges
// replaced by the ones of the evidence ($lessons[].scopes: scope, sessions, weight, via — the
// memories whose assessments count), its stage and counts, and scope_kind — kept for good: it
// marks a memory that has been a lesson's origin, the only kind the audit lets other scopes'
// retrievals show; members of the cluster that are not
// the origin hold no evidence and no stage (their origin travels for them). The origin's write
// lock first, so two recomputations of one lesson apply one after the other.
UNWIND $lessons AS l
MATCH (o:Memory {id: l.origin})
SET o._lesson = true
REMOVE o._lesson
WITH o, l
CALL (o) {
  MATCH (o)-[v:VALIDATED_IN]->(:Scope)
  DELETE v
}
CALL (o, l) {
  UNWIND l.scopes AS x
  MATCH (s:Scope {id: x.scope})
  CREATE (o)-[:VALIDATED_IN {sessions: x.sessions, weight: x.weight, via: x.via, at: $now}]->(s)
}
SET o.stage = CASE WHEN l.stage > 0 THEN l.stage END, o.scope_kind = l.kind,
    o.validated_scopes = size(l.scopes), o.validated_sessions = l.sessions
WITH l
UNWIND l.members AS mid
MATCH (x:Memory {id: mid})
WHERE x.id <> l.origin
CALL (x) {
  MATCH (x)-[v:VALIDATED_IN]->(:Scope)
  DELETE v
}
REMOVE x.stage, x.validated_scopes, x.validated_sessions
RETURN count(*) AS members;

// name: promoted_search
// Retrieval's look beyond the scope: active memories of other scopes whose stage lets them travel
// here — stage 1 into scopes of their own kind, 2 and 3 into every scope — with their cosine to
// each cue. The promoted are few (lessons validated in several scopes), found through the stage
// index; the caller drops those of scopes the token is not granted and admits the rest like any
// vector hit.
MATCH (m:Memory)
WHERE m.stage >= 1 AND m.status = 'active' AND m.scope <> $scope
  AND (m.stage >= 2 OR m.scope_kind = $kind)
WITH m, [qi IN range(0, size($embeddings) - 1) |
         {qi: qi, cosine: 2 * vector.similarity.cosine(m.embedding, $embeddings[qi]) - 1}] AS cosines
WITH m, cosines, reduce(best = -1.0, c IN cosines | CASE WHEN c.cosine > best THEN c.cosine ELSE best END)
     AS best
ORDER BY best DESC, m.id
LIMIT $k
RETURN m.id AS id, m.scope AS scope, m.stage AS stage, m.content AS content, m.type AS type,
       m.salience AS salience, m.integration AS integration, m.integration_version AS integration_version,
       coalesce(m.occurred_at, m.created_at).epochSeconds AS occurred_at, cosines;
