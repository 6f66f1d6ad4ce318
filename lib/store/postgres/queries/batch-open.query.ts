import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Ids of a batch's jobs that have not ended, read through the batch index (migration 0023): its
 * callbacks first, so a batch cancel stops them before the jobs whose end would release them, then
 * the batch's own jobs, each part in id order.
 */
export function batchOpenQuery(t: PostgresNaming) {
  const text = `
    SELECT j.id FROM ${t.jobs} j
    WHERE j.batch_id = $1 AND j.state IN ('scheduled', 'awaiting_parents', 'running')
    ORDER BY j.batch_callback IS NULL, j.id
    LIMIT $2`;
  return async (db: PgExecutor, batchId: string, limit: number): Promise<string[]> =>
    (await db.query<{ id: string }>(text, [batchId, limit])).map((row) => row.id);
}
