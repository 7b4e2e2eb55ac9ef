// Schema of the slowave-graph memory: constraints and indexes, created idempotently at start-up.
// Constraint names follow neomodel's convention (constraint_unique_<Label>_<property>) so that the
// neomodel models in slowave_graph/graph/models.py describe exactly this schema.
//
// Stored vectors (Memory.embedding, Procedure.embedding, Retrieval.query_embedding and its indexed
// copy experience_embedding) are written with db.create.setNodeVectorProperty, which stores a
// float32 array, not Cypher's list of doubles: the embedder's output is float32, the vector index
// holds float32 and vector.similarity.cosine computes in float32, so nothing is lost. A vector takes
// 1.5 KB instead of 3 KB of the store and its page cache, and every cosine computed outside the
// index (full-text hits, neighbours, small scopes) reads half the bytes (docs/performance.md).
// Vectors written as doubles before read the same and compare the same.

// name: constraint_scope_id
CREATE CONSTRAINT constraint_unique_Scope_id IF NOT EXISTS FOR (n:Scope) REQUIRE n.id IS UNIQUE;

// name: constraint_memory_id
CREATE CONSTRAINT constraint_unique_Memory_id IF NOT EXISTS FOR (n:Memory) REQUIRE n.id IS UNIQUE;

// name: constraint_memory_active_key
// active_key = hash(scope + normalised content) on active memories only: MERGE on it makes
// exact-duplicate detection safe under concurrency. Retiring a memory removes its key.
CREATE CONSTRAINT constraint_unique_Memory_active_key IF NOT EXISTS
FOR (n:Memory) REQUIRE n.active_key IS UNIQUE;

// name: constraint_procedure_id
CREATE CONSTRAINT constraint_unique_Procedure_id IF NOT EXISTS FOR (n:Procedure) REQUIRE n.id IS UNIQUE;

// name: constraint_episode_id
CREATE CONSTRAINT constraint_unique_Episode_id IF NOT EXISTS FOR (n:Episode) REQUIRE n.id IS UNIQUE;

// name: constraint_event_id
CREATE CONSTRAINT constraint_unique_Event_id IF NOT EXISTS FOR (n:Event) REQUIRE n.id IS UNIQUE;

// name: constraint_session_id
CREATE CONSTRAINT constraint_unique_Session_id IF NOT EXISTS FOR (n:Session) REQUIRE n.id IS UNIQUE;

// name: constraint_continuity_id
CREATE CONSTRAINT constraint_unique_Continuity_id IF NOT EXISTS FOR (n:Continuity) REQUIRE n.id IS UNIQUE;

// name: constraint_retrieval_id
CREATE CONSTRAINT constraint_unique_Retrieval_id IF NOT EXISTS FOR (n:Retrieval) REQUIRE n.id IS UNIQUE;

// name: constraint_cursor_id
CREATE CONSTRAINT constraint_unique_Cursor_id IF NOT EXISTS FOR (n:Cursor) REQUIRE n.id IS UNIQUE;

// name: constraint_correction_id
// A person's corrections (cypher/corrections.cypher), found by id from the SUPERSEDES they made.
CREATE CONSTRAINT constraint_unique_Correction_id IF NOT EXISTS FOR (n:Correction) REQUIRE n.id IS UNIQUE;

// name: constraint_concept_scope_key
// One concept per normalised key and scope (services/concepts.py): writes MERGE on it.
CREATE CONSTRAINT constraint_unique_Concept_scope_key IF NOT EXISTS
FOR (n:Concept) REQUIRE (n.scope, n.key) IS UNIQUE;

// name: constraint_counter_name
CREATE CONSTRAINT constraint_unique_Counter_name IF NOT EXISTS FOR (n:Counter) REQUIRE n.name IS UNIQUE;

// name: constraint_embedding_space_name
CREATE CONSTRAINT constraint_unique_EmbeddingSpace_name IF NOT EXISTS
FOR (n:EmbeddingSpace) REQUIRE n.name IS UNIQUE;

// name: constraint_maintenance_lease_name
// One lease per name (operator/maintenance.py): servers and the CLI MERGE it when they take it, and
// without the constraint two taking it at once could each create one.
CREATE CONSTRAINT constraint_unique_MaintenanceLease_name IF NOT EXISTS
FOR (n:MaintenanceLease) REQUIRE n.name IS UNIQUE;

// name: index_memory_scope_status
// Scope-local scans: cold-start checks, exact vector scans of small scopes on Neo4j 5.26.
CREATE INDEX index_Memory_scope_status IF NOT EXISTS FOR (n:Memory) ON (n.scope, n.status);

// name: index_memory_stage
// The lessons that travel between scopes (a stage of 1-3; generalisation.cypher): few, and found
// by this index on every activate and recall.
CREATE INDEX index_Memory_stage IF NOT EXISTS FOR (n:Memory) ON (n.stage);

// name: index_procedure_scope_status
// The active procedures of one scope: the guard of procedure_search_filtered, and the exact scan
// of procedure_search on Neo4j 5.26.
CREATE INDEX index_Procedure_scope_status IF NOT EXISTS FOR (n:Procedure) ON (n.scope, n.status);

// name: index_scope_norm_key
// Finds scopes that differ only by case or -/_ (the scope_fragmentation warning).
CREATE INDEX index_Scope_norm_key IF NOT EXISTS FOR (n:Scope) ON (n.norm_key);

// name: index_session_status_seen
// The idle-session reaper looks up open sessions by last activity.
CREATE INDEX index_Session_status_last_seen IF NOT EXISTS FOR (n:Session) ON (n.status, n.last_seen_at);

// name: vector_index_filtered
// Neo4j 2026.01+: the vector index also holds scope and status, so Cypher 25 SEARCH filters inside
// the index and a small scope in a large database still gets its true top-k.
CYPHER 25
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON m.embedding WITH [m.scope, m.status]
OPTIONS {indexConfig: $vector_config};

// name: retrieval_vector_index_filtered
// Neo4j 2026.01+: the query vectors of past retrievals that received feedback, with scope for
// in-index filtering, so the experience lookup finds the past questions nearest to a task without
// reading every learned retrieval of the scope (experience_search in retrieval.cypher).
// Only learned retrievals carry the indexed property (experience_embedding, a copy of
// query_embedding made by the feedback that teaches something): indexing every retrieval's vector
// would make each activate's and recall's commit write the index, for retrievals most of which
// never get feedback (docs/performance.md, "Design choices, with their measured effect").
CYPHER 25
CREATE VECTOR INDEX retrieval_experience_embedding IF NOT EXISTS
FOR (r:Retrieval) ON r.experience_embedding WITH [r.scope]
OPTIONS {indexConfig: $vector_config};

// name: procedure_vector_index_filtered
// Neo4j 2026.01+: procedure vectors with scope and status for in-index filtering, so finding the
// procedures that apply to a task does not read every active procedure of the scope
// (procedure_search_filtered in retrieval.cypher).
CYPHER 25
CREATE VECTOR INDEX procedure_embedding IF NOT EXISTS
FOR (p:Procedure) ON p.embedding WITH [p.scope, p.status]
OPTIONS {indexConfig: $vector_config};

// name: vector_index_plain
// Neo4j 5.26: no in-index filtering; queries over-fetch or scan small scopes exactly.
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON m.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};

// name: index_retrieval_scope_learned
// A scope's retrievals that received feedback: the guard of experience_search (on Neo4j 5.26 the
// exact experience scan reads them newest first, through lts_index_retrieval_learned_recent).
CREATE INDEX index_Retrieval_scope_learned IF NOT EXISTS FOR (n:Retrieval) ON (n.scope, n.learned);

// name: lts_index_retrieval_learned_recent
// Neo4j 5.26 only: a scope's learned retrievals newest first, so its exact experience scan reads
// the vectors of the most recent $window of them alone (experience in retrieval.cypher).
CREATE INDEX index_Retrieval_scope_learned_created IF NOT EXISTS
FOR (n:Retrieval) ON (n.scope, n.learned, n.created_at);

// name: index_retrieval_scope_experience_pending
// Learned retrievals not yet in the experience vector index (write_feedback marks them, the batch
// statement index_pending_experience unmarks them): experience_search compares a scope's exactly,
// and the batch reads the whole index, which holds only those.
CREATE INDEX index_Retrieval_scope_experience_pending IF NOT EXISTS
FOR (n:Retrieval) ON (n.scope, n.experience_pending);

// name: fulltext_memory
// BM25 over memory text. scope_token (a single-token hash of the scope) and status are indexed
// too, so a Lucene query can require them: filtering happens inside the index on every version.
// The english analyzer (stop words, Porter stemming: "painted" meets "paint", "kids" meets "kid")
// finds more of LoCoMo's evidence than the default standard-no-stop-words (docs/retrieval.md,
// "Measured"); queries are analysed the same way, and callers re-check scope and status on the
// real properties.
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS
FOR (m:Memory) ON EACH [m.content, m.scope_token, m.status]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

// name: fulltext_procedure
CREATE FULLTEXT INDEX procedure_text IF NOT EXISTS
FOR (p:Procedure) ON EACH [p.goal, p.summary, p.context_text, p.steps_text, p.scope_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};

// name: vector_index_quantization
// The quantization of the filtered vector indexes (Neo4j 2026.x reports it): an index built with
// another one than schema.py asks for is dropped at start-up and created again (repopulated from
// the stored vectors).
SHOW VECTOR INDEXES YIELD name, options
WHERE name IN ['memory_embedding', 'retrieval_experience_embedding', 'procedure_embedding']
RETURN name, options.indexConfig.`vector.quantization.type` AS quantization;

// name: fulltext_index_info
// The analyzer each full-text index was built with: one built before the english analyzer was
// chosen is dropped at start-up and created again (repopulated from the stored text).
SHOW FULLTEXT INDEXES YIELD name, options
WHERE name IN ['memory_text', 'procedure_text']
RETURN name, options.indexConfig.`fulltext.analyzer` AS analyzer;

// name: drop_memory_fulltext_index
DROP INDEX memory_text IF EXISTS;

// name: drop_procedure_fulltext_index
DROP INDEX procedure_text IF EXISTS;

// name: retrieval_query_index_exists
// The vector index over every retrieval's query_embedding that earlier versions created.
SHOW VECTOR INDEXES YIELD name
WHERE name = 'retrieval_query_embedding'
RETURN name;

// name: backfill_experience_embedding
// Migration from that index: learned retrievals get the indexed copy of their query vector. Runs
// before the old index is dropped, so an interrupted start-up repeats it; idempotent.
MATCH (r:Retrieval)
WHERE r.learned = true AND r.experience_embedding IS NULL AND r.query_embedding IS NOT NULL
CALL (r) {
  CALL db.create.setNodeVectorProperty(r, 'experience_embedding', r.query_embedding) // float32
} IN TRANSACTIONS OF 1000 ROWS;

// name: drop_retrieval_query_index
DROP INDEX retrieval_query_embedding IF EXISTS;

// name: await_indexes
CALL db.awaitIndexes($timeout_seconds);

// name: vector_index_info
SHOW VECTOR INDEXES YIELD name, properties, options, state
WHERE name = 'memory_embedding'
RETURN properties, options.indexConfig AS config, state;

// name: server_components
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition;

// name: embedding_space_get
MATCH (e:EmbeddingSpace {name: 'memory'})
RETURN e.model AS model, e.dimension AS dimension;

// name: embedding_space_init
// First start on an empty database records which model produced the stored vectors.
MERGE (e:EmbeddingSpace {name: 'memory'})
ON CREATE SET e.model = $model, e.dimension = $dimension, e.created_at = datetime()
RETURN e.model AS model, e.dimension AS dimension;
