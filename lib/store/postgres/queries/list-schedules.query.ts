import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgScheduleRow, SCHEDULE_SELECT, type PgScheduleRow } from '../postgres-schedule-row.js';

/** Every schedule, oldest first. */
export function listSchedulesQuery(t: PostgresNaming) {
  const text = `SELECT ${SCHEDULE_SELECT} FROM ${t.schedules} ORDER BY created_at, id`;
  return async (db: PgExecutor): Promise<ScheduleRow[]> => (await db.query<PgScheduleRow>(text)).map(fromPgScheduleRow);
}
