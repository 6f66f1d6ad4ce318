import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { fromSqliteScheduleRow, type SqliteScheduleRow } from '../sqlite-schedule-row.js';

/** One schedule by id (one writer at a time, so a schedule operation needs no lock to read it). */
export function getScheduleQuery(db: Database, t: SqliteNaming) {
  const get = db.prepare(`SELECT * FROM ${t.schedules} WHERE id = ?`);
  return (id: string): ScheduleRow | null => {
    const row = get.get(id) as SqliteScheduleRow | undefined;
    return row ? fromSqliteScheduleRow(row) : null;
  };
}
