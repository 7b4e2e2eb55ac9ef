// Operator statements.

// name: delete_scope
// Removes one scope and everything in it (benchmarks clean up after themselves). Reached by
// traversal from the Scope node — sessions and what they recorded, retrieved and formed, memories,
// procedures, concepts and continuity lines — never by scanning a label for a scope property.
MATCH (s:Scope {id: $scope})
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(ses:Session)
  OPTIONAL MATCH (ses)-[:RETRIEVED]->(r:Retrieval)
  OPTIONAL MATCH (cur:Cursor)-[:CONTINUES]->(r)
  DETACH DELETE cur, r
}
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(ses:Session)
  OPTIONAL MATCH (ses)-[:RECORDED]->(e:Event)
  OPTIONAL MATCH (ses)-[:FORMED]->(ep:Episode)
  DETACH DELETE e, ep, ses
}
CALL (s) {
  MATCH (s)<-[:IN_SCOPE]-(n)
  WHERE n:Memory OR n:Procedure OR n:Continuity OR n:Concept
  DETACH DELETE n
}
DETACH DELETE s
RETURN $scope AS scope;
