import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Distinct batch ids, greatest (newest: they are UUIDv7) first, each less than `before` when given.
 * A loose index scan of the batch index (migration 0023): each step is one probe for the greatest
 * id below the last one, so a page costs its size however many jobs each batch holds, and the
 * recursion stops as soon as the page is full. Jobs of no batch are not in that index at all.
 */
export function batchIdsQuery(t: PostgresNaming) {
  const text = (bounded: boolean) => `
    WITH RECURSIVE ids(batch_id) AS (
      (SELECT j.batch_id FROM ${t.jobs} j WHERE j.batch_id IS NOT NULL${bounded ? ' AND j.batch_id < $2' : ''} ORDER BY j.batch_id DESC LIMIT 1)
      UNION ALL
      SELECT (SELECT j.batch_id FROM ${t.jobs} j WHERE j.batch_id IS NOT NULL AND j.batch_id < ids.batch_id ORDER BY j.batch_id DESC LIMIT 1)
      FROM ids WHERE ids.batch_id IS NOT NULL
    )
    SELECT batch_id FROM ids WHERE batch_id IS NOT NULL LIMIT $1`;
  const first = text(false);
  const after = text(true);

  return async (db: PgExecutor, limit: number, before: string | null): Promise<string[]> => {
    const rows = await (before === null ? db.query<{ batch_id: string }>(first, [limit]) : db.query<{ batch_id: string }>(after, [limit, before]));
    return rows.map((row) => row.batch_id);
  };
}
