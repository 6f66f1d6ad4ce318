import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteScheduleRow, type SqliteScheduleRow } from '../sqlite-schedule-row.js';

/** Up to `limit` active schedules whose next tick is due at `now`, the earliest first. */
export function dueSchedulesQuery(db: Database, t: SqliteNaming) {
  const due = db.prepare(`SELECT * FROM ${t.schedules} WHERE state = 'active' AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?`);
  return (now: number, limit: number): ScheduleRow[] => (due.all(now, limit) as SqliteScheduleRow[]).map(fromSqliteScheduleRow);
}
