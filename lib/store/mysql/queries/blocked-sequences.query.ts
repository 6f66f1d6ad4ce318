import type { BlockedSequence } from '../../job-store.types.js';
import { toJob } from '../../job-row.js';
import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';
import { fromMysqlRow, JOB_COLUMNS, type MysqlJobRow } from '../mysql-row.js';

/**
 * Sequences held by a job that failed for good, a row per key in key order (see the PostgreSQL
 * query): the failed jobs from jobs_sequence_failed_idx (migration 0022: the key of a dead-lettered
 * or quarantined job, NULL for every other), each joined to the job behind its open `block`
 * edge through dependencies_parent_idx; of two on one key, the one that failed first.
 */
export async function blockedSequences(db: MysqlExecutor, t: MysqlNaming, limit: number, after: string | null): Promise<BlockedSequence[]> {
  const rows = await db.query<MysqlJobRow & { next_job_id: string }>(
    `SELECT b.* FROM (
       SELECT ${JOB_COLUMNS}, d.child_id AS next_job_id,
         ROW_NUMBER() OVER (PARTITION BY j.failed_sequence_key ORDER BY j.finished_at, j.id, d.child_id) AS place
       FROM ${t.jobs} j
         JOIN ${t.dependencies} d ON d.parent_id = j.id AND d.settled = FALSE AND d.sequence = 'block'
       WHERE j.failed_sequence_key ${after === null ? 'IS NOT NULL' : '> ?'}
     ) b
     WHERE b.place = 1 ORDER BY b.sequence_key LIMIT ?`,
    after === null ? [limit] : [after, limit],
  );
  return rows.map((row) => ({ key: row.sequence_key!, job: toJob(fromMysqlRow(row)), nextJobId: row.next_job_id }));
}
