import type { Database } from 'better-sqlite3';
import { toJobStatus, type JobStatusRow } from '../../job-row.js';
import type { JobStatus } from '../../job-store.types.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/** Where each of up to `JOB_STATUS_BATCH` jobs stands, in one primary-key read: a waiter's poll. */
export function jobStatusManyQuery(db: Database, t: SqliteNaming) {
  const read = db.prepare(
    `SELECT id, queue, concurrency_key, unique_key, schedule_id, scheduled_for, state, attempt, max_attempts, last_error, output, finished_at FROM ${t.jobs} WHERE id IN (SELECT value FROM json_each(?))`,
  );
  return (ids: readonly string[]): JobStatus[] => (read.all(JSON.stringify(ids)) as JobStatusRow[]).map(toJobStatus);
}
