import { toJobStatus } from '../../job-row.js';
import type { JobState } from '../../../core/index.js';
import type { JobStatus } from '../../job-store.types.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

type Row = { id: string; queue: string; concurrency_key: string | null; unique_key: string | null; schedule_id: string | null; scheduled_for: string; state: JobState; attempt: number; max_attempts: number; last_error: string | null; output: string | null; finished_at: string | null };

/**
 * Where each of up to `JOB_STATUS_BATCH` jobs stands, in one read through the id's unique index: a
 * waiter's poll. No payload, so a poll over many unfinished jobs moves a few columns per job.
 */
export async function jobStatusMany(db: MysqlExecutor, t: MysqlNaming, ids: readonly string[]): Promise<JobStatus[]> {
  // An empty list would expand to `IN ()`, which MySQL refuses.
  if (ids.length === 0) return [];
  const rows = await db.query<Row>(`SELECT id, queue, concurrency_key, unique_key, schedule_id, scheduled_for, state, attempt, max_attempts, last_error, output, finished_at FROM ${t.jobs} WHERE id IN (?)`, [ids]);
  return rows.map((row) => toJobStatus({ ...row, scheduled_for: fromMysqlInstant(row.scheduled_for).getTime(), finished_at: row.finished_at === null ? null : fromMysqlInstant(row.finished_at).getTime() }));
}
