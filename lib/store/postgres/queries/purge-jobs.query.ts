import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Deletes finished (succeeded or cancelled) jobs older than the cutoff whose dependants have all
 * been settled, with their history and their edges, in one bounded statement.
 */
export function purgeJobsQuery(t: PostgresNaming) {
  const text = `WITH doomed AS (
           SELECT id FROM ${t.jobs} j
           WHERE state IN ('succeeded', 'cancelled') AND finished_at < now() - $1 * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND NOT d.settled)
           ORDER BY finished_at LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), history AS (
           DELETE FROM ${t.history} WHERE job_id IN (SELECT id FROM doomed)
         ), edges AS (
           DELETE FROM ${t.dependencies} WHERE child_id IN (SELECT id FROM doomed) OR parent_id IN (SELECT id FROM doomed)
         )
         DELETE FROM ${t.jobs} WHERE id IN (SELECT id FROM doomed) RETURNING id`;
  return async (db: PgExecutor, olderThanMs: number, limit: number): Promise<number> => (await db.query(text, [olderThanMs, limit])).length;
}
