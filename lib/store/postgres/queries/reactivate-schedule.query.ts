import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';

/** After a replay: the schedule that the replayed job had stopped mints again. */
export function reactivateScheduleQuery(t: PostgresNaming) {
  const text = `UPDATE ${t.schedules} SET state = 'active', halted_job_id = NULL, updated_at = now()
         WHERE id = $1 AND state = 'dead_lettered' AND halted_job_id = $2`;
  return async (db: PgExecutor, scheduleId: string, jobId: string): Promise<void> => {
    await db.query(text, [scheduleId, jobId]);
  };
}
