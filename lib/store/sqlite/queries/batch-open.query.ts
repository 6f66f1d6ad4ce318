import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Up to `limit` ids of a batch's jobs that have not ended, through jobs_batch_idx (migration
 * 0023): its callbacks first, then its own jobs, each in id order (what a batch cancel stops, and
 * in which order: no callback may start while the batch is being cancelled).
 */
export function batchOpenQuery(db: Database, t: SqliteNaming) {
  const open = db
    .prepare(
      `SELECT id FROM ${t.jobs}
       WHERE batch_id = ? AND state IN ('scheduled', 'awaiting_parents', 'running')
       ORDER BY batch_callback IS NULL, id LIMIT ?`,
    )
    .pluck();
  return (batchId: string, limit: number): string[] => open.all(batchId, limit) as string[];
}
