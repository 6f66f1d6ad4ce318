import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteScheduleRow, type SqliteScheduleRow } from '../sqlite-schedule-row.js';

/** Every schedule, oldest first. */
export function listSchedulesQuery(db: Database, t: SqliteNaming) {
  const list = db.prepare(`SELECT * FROM ${t.schedules} ORDER BY created_at, id`);
  return (): ScheduleRow[] => (list.all() as SqliteScheduleRow[]).map(fromSqliteScheduleRow);
}
