import type { Database } from 'better-sqlite3';
import type { BatchCallbackKind, JobState } from '../../../core/index.js';
import { batchSummary } from '../../batch/batch-summary.js';
import type { BatchSummary } from '../../job-store.types.js';
import type { SqliteNaming } from '../sqlite-naming.js';

type CountRow = { state: JobState; n: number; created_at: number };
type CallbackRow = { id: string; batch_callback: BatchCallbackKind; state: JobState; created_at: number };

/**
 * A batch as its stored jobs tell it (batch-summary.ts counts them), each read through
 * jobs_batch_idx (migration 0023): its jobs counted per state, callbacks apart; its callbacks; and
 * up to `failedLimit` failed jobs' ids in id order. Null when no stored job has the batch id. One
 * read transaction, so another process's write cannot fall between the reads.
 */
export function batchSummaryQuery(db: Database, t: SqliteNaming) {
  const counts = db.prepare(`
    SELECT state, count(*) AS n, min(created_at) AS created_at FROM ${t.jobs}
    WHERE batch_id = ? AND batch_callback IS NULL GROUP BY state`);
  const callbacks = db.prepare(`SELECT id, batch_callback, state, created_at FROM ${t.jobs} WHERE batch_id = ? AND batch_callback IS NOT NULL`);
  const failed = db
    .prepare(`SELECT id FROM ${t.jobs} WHERE batch_id = ? AND batch_callback IS NULL AND state IN ('dead_lettered', 'quarantined') ORDER BY id LIMIT ?`)
    .pluck();
  const read = db.transaction((batchId: string, failedLimit: number): BatchSummary | null => {
    const counted = counts.all(batchId) as CountRow[];
    const called = callbacks.all(batchId) as CallbackRow[];
    if (counted.length === 0 && called.length === 0) return null;
    return batchSummary(batchId, {
      counts: new Map(counted.map((row) => [row.state, row.n])),
      failedJobIds: failedLimit > 0 ? (failed.all(batchId, failedLimit) as string[]) : [],
      callbacks: called.map((row) => ({ kind: row.batch_callback, jobId: row.id, state: row.state })),
      createdAt: new Date(Math.min(...[...counted, ...called].map((row) => row.created_at))),
    });
  });
  return (batchId: string, failedLimit: number): BatchSummary | null => read(batchId, failedLimit);
}
