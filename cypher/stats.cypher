// Overview queries: what the memory holds. Counts by label come from Neo4j's count store.

// name: stats_labels
// Forgetting: the audit records of `slowave-graph forget`, which belong to no scope (admin.cypher).
RETURN COUNT { (:Scope) } AS Scope, COUNT { (:Memory) } AS Memory,
       COUNT { (:Procedure) } AS Procedure, COUNT { (:Episode) } AS Episode,
       COUNT { (:Event) } AS Event, COUNT { (:Session) } AS Session,
       COUNT { (:Continuity) } AS Continuity, COUNT { (:Retrieval) } AS Retrieval,
       COUNT { (:Cursor) } AS Cursor, COUNT { (:Concept) } AS Concept,
       COUNT { (:Forgetting) } AS Forgetting;

// name: stats_relationships
// Every relationship type the service writes (each count is read from Neo4j's count store).
RETURN COUNT { ()-[:IN_SCOPE]->() } AS IN_SCOPE, COUNT { ()-[:DERIVED_FROM]->() } AS DERIVED_FROM,
       COUNT { ()-[:RECORDED]->() } AS RECORDED, COUNT { ()-[:FORMED]->() } AS FORMED,
       COUNT { ()-[:RETRIEVED]->() } AS RETRIEVED, COUNT { ()-[:EXPOSED]->() } AS EXPOSED,
       COUNT { ()-[:ASSESSED]->() } AS ASSESSED, COUNT { ()-[:CONTINUES]->() } AS CONTINUES,
       COUNT { ()-[:NEXT]->() } AS NEXT, COUNT { ()-[:ASSOCIATED]->() } AS ASSOCIATED,
       COUNT { ()-[:SUPERSEDES]->() } AS SUPERSEDES, COUNT { ()-[:MENTIONS]->() } AS MENTIONS;

// name: stats_scopes
// One row per scope (or only $scope, or only those in $scopes): memories by status, sessions,
// retrievals, procedures, concepts.
// param: scope string = null — only this scope
// param: scopes list = null — only these scopes (the dashboard's, for a token granted some)
// param: limit int = 200 — at most this many scopes, the fullest first
MATCH (s:Scope)
WHERE ($scope IS NULL OR s.id = $scope) AND ($scopes IS NULL OR s.id IN $scopes)
RETURN s.id AS scope,
       COUNT { (s)<-[:IN_SCOPE]-(:Memory {status: 'active'}) } AS active,
       COUNT { (s)<-[:IN_SCOPE]-(m:Memory) WHERE m.status <> 'active' } AS stale,
       COUNT { (s)<-[:IN_SCOPE]-(:Session) } AS sessions,
       COUNT { (s)<-[:IN_SCOPE]-(:Session)-[:RETRIEVED]->(:Retrieval) } AS retrievals,
       COUNT { (s)<-[:IN_SCOPE]-(:Procedure) } AS procedures,
       COUNT { (s)<-[:IN_SCOPE]-(:Concept) } AS concepts
ORDER BY active DESC, scope
LIMIT $limit;

// name: stats_scope_count
// How many scopes there are (the dashboard's index lists the fullest of them).
MATCH (s:Scope)
RETURN count(s) AS scopes;

// name: stats_indexes
// Every index with its state and how far it is populated (a vector index rebuilt by
// `slowave-graph reembed` reads POPULATING until it is done).
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, populationPercent
RETURN name, type, entityType AS entity, labelsOrTypes AS labels, properties, state,
       populationPercent AS populated
ORDER BY name;

// name: stats_directories
// Where the server keeps its stores and transaction logs (their size is measured when that
// directory is on this machine, e.g. the managed Neo4j).
CALL dbms.listConfig('server.directories') YIELD name, value
WHERE name IN ['server.directories.data', 'server.directories.transaction.logs.root']
RETURN name, value;
