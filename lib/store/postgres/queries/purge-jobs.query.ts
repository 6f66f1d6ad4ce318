import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/**
 * Deletes finished (succeeded or cancelled) jobs older than the cutoff whose dependants have all
 * been settled and whose throttle window (which lives in the opener's row) has ended, with their
 * history and their edges, in one bounded statement. The candidates come oldest first from the
 * finished-jobs index (migration 0011), which holds what retention may delete and the openers of
 * throttle windows still open, so a pass reads what it deletes, those openers, and not the jobs
 * retained. Each delete reaches its rows through an index: history by job, edges by child (the
 * primary key) and by parent.
 */
export function purgeJobsQuery(t: PostgresNaming) {
  const text = `WITH doomed AS MATERIALIZED (
           SELECT id FROM ${t.jobs} j
           WHERE state IN ('succeeded', 'cancelled') AND finished_at < now() - $1 * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} d WHERE d.parent_id = j.id AND NOT d.settled)
             -- A job cancelled before its turn is still in line: while the job before it has not ended,
             -- deleting it (and, as the tail, its key's row) would let the next enqueue start early.
             AND NOT EXISTS (SELECT 1 FROM ${t.dependencies} i WHERE i.child_id = j.id AND i.sequence IS NOT NULL AND NOT i.settled)
             AND (j.window_kind IS DISTINCT FROM 'throttle' OR j.window_ends_at <= now())
           ORDER BY finished_at LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), history AS (
           DELETE FROM ${t.history} WHERE job_id = ANY(ARRAY(SELECT id FROM doomed))
         ), child_edges AS (
           DELETE FROM ${t.dependencies} WHERE child_id = ANY(ARRAY(SELECT id FROM doomed))
         ), parent_edges AS (
           DELETE FROM ${t.dependencies} WHERE parent_id = ANY(ARRAY(SELECT id FROM doomed))
         ), tails AS (
           -- A sequence whose tail goes has nothing to wait for: its next enqueue starts it afresh.
           -- An enqueue that holds the row's lock has moved the tail on, and the delete passes it by.
           DELETE FROM ${t.sequences} WHERE tail_id = ANY(ARRAY(SELECT id FROM doomed))
         )
         DELETE FROM ${t.jobs} WHERE id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING id`;
  return async (db: PgExecutor, olderThanMs: number, limit: number): Promise<number> => (await db.query(text, [olderThanMs, limit])).length;
}
