import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Deletes finished (succeeded or cancelled) jobs older than the cutoff whose dependants have all
 * been settled and whose throttle window has ended, with their history, their edges and the sequence rows whose tail they are, inside the caller's write transaction.
 */
export function purgeJobsQuery(db: Database, t: SqliteNaming) {
  const doomed = db.prepare(`
    SELECT id FROM ${t.jobs} j
    WHERE state IN ('succeeded', 'cancelled') AND finished_at < ?
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND d.settled = 0)
      AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = j.id AND i.sequence IS NOT NULL AND i.settled = 0)
      AND (window_kind IS NOT 'throttle' OR window_ends_at <= ?)
    ORDER BY finished_at LIMIT ?`).pluck();
  const purgeHistory = db.prepare(`DELETE FROM ${t.history} WHERE job_id = ?`);
  const purgeEdges = db.prepare(`DELETE FROM ${t.dependencies} WHERE child_id = @id OR parent_id = @id`);
  const purgeJob = db.prepare(`DELETE FROM ${t.jobs} WHERE id = ?`);
  // A sequence whose tail goes has nothing to wait for: its next enqueue starts it afresh.
  const purgeTail = db.prepare(`DELETE FROM ${t.sequences} WHERE tail_id = ?`);
  return (olderThanMs: number, limit: number, now: number): number => {
    const ids = doomed.all(now - olderThanMs, now, limit) as string[];
    for (const id of ids) {
      purgeHistory.run(id);
      purgeEdges.run({ id });
      purgeJob.run(id);
      purgeTail.run(id);
    }
    return ids.length;
  };
}
