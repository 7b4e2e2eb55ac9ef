// The maintenance pass (operator/maintenance.py): keeps what is derived from the memories and their
// feedback current on stores that already exist and as time passes — near-duplicate and update links
// for memories never judged, the decayed weight of co-use edges, learned marks on retrievals that
// hold no lesson — one pass at a time per database (a lease), each recorded as a MaintenanceRun.
// $scope null: the whole database. A scope: only that scope's memories, edges and retrievals.

// name: maintenance_unjudged_count
// How many active memories the near-duplicate judgement has not reached (the progress bar's total):
// unmarked (stored with consolidation off, or before the mark existed) or marked by older rules.
MATCH (m:Memory)
WHERE m.status = 'active' AND (m.similar_version IS NULL OR m.similar_version < $similar_version)
  AND ($scope IS NULL OR m.scope = $scope)
RETURN count(m) AS unjudged;

// name: maintenance_unjudged_page
// The next active memories (in id order, after $after) the judgement has not reached, with what it
// compares: text and vector. Keyset paging over the id constraint's index, as concepts_pending_page.
// The walk order does not decide a link's direction: each memory is compared with the memories
// numbered before it (older), whatever page they are on.
MATCH (m:Memory)
WHERE m.id > $after AND m.status = 'active'
  AND (m.similar_version IS NULL OR m.similar_version < $similar_version)
  AND ($scope IS NULL OR m.scope = $scope)
WITH m ORDER BY m.id LIMIT $limit
RETURN m.id AS id, m.scope AS scope, m.content AS content, m.embedding AS embedding;

// name: maintenance_judged_page
// A page of the backfill in one transaction: each memory of $items ({memory_id, links: [{target_id,
// kind, score}]}, judged against older memories of its scope) gets its links, as remember writes
// them (similar_edge), and the mark that it was judged. A memory retired or forgotten since it was
// read gets neither (it is judged again if it comes back), nor does a link to a target gone since.
// Already marked ones are skipped: a page written twice writes nothing the second time. Counts the
// edges this page created, per kind.
UNWIND $items AS item
MATCH (m:Memory {id: item.memory_id})
WHERE m.status = 'active' AND (m.similar_version IS NULL OR m.similar_version < $similar_version)
SET m.similar_version = $similar_version
WITH m, item
CALL (m, item) {
  UNWIND item.links AS link
  OPTIONAL MATCH (target:Memory {id: link.target_id})
  OPTIONAL MATCH (m)-[known:SIMILAR_TO]->(target)
  WITH m, link, target, known IS NULL AS fresh
  // include: similar_edge
  RETURN sum(CASE WHEN fresh AND link.kind = 'duplicate' THEN 1 ELSE 0 END) AS duplicates,
         sum(CASE WHEN fresh AND link.kind = 'update' THEN 1 ELSE 0 END) AS updates
}
RETURN count(m) AS judged, sum(duplicates) AS duplicates, sum(updates) AS updates;

// name: maintenance_decay_co_use
// Every co-use edge's stored weight set to its strength now (co_use_strength: the base from its
// co-uses, decayed by its age), in batches of their own transactions (an auto-commit statement).
// Idempotent: recomputed from the base, so a second pass at the same $now changes nothing and
// passes never compound. Edges already at their value are not written. The edge's write lock is
// taken before its co-uses are read again: a feedback call that adds or retracts one at the same
// time has either committed (and is read here) or waits for this write. Returns the edges written.
MATCH (a:Memory)-[e:ASSOCIATED]->(:Memory)
WHERE $scope IS NULL OR a.scope = $scope
// include: co_use_strength
WITH e, strength WHERE e.weight IS NULL OR abs(e.weight - strength) > 1e-9
CALL (e) {
  SET e._decaying = true
  REMOVE e._decaying
  // include: co_use_strength
  SET e.weight = strength
} IN TRANSACTIONS OF 5000 ROWS
RETURN count(e) AS decayed;

// name: maintenance_clear_learned
// learned taken off retrievals that hold no lesson (holds_lesson, as write_feedback decides it: older
// versions marked every retrieval with feedback), and their query vector out of the experience index,
// so they stop taking places among the similar questions experience_search compares. In batches of
// their own transactions (an auto-commit statement). Each retrieval is locked, then checked again:
// a feedback call that gives it a lesson meanwhile has either committed (and is seen) or waits.
// Returns the retrievals cleared.
MATCH (r:Retrieval)
WHERE r.learned = true AND ($scope IS NULL OR r.scope = $scope)
// include: holds_lesson
WITH r WHERE NOT holds_lesson
CALL (r) {
  SET r._unlearning = true
  REMOVE r._unlearning
  // include: holds_lesson
  WITH r WHERE NOT holds_lesson
  SET r.learned = false
  REMOVE r.experience_embedding, r.experience_pending
  RETURN count(r) AS cleared
} IN TRANSACTIONS OF 5000 ROWS
RETURN coalesce(sum(cleared), 0) AS cleared;

// name: maintenance_lease_take
// The lease that lets one pass run at a time among every server and CLI sharing the database, taken
// when free, expired (its holder died mid-pass) or already $holder's. MERGE on the unique name
// creates it once however many take it at once. Its write lock is taken before it is read, so of
// two takers the second sees the first's holder. Returns the lease as it stands: taken when holder
// = $holder.
MERGE (l:MaintenanceLease {name: $lease})
SET l._taking = true
REMOVE l._taking
WITH l, l.holder IS NULL OR l.holder = $holder OR l.expires_at <= $now AS free
CALL (l, free) {
  WITH l WHERE free
  SET l.holder = $holder, l.taken_at = $now, l.expires_at = $expires_at
}
RETURN l.holder AS holder, l.taken_at AS taken_at, l.expires_at AS expires_at;

// name: maintenance_lease_renew
// A running pass keeps its lease: expires_at moves to $expires_at while $holder still holds it (read
// under the lock, as maintenance_lease_take). No row: the lease expired and another took it.
MATCH (l:MaintenanceLease {name: $lease})
SET l._renewing = true
REMOVE l._renewing
WITH l WHERE l.holder = $holder
SET l.expires_at = $expires_at
RETURN l.expires_at AS expires_at;

// name: maintenance_lease_release
// The pass is over: the lease is free for the next one (left alone when another holds it by now).
MATCH (l:MaintenanceLease {name: $lease})
SET l._releasing = true
REMOVE l._releasing
WITH l WHERE l.holder = $holder
SET l.holder = null, l.expires_at = null, l.released_at = $now
RETURN l.name AS name;

// name: maintenance_run_start
// The record of a pass, created when it starts (status running) so a long backfill shows. A node of
// its own outside every scope, no relationships: who, where, which version, and counts — never any
// memory's content.
CREATE (r:MaintenanceRun {
  id: $run_id, started_at: $now, host: $host, actor: $actor, version: $version, only_scope: $scope,
  half_life_days: $half_life_days, status: 'running', memories_checked: 0, linked_duplicates: 0,
  linked_updates: 0, associations_decayed: 0, learned_cleared: 0, lessons_judged: 0,
  lessons_travelling: 0
})
RETURN r.id AS id;

// name: maintenance_run_finish
// The record of a pass when it ends: completed, failed or cancelled (with the error), and its counts.
MATCH (r:MaintenanceRun {id: $run_id})
SET r.finished_at = $now, r.status = $status, r.error = $error,
    r.memories_checked = $memories_checked, r.linked_duplicates = $linked_duplicates,
    r.linked_updates = $linked_updates, r.associations_decayed = $associations_decayed,
    r.learned_cleared = $learned_cleared, r.lessons_judged = $lessons_judged,
    r.lessons_travelling = $lessons_travelling
RETURN r.id AS id;

// name: maintenance_runs
// The latest maintenance passes, newest first, with their counts: what ran, when, where and by whom.
MATCH (r:MaintenanceRun)
RETURN r.id AS id, r.started_at AS started_at, r.finished_at AS finished_at, r.host AS host,
       r.actor AS actor, r.version AS version, r.only_scope AS only_scope, r.status AS status,
       r.error AS error, r.half_life_days AS half_life_days, r.memories_checked AS memories_checked,
       r.linked_duplicates AS linked_duplicates, r.linked_updates AS linked_updates,
       r.associations_decayed AS associations_decayed, r.learned_cleared AS learned_cleared,
       r.lessons_judged AS lessons_judged, r.lessons_travelling AS lessons_travelling
ORDER BY started_at DESC, id
LIMIT $limit;

// name: maintenance_last_completed
// When the last completed pass over the whole database ended: a server's next pass is due an
// interval after it, whichever server or CLI ran it.
MATCH (r:MaintenanceRun {status: 'completed'})
WHERE r.only_scope IS NULL
RETURN max(r.finished_at) AS finished_at;

// name: maintenance_lesson_page
// The memories whose lessons the pass judges again (services/generalisation.py), a page at a time in
// id order after $after: lesson origins (a stage or validation evidence) — their breadth changes as
// scopes come and go — and memories that some feedback found helpful, whose lessons may have
// formed since (written by versions before generalisation, or in scopes that were quiet).
MATCH (m:Memory)
WHERE ($scope IS NULL OR m.scope = $scope)
  AND (m.stage IS NOT NULL OR m.helped_count > 0 OR EXISTS { (m)-[:VALIDATED_IN]->() })
WITH m, toInteger(substring(m.id, 4)) AS number
WHERE number > $after
RETURN m.id AS id, number
ORDER BY number
LIMIT $limit;
