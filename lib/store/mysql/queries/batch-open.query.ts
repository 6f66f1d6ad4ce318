import type { MysqlExecutor } from '../mysql-executor.js';
import type { MysqlNaming } from '../mysql-naming.js';

/**
 * Up to `limit` ids of a batch's jobs that have not ended, through jobs_batch_idx (migration
 * 0023): its callbacks first, then its own jobs, each in id order (what a batch cancel stops, and
 * in which order: no callback may start while the batch is being cancelled).
 */
export async function batchOpen(db: MysqlExecutor, t: MysqlNaming, batchId: string, limit: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM ${t.jobs}
     WHERE batch_id = ? AND state IN ('scheduled', 'awaiting_parents', 'running')
     ORDER BY batch_callback IS NULL, id LIMIT ?`,
    [batchId, limit],
  );
  return rows.map((row) => row.id);
}
