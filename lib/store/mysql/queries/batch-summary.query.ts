import type { BatchCallbackKind, JobState } from '../../../core/index.js';
import { batchSummary } from '../../batch/batch-summary.js';
import type { BatchSummary } from '../../job-store.types.js';
import type { MysqlExecutor, MysqlStatement } from '../mysql-executor.js';
import { fromMysqlInstant } from '../mysql-instant.js';
import type { MysqlNaming } from '../mysql-naming.js';

type CountRow = { state: JobState; n: number; created_at: string };
type CallbackRow = { id: string; batch_callback: BatchCallbackKind; state: JobState; created_at: string };

/**
 * A batch as its stored jobs tell it (batch-summary.ts counts them), in one script through
 * jobs_batch_idx (migration 0023): its jobs counted per state, callbacks apart; its callbacks; and
 * up to `failedLimit` failed jobs' ids in id order, in one read-only transaction. Null when no
 * stored job has the batch id.
 */
export async function readBatchSummary(db: MysqlExecutor, t: MysqlNaming, batchId: string, failedLimit: number): Promise<BatchSummary | null> {
  const statements: MysqlStatement[] = [
    {
      sql: `SELECT state, COUNT(*) AS n, MIN(created_at) AS created_at FROM ${t.jobs}
            WHERE batch_id = ? AND batch_callback IS NULL GROUP BY state`,
      values: [batchId],
    },
    { sql: `SELECT id, batch_callback, state, created_at FROM ${t.jobs} WHERE batch_id = ? AND batch_callback IS NOT NULL`, values: [batchId] },
  ];
  if (failedLimit > 0) {
    statements.push({
      sql: `SELECT id FROM ${t.jobs} WHERE batch_id = ? AND batch_callback IS NULL AND state IN ('dead_lettered', 'quarantined') ORDER BY id LIMIT ?`,
      values: [batchId, failedLimit],
    });
  }
  // One snapshot for all three reads (at REPEATABLE READ, taken at once), so the counts, the
  // callbacks and the failed ids tell the batch as it was at one moment, as one statement does elsewhere.
  const results = await db
    .script([{ sql: 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ' }, { sql: 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY' }, ...statements, { sql: 'COMMIT' }])
    .catch(async (error: unknown) => {
      // The pooled session must not go back with the transaction open.
      await db.query('ROLLBACK').catch(() => undefined);
      throw error;
    });
  const [counted, callbacks, failed = []] = results.slice(2, 2 + statements.length) as [CountRow[], CallbackRow[], { id: string }[]?];
  if (counted.length === 0 && callbacks.length === 0) return null;
  const created = [...counted, ...callbacks].map((row) => fromMysqlInstant(row.created_at).getTime());
  return batchSummary(batchId, {
    counts: new Map(counted.map((row) => [row.state, Number(row.n)])),
    failedJobIds: failed.map((row) => row.id),
    callbacks: callbacks.map((row) => ({ kind: row.batch_callback, jobId: row.id, state: row.state })),
    createdAt: new Date(Math.min(...created)),
  });
}
