// Queries of the benchmark commands (bench load). Read-only, except the floor's probe of a durable
// write, which touches only its own BenchProbe node and deletes it afterwards.

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

// name: bench_probe_write
// The floor of a durable write: one auto-commit statement that sets one property of one node, so
// its time is a statement's round trip plus a commit with its transaction-log flush — what every
// activate, recall and remember pays at least once. Idempotent ($at is the sample's number), so a
// retry after a lost connection writes the same thing again.
MERGE (p:BenchProbe {id: $id})
SET p.at = $at;

// name: bench_probe_delete
// The probe node of bench_probe_write, gone when the floor has been measured.
MATCH (p:BenchProbe {id: $id})
DETACH DELETE p;

// name: bench_probe_count
// Probe nodes left behind by the floor (none, unless a run was killed mid-probe).
MATCH (p:BenchProbe)
RETURN count(p) AS probes;

// name: bench_frozen_catalog
// The whole ranked catalog a retrieval froze (recall serves it a page at a time): what the
// retrieval benchmark scores when it asks through the recall tool's path.
MATCH (r:Retrieval {id: $retrieval_id})
RETURN r.catalog_ids AS ids;

// name: bench_lesson_stage
// bench transfer: the stage a lesson has now, the highest of its remembered wordings (its origin
// holds it; generalisation.cypher).
UNWIND $ids AS id
MATCH (m:Memory {id: id})
RETURN max(coalesce(m.stage, 0)) AS stage;
