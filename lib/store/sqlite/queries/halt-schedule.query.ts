import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Stops the schedule of an occurrence that was just dead-lettered or quarantined. Called inside the
 * same transaction as the outcome write that caused it, so it applies exactly when that write does.
 */
export function haltScheduleQuery(db: Database, t: SqliteNaming) {
  const halt = db.prepare(`
    UPDATE ${t.schedules} SET state = 'dead_lettered', halted_job_id = @job_id, updated_at = @now
    WHERE id = @schedule_id AND state <> 'dead_lettered'`);
  return (row: { state: string; schedule_id: string | null; id: string }, now: number): void => {
    if (row.schedule_id !== null && (row.state === 'dead_lettered' || row.state === 'quarantined')) {
      halt.run({ schedule_id: row.schedule_id, job_id: row.id, now });
    }
  };
}
