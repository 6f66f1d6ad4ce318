import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** After a replay: the schedule that the replayed job had stopped mints again. */
export function reactivateScheduleQuery(db: Database, t: SqliteNaming) {
  const reactivate = db.prepare(
    `UPDATE ${t.schedules} SET state = 'active', halted_job_id = NULL, updated_at = ? WHERE id = ? AND state = 'dead_lettered' AND halted_job_id = ?`,
  );
  return (scheduleId: string, jobId: string, now: number): void => {
    reactivate.run(now, scheduleId, jobId);
  };
}
