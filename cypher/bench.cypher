// Queries of the benchmark commands (bench load). Read-only.

// name: scope_memory_counts
// Memories per scope for a list of scopes (any status): how far a benchmark fill has got.
// status IS NOT NULL lets the (scope, status) index answer instead of a label scan.
UNWIND $scopes AS scope
RETURN scope, COUNT { MATCH (m:Memory {scope: scope}) WHERE m.status IS NOT NULL } AS memories;

// name: bench_bare_vector_query
// The floor of a direct hit on Neo4j 2026.x: one filtered vector-index query, nothing else.
CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (
    VECTOR INDEX memory_embedding FOR $embedding
    WHERE m.scope = $scope AND m.status = 'active'
    LIMIT $k
  ) SCORE AS score
RETURN m.id AS id, score;

// name: bench_bare_vector_query_5
// The same floor on Neo4j 5.26: the global index queried for $k neighbours, unfiltered.
CALL db.index.vector.queryNodes('memory_embedding', $k, $embedding) YIELD node, score
RETURN node.id AS id, score;
