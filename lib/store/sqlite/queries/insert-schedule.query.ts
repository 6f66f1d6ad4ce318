import type { Database } from 'better-sqlite3';
import type { ScheduleRow } from '../../schedules/index.js';
import type { SqliteNaming } from '../sqlite-naming.js';
import { SCHEDULE_COLUMNS, scheduleParams } from '../sqlite-schedule-row.js';

/** Inserts a schedule; false when one with its id exists already. */
export function insertScheduleQuery(db: Database, t: SqliteNaming) {
  const insert = db.prepare(
    `INSERT INTO ${t.schedules} (${SCHEDULE_COLUMNS.join(', ')}) VALUES (${SCHEDULE_COLUMNS.map((c) => `@${c}`).join(', ')}) ON CONFLICT (id) DO NOTHING`,
  );
  return (row: ScheduleRow): boolean => insert.run(scheduleParams(row)).changes === 1;
}
