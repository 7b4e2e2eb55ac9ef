// Finding memories: direct hits (vector + full-text), associated hits (graph traversal).
// Every search returns the same columns so the ranking code treats them alike.

// name: vector_search_filtered
// Neo4j 2026.01+: Cypher 25 SEARCH filters on scope and status inside the vector index, so the
// k nearest are the k nearest of this scope. One row per (query vector, hit); the vector index
// reports (1 + cosine) / 2, converted back to cosine here.
CYPHER 25
UNWIND range(0, size($embeddings) - 1) AS qi
MATCH (m:Memory)
  SEARCH m IN (
    VECTOR INDEX memory_embedding FOR $embeddings[qi]
    WHERE m.scope = $scope AND m.status = 'active'
    LIMIT $k
  ) SCORE AS score
RETURN qi, m.id AS id, 2 * score - 1 AS cosine, m.content AS content, m.type AS type,
       m.salience AS salience, m.integration AS integration,
       m.integration_version AS integration_version;

// name: vector_search_overfetch
// Neo4j 5.26: the index cannot filter, so fetch more neighbours than needed ($fetch ≥ $k, chosen
// from the scope's share of all memories) and filter afterwards. The caller widens $fetch until
// $k hits survive or the whole index was read, so no result is lost.
UNWIND range(0, size($embeddings) - 1) AS qi
CALL db.index.vector.queryNodes('memory_embedding', $fetch, $embeddings[qi]) YIELD node AS m, score
WITH qi, m, score
WHERE m.scope = $scope AND m.status = 'active'
WITH qi, m, score ORDER BY score DESC
WITH qi, collect({m: m, score: score})[..$k] AS hits
UNWIND hits AS hit
WITH qi, hit.m AS m, hit.score AS score
RETURN qi, m.id AS id, 2 * score - 1 AS cosine, m.content AS content, m.type AS type,
       m.salience AS salience, m.integration AS integration,
       m.integration_version AS integration_version;

// name: vector_scan_scope
// Exact cosine over one scope through the (scope, status) index: the strategy for small scopes on
// Neo4j 5.26, where it is cheaper than over-fetching from the global index and provably exact.
UNWIND range(0, size($embeddings) - 1) AS qi
MATCH (m:Memory {scope: $scope, status: 'active'})
WITH qi, m, vector.similarity.cosine(m.embedding, $embeddings[qi]) AS similarity
ORDER BY similarity DESC
WITH qi, collect({m: m, similarity: similarity})[..$k] AS hits
UNWIND hits AS hit
WITH qi, hit.m AS m, hit.similarity AS similarity
// vector.similarity.cosine also reports (1 + cosine) / 2
RETURN qi, m.id AS id, 2 * similarity - 1 AS cosine, m.content AS content, m.type AS type,
       m.salience AS salience, m.integration AS integration,
       m.integration_version AS integration_version;

// name: scope_memory_count
// Size of a scope's active memory set (index-backed), to pick a vector strategy on 5.26.
MATCH (m:Memory {scope: $scope, status: 'active'})
RETURN count(m) AS scope_count,
       COUNT { MATCH (:Memory) } AS total_count;

// name: fulltext_search
// BM25 over memory text. $lucene requires scope_token and status:active inside the index (see
// fulltext_memory in schema.cypher); the WHERE repeats the check on the real properties.
// Each lexical hit also gets its best cosine to the query vectors, so admission can judge it on
// the same scale as the vector hits.
CALL db.index.fulltext.queryNodes('memory_text', $lucene, {limit: $k}) YIELD node AS m, score
WHERE m.scope = $scope AND m.status = 'active'
WITH m, score, [e IN $embeddings | 2 * vector.similarity.cosine(m.embedding, e) - 1] AS similarities
RETURN m.id AS id, score AS bm25,
       reduce(best = -1.0, s IN similarities | CASE WHEN s > best THEN s ELSE best END) AS cosine,
       m.content AS content, m.type AS type,
       m.salience AS salience, m.integration AS integration,
       m.integration_version AS integration_version;

// name: associated_search
// Memories linked to admitted direct hits by learned ASSOCIATED edges, same scope, active.
// Edge weight decays with the time since it was last reinforced (half-life $half_life_days).
UNWIND $seed_ids AS seed_id
MATCH (seed:Memory {id: seed_id})-[a:ASSOCIATED]-(m:Memory)
WHERE m.scope = $scope AND m.status = 'active' AND NOT m.id IN $seed_ids
WITH m, a.weight * 0.5 ^ (duration.inSeconds(a.updated_at, $now).seconds / 86400.0 / $half_life_days)
        AS strength
WITH m, max(strength) AS strength
WHERE strength >= $min_strength
RETURN m.id AS id, strength, m.content AS content, m.type AS type, m.salience AS salience,
       m.integration AS integration, m.integration_version AS integration_version
ORDER BY strength DESC, id
LIMIT $k;

// name: memories_for_page
// Contents of catalog items for a page, in catalog order.
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory {id: $ids[i]})
RETURN m.id AS id, m.content AS content, m.type AS type,
       m.integration AS integration, m.integration_version AS integration_version
ORDER BY i;
