import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** Deletes entries beyond the newest `keep` of each job, but none an observer has not passed yet. */
export function historyTrimQuery(t: PostgresNaming) {
  const text = `WITH ranked AS (
           SELECT id, tx, row_number() OVER (PARTITION BY job_id ORDER BY id DESC) AS n FROM ${t.history}
         ), doomed AS (
           SELECT tx, id FROM ranked r
           WHERE n > $1 AND NOT EXISTS (SELECT 1 FROM ${t.cursors} c WHERE (r.tx, r.id) > (c.last_tx, c.last_id))
           LIMIT $2
         )
         DELETE FROM ${t.history} WHERE (tx, id) IN (SELECT tx, id FROM doomed) RETURNING id`;
  return async (db: PgExecutor, keep: number, limit: number): Promise<number> => (await db.query(text, [keep, limit])).length;
}
