import type { BatchCallbackKind, JobState } from '../../../core/index.js';
import { batchSummary } from '../../batch/batch-summary.js';
import type { BatchCallbackJob, BatchSummary } from '../../job-store.types.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { millis } from '../postgres-row.js';

/**
 * A batch as its stored jobs tell it, in one statement: the batch's rows are read once, through the
 * batch index (migration 0023), and that small set gives the children's counts per state, the
 * callbacks, the first `failedLimit` failed children in id order and the earliest creation. No row
 * at all means no stored job has the batch id.
 */
export function jobBatchQuery(t: PostgresNaming) {
  const text = `
    WITH b AS MATERIALIZED (
      SELECT j.id, j.state, j.batch_callback, j.created_at FROM ${t.jobs} j WHERE j.batch_id = $1
    )
    SELECT 'state' AS kind, b.state, count(*)::integer AS n, NULL::uuid AS id, NULL::text AS callback, NULL::float8 AS created_at
    FROM b WHERE b.batch_callback IS NULL GROUP BY b.state
    UNION ALL
    SELECT 'callback', b.state, NULL, b.id, b.batch_callback, NULL FROM b WHERE b.batch_callback IS NOT NULL
    UNION ALL
    (SELECT 'failed', b.state, NULL, b.id, NULL, NULL FROM b
     WHERE b.batch_callback IS NULL AND b.state IN ('dead_lettered', 'quarantined') ORDER BY b.id LIMIT $2)
    UNION ALL
    SELECT 'created', NULL, NULL, NULL, NULL, date_part('epoch', min(b.created_at)) * 1000 FROM b HAVING count(*) > 0`;

  type Row = { kind: 'state' | 'callback' | 'failed' | 'created'; state: JobState | null; n: number | null; id: string | null; callback: BatchCallbackKind | null; created_at: number | null };

  return async (db: PgExecutor, batchId: string, failedLimit: number): Promise<BatchSummary | null> => {
    const rows = await db.query<Row>(text, [batchId, failedLimit]);
    const created = rows.find((row) => row.kind === 'created');
    if (created === undefined) return null;
    const counts = new Map<JobState, number>();
    const failedJobIds: string[] = [];
    const callbacks: BatchCallbackJob[] = [];
    for (const row of rows) {
      if (row.kind === 'state') counts.set(row.state!, row.n!);
      else if (row.kind === 'callback') callbacks.push({ kind: row.callback!, jobId: row.id!, state: row.state! });
      else if (row.kind === 'failed') failedJobIds.push(row.id!);
    }
    // The union keeps no order across its parts; the failed part's own order is by id.
    failedJobIds.sort();
    return batchSummary(batchId, { counts, failedJobIds, callbacks, createdAt: new Date(millis(created.created_at!)) });
  };
}
