import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { SCHEDULE_COLUMNS, SCHEDULE_PLACEHOLDERS, scheduleValues } from '../postgres-schedule-row.js';

/** Inserts a schedule; false when one with its id exists already. */
export function insertScheduleQuery(t: PostgresNaming) {
  const text = `INSERT INTO ${t.schedules} (${SCHEDULE_COLUMNS}) VALUES (${SCHEDULE_PLACEHOLDERS}) ON CONFLICT (id) DO NOTHING RETURNING id`;
  return async (db: PgExecutor, row: ScheduleRow): Promise<boolean> => (await db.query(text, scheduleValues(row))).length === 1;
}
