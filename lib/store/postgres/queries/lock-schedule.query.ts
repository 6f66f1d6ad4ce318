import type { ScheduleRow } from '../../schedules/index.js';
import type { PgExecutor } from '../pg-executor.js';
import type { PostgresNaming } from '../postgres-naming.js';
import { fromPgScheduleRow, SCHEDULE_SELECT, type PgScheduleRow } from '../postgres-schedule-row.js';

/** Reads one schedule and locks it until the schedule operation's transaction ends. */
export function lockScheduleQuery(t: PostgresNaming) {
  const text = `SELECT ${SCHEDULE_SELECT} FROM ${t.schedules} WHERE id = $1 FOR UPDATE`;
  return async (db: PgExecutor, id: string): Promise<ScheduleRow | null> => {
    const [row] = await db.query<PgScheduleRow>(text, [id]);
    return row ? fromPgScheduleRow(row) : null;
  };
}
