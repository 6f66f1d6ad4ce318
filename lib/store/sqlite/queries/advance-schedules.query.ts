import type { Database } from 'better-sqlite3';
import type { ScheduleAdvance } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';

/**
 * Writes back a minting pass: one prepared update per schedule, by primary key, inside the
 * pass's transaction. SQLite runs in process, so a statement costs no round trip; only the
 * columns a mint moves are written.
 */
export function advanceSchedulesQuery(db: Database, t: SqliteNaming) {
  const update = db.prepare(
    `UPDATE ${t.schedules} SET next_fire_at = ?, last_fired_for = ?, last_job_id = ?, skipped_ticks = ?, last_skipped_for = ?, last_skip_reason = ?, updated_at = ? WHERE id = ?`,
  );
  return (advances: readonly ScheduleAdvance[]): void => {
    for (const a of advances) update.run(a.nextFireAt, a.lastFiredFor, a.lastJobId, a.skippedTicks, a.lastSkippedFor, a.lastSkipReason, a.updatedAt, a.id);
  };
}
