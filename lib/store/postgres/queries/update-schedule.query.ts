import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { SCHEDULE_COLUMNS, SCHEDULE_PLACEHOLDERS, scheduleValues } from '../postgres-schedule-row.js';

/** Writes a whole schedule back, as the schedule operation decided it. */
export function updateScheduleQuery(t: PostgresNaming) {
  const text = `UPDATE ${t.schedules} SET (${SCHEDULE_COLUMNS}) = (${SCHEDULE_PLACEHOLDERS}) WHERE id = $1`;
  return async (db: PgExecutor, row: ScheduleRow): Promise<void> => {
    await db.query(text, scheduleValues(row));
  };
}
