import { toJobStatus, type JobStatusRow } from '../../job-row.js';
import type { JobStatus } from '../../job-store.types.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Where each of up to `JOB_STATUS_BATCH` jobs stands, in one primary-key read: a waiter's poll.
 * No payload, so a poll over many unfinished jobs moves a few columns per job.
 */
export function jobStatusManyQuery(t: PostgresNaming) {
  const text =
    `SELECT id, queue, concurrency_key, unique_key, schedule_id, date_part('epoch', scheduled_for) * 1000 AS scheduled_for, state, attempt, max_attempts, last_error, output::text AS output, ` +
    `date_part('epoch', finished_at) * 1000 AS finished_at FROM ${t.jobs} WHERE id = ANY($1::uuid[])`;
  return async (db: PgExecutor, ids: readonly string[]): Promise<JobStatus[]> =>
    (await db.query<JobStatusRow>(text, [ids])).map(toJobStatus);
}
