import type { Database } from 'better-sqlite3';
import type { SqliteNaming } from '../sqlite-naming.js';

/** When the next active schedule is due, in epoch ms; null when none is active. */
export function nextDueScheduleQuery(db: Database, t: SqliteNaming) {
  const nextDue = db.prepare(`SELECT min(next_fire_at) FROM ${t.schedules} WHERE state = 'active'`).pluck();
  return (): number | null => (nextDue.get() as number | null) ?? null;
}
